"""Render OpenAI chat messages (and tools) into prompt token ids, and parse tool calls back.

Models whose chat template mentions `tools` render them natively. Others (SmolLM2 among
them) use the documented *fallback format* (docs/tool-calls.md): the tool schemas go into
the system message with an instruction to answer `<tool_call>{"name": ..., "arguments":
{...}}</tool_call>`; earlier assistant tool calls are written back in that same form and tool
results become `<tool_response>` user turns. Both formats are parsed by `parse_tool_calls`.
Pure functions: the tokenizer is an argument, nothing is cached here.
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
