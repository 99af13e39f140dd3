"""Render OpenAI chat messages (and tools) into prompt token ids, and parse tool calls back.

Models whose chat template mentions `tools` render them natively. Others (SmolLM2 among
them) use the documented *fallback format* (docs/tool-calls.md): the tool schemas go into
the system message with an instruction to answer `<tool_call>{"name": ..., "arguments":
{...}}</tool_call>`; earlier assistant tool calls are written back in that same form and tool
results become `<tool_response>` user turns. Both formats are parsed by `parse_tool_calls`.
`force_tool_call` honours `tool_choice` ("required" or one named function): it appends the
opening of a tool call, as the model's own format writes one, to the generation prompt, so the
reply continues a call. Pure functions: the tokenizer is an argument, nothing is cached here.
"""

from __future__ import annotations

import json
import re
import uuid
from dataclasses import dataclass
from typing import Any, Literal

from agentjet.core.errors import InvalidRequest

__all__ = [
    "TOOL_CALL_OPEN",
    "RenderedPrompt",
    "ToolFormat",
    "force_tool_call",
    "parse_tool_calls",
    "render_prompt",
    "tool_format_for",
]

ToolFormat = Literal["none", "native", "fallback"]
TOOL_CALL_OPEN = "<tool_call>"
_TOOL_CALL_RE = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|$)", re.DOTALL)
_FALLBACK_INSTRUCTIONS = (
    "You can call tools. To call a tool, reply with one block per call, exactly:\n"
    '<tool_call>{"name": "<tool name>", "arguments": {<arguments as JSON>}}</tool_call>\n'
    "Tool results come back inside <tool_response> blocks. Available tools:\n"
)


@dataclass(frozen=True)
class RenderedPrompt:
    text: str
    ids: tuple[int, ...]
    tool_format: ToolFormat
    last_assistant_end: int | None = None  # token offset after the last assistant turn, if clean
    forced_text: str = ""  # the opening of a tool call appended to the prompt (`force_tool_call`), if any


def tool_format_for(tokenizer: Any, tools: list[dict[str, Any]] | None) -> ToolFormat:
    if not tools:
        return "none"
    template = tokenizer.chat_template or ""
    return "native" if "tools" in template else "fallback"


def _content_text(message: dict[str, Any]) -> str:
    content = message.get("content")
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    parts = []
    for part in content:
        if part.get("type") != "text":
            raise InvalidRequest(
                f"content part type {part.get('type')!r} is not supported (text only)", param="messages"
            )
        parts.append(str(part.get("text", "")))
    return "".join(parts)


def _tool_call_block(call: dict[str, Any]) -> str:
    function = call.get("function") or {}
    arguments = function.get("arguments") or "{}"
    try:
        parsed = json.loads(arguments) if isinstance(arguments, str) else arguments
    except json.JSONDecodeError:
        parsed = arguments  # keep what the model wrote; the prompt must show it as it was
    body = json.dumps({"name": function.get("name", ""), "arguments": parsed}, ensure_ascii=False)
    return f"{TOOL_CALL_OPEN}{body}</tool_call>"


def _fallback_messages(messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None) -> list[dict[str, str]]:
    """Rewrite tool-bearing messages into plain role/content turns any template can render."""
    out: list[dict[str, str]] = []
    for message in messages:
        role, text = message["role"], _content_text(message)
        if role == "developer":
            role = "system"
        if role == "assistant" and message.get("tool_calls"):
            blocks = "\n".join(_tool_call_block(c) for c in message["tool_calls"])
            text = f"{text}\n{blocks}" if text else blocks
        elif role == "tool":
            role, text = "user", f"<tool_response>\n{text}\n</tool_response>"
        out.append({"role": role, "content": text})
    if tools:
        schemas = "\n".join(json.dumps(t, ensure_ascii=False) for t in tools)
        preamble = _FALLBACK_INSTRUCTIONS + schemas
        if out and out[0]["role"] == "system":
            out[0] = {"role": "system", "content": f"{out[0]['content']}\n\n{preamble}"}
        else:
            out.insert(0, {"role": "system", "content": preamble})
    return out


def _native_messages(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for message in messages:
        copy = dict(message)
        copy["content"] = _content_text(message)
        out.append(copy)
    return out


def _template_text(tokenizer: Any, messages: list[dict[str, Any]], tools: Any, fmt: ToolFormat, *, gen: bool) -> str:
    try:
        if fmt == "native":
            rendered = tokenizer.apply_chat_template(messages, tools=tools, add_generation_prompt=gen, tokenize=False)
        else:
            rendered = tokenizer.apply_chat_template(messages, add_generation_prompt=gen, tokenize=False)
    except InvalidRequest:
        raise
    except Exception as exc:  # jinja raises TemplateError or anything the template author chose
        raise InvalidRequest(f"the model's chat template rejected these messages: {exc}", param="messages") from exc
    return str(rendered)


def _tokenize(tokenizer: Any, text: str) -> tuple[int, ...]:
    try:
        return tuple(tokenizer(text, add_special_tokens=False)["input_ids"])
    except (TypeError, ValueError) as exc:  # e.g. text the Rust tokenizer cannot take
        raise InvalidRequest(f"the prompt cannot be tokenized: {exc}", param="messages") from exc


def render_prompt(tokenizer: Any, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None) -> RenderedPrompt:
    """Apply the chat template with a generation prompt and tokenize without extra specials.

    Also finds where the last assistant turn ends in the prompt ids (`last_assistant_end`), so
    text-level merging can splice the tokens actually sampled for that turn in its place.
    """
    if not messages:
        raise InvalidRequest("messages must not be empty", param="messages")
    fmt = tool_format_for(tokenizer, tools)
    rendered = _native_messages(messages) if fmt == "native" else _fallback_messages(messages, tools)
    text = _template_text(tokenizer, rendered, tools, fmt, gen=True)
    ids = _tokenize(tokenizer, text)
    return RenderedPrompt(text, ids, fmt, _last_assistant_end(tokenizer, rendered, tools, fmt, text, ids))


def _last_assistant_end(
    tokenizer: Any, rendered: list[dict[str, Any]], tools: Any, fmt: ToolFormat, text: str, ids: tuple[int, ...]
) -> int | None:
    """Token offset right after the last assistant message, if the template renders it as a prefix."""
    last = max((i for i, m in enumerate(rendered) if m["role"] == "assistant"), default=None)
    if last is None:
        return None
    prefix_text = _template_text(tokenizer, rendered[: last + 1], tools, fmt, gen=False)
    if not text.startswith(prefix_text):
        return None  # the template rewrites earlier turns (e.g. drops reasoning): no clean boundary
    prefix_ids = _tokenize(tokenizer, prefix_text)
    return len(prefix_ids) if ids[: len(prefix_ids)] == prefix_ids else None


_NAME_MARK, _ARGUMENT_MARK = "agentjet_tool_name_5e1f", "agentjet_argument_5e1f"


def force_tool_call(
    tokenizer: Any,
    messages: list[dict[str, Any]],
    tools: list[dict[str, Any]],
    prompt: RenderedPrompt,
    name: str | None,
) -> RenderedPrompt:
    """`prompt` with the opening of a tool call appended: any tool's (`name` None) or `name`'s.

    The opening is read off how this model's format renders an assistant tool call after these
    messages (the fallback block or the native template's), up to the function's name, or for a
    named function up to its arguments. So `tool_choice` works the same on every model whose format
    writes the name before the arguments; other templates get a clear 4xx.
    """
    probe_call = {"name": _NAME_MARK, "arguments": json.dumps({_ARGUMENT_MARK: 0})}
    probe_turn = {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": "call_0", "type": "function", "function": probe_call}],
    }
    probe = [*messages, probe_turn]
    fmt = prompt.tool_format
    rendered = _native_messages(probe) if fmt == "native" else _fallback_messages(probe, tools)
    full = _template_text(tokenizer, rendered, tools, fmt, gen=False)
    turn = full[len(prompt.text) :] if full.startswith(prompt.text) else ""
    at_name = turn.find(_NAME_MARK)
    at_arguments = turn.rfind("{", at_name, turn.find(_ARGUMENT_MARK, at_name)) if at_name >= 0 else -1
    if at_arguments > 0 and turn[at_arguments - 1] == '"':  # a template that writes the arguments as a JSON string
        at_arguments -= 1
    if at_name < 0 or at_arguments < 0:
        raise InvalidRequest(
            "tool_choice cannot be honoured with this model's chat template: it does not write a tool call's "
            "name before its arguments; send tool_choice 'auto'",
            param="tool_choice",
        )
    opening = turn[:at_name]
    if name is not None:
        opening += json.dumps(name, ensure_ascii=False)[1:-1] + turn[at_name + len(_NAME_MARK) : at_arguments]
    text = prompt.text + opening  # tokenised whole: the ids are the text's, as for any prompt
    return RenderedPrompt(text, _tokenize(tokenizer, text), fmt, prompt.last_assistant_end, opening)


def parse_tool_calls(text: str) -> tuple[str | None, list[dict[str, Any]]]:
    """Split a completion into (content, OpenAI tool_calls). Unparseable blocks stay content."""
    calls: list[dict[str, Any]] = []
    kept: list[str] = []
    cursor = 0
    for match in _TOOL_CALL_RE.finditer(text):
        call = _parse_call(match.group(1))
        if call is None:
            continue
        kept.append(text[cursor : match.start()])
        cursor = match.end()
        calls.append(call)
    kept.append(text[cursor:])
    content = "".join(kept).strip()
    return (content or None) if calls else text, calls


def _parse_call(body: str) -> dict[str, Any] | None:
    try:
        payload = json.loads(body)
    except json.JSONDecodeError:
        return None
    if not isinstance(payload, dict) or not isinstance(payload.get("name"), str):
        return None
    arguments = payload.get("arguments", payload.get("parameters", {}))
    if not isinstance(arguments, str):
        arguments = json.dumps(arguments, ensure_ascii=False)
    return {
        "id": f"call_{uuid.uuid4().hex[:24]}",
        "type": "function",
        "function": {"name": payload["name"], "arguments": arguments},
    }
