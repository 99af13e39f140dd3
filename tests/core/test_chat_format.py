"""Prompt rendering (native and fallback tool formats) and tool-call parsing."""

from __future__ import annotations

import json
from typing import Any

import pytest

from agentjet.core.chat_format import parse_tool_calls, render_prompt, tool_format_for
from agentjet.core.errors import InvalidRequest

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "add",
            "description": "add numbers",
            "parameters": {"type": "object", "properties": {"a": {"type": "number"}}},
        },
    }
]


def test_plain_chat_uses_the_models_template(tiny_tokenizer: Any) -> None:
    messages = [{"role": "user", "content": "hello"}]
    prompt = render_prompt(tiny_tokenizer, messages, None)
    expected = tiny_tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
    assert prompt.text == expected and prompt.tool_format == "none"
    assert list(prompt.ids) == tiny_tokenizer(expected, add_special_tokens=False)["input_ids"]
    assert prompt.text.endswith("<|im_start|>assistant\n")


def test_fallback_format_puts_tools_in_the_system_message(tiny_tokenizer: Any) -> None:
    assert tool_format_for(tiny_tokenizer, TOOLS) == "fallback"  # SmolLM2's template has no tools
    messages = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "add 1"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "add", "arguments": '{"a": 1}'}}],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "1"},
    ]
    prompt = render_prompt(tiny_tokenizer, messages, TOOLS)
    assert prompt.tool_format == "fallback"
    assert prompt.text.startswith("<|im_start|>system\nBe brief.\n\nYou can call tools.")
    assert json.dumps(TOOLS[0]) in prompt.text
    assert '<tool_call>{"name": "add", "arguments": {"a": 1}}</tool_call>' in prompt.text
    assert "<tool_response>\n1\n</tool_response>" in prompt.text


def test_native_template_is_used_when_it_supports_tools(tiny_tokenizer: Any) -> None:
    class ToolTemplate:
        chat_template = (
            "{% for t in tools %}{{ t.function.name }}{% endfor %}{% for m in messages %}{{ m.content }}{% endfor %}"
        )

        def apply_chat_template(self, messages: Any, tools: Any = None, **_: Any) -> str:
            return "TOOLS:" + ",".join(t["function"]["name"] for t in tools) + "|" + messages[0]["content"]

        def __call__(self, text: str, add_special_tokens: bool) -> dict[str, list[int]]:
            return {"input_ids": [ord(c) for c in text]}

    prompt = render_prompt(ToolTemplate(), [{"role": "user", "content": [{"type": "text", "text": "hi"}]}], TOOLS)
    assert prompt.tool_format == "native" and prompt.text == "TOOLS:add|hi"


def test_bad_messages_are_invalid_requests(tiny_tokenizer: Any) -> None:
    with pytest.raises(InvalidRequest):
        render_prompt(tiny_tokenizer, [], None)
    with pytest.raises(InvalidRequest, match="image_url"):
        render_prompt(tiny_tokenizer, [{"role": "user", "content": [{"type": "image_url"}]}], None)


def test_parse_tool_calls() -> None:
    content, calls = parse_tool_calls('Let me add.\n<tool_call>{"name": "add", "arguments": {"a": 1}}</tool_call>')
    assert content == "Let me add."
    assert [(c["function"]["name"], json.loads(c["function"]["arguments"])) for c in calls] == [("add", {"a": 1})]
    assert calls[0]["id"].startswith("call_") and calls[0]["type"] == "function"
    # two calls, the last one unterminated (the model hit max_tokens right after the JSON)
    _, calls = parse_tool_calls(
        '<tool_call>{"name": "a", "arguments": {}}</tool_call><tool_call>{"name": "b", "arguments": "{}"}'
    )
    assert [c["function"]["name"] for c in calls] == ["a", "b"]
    assert calls[1]["function"]["arguments"] == "{}"


def test_unparseable_tool_calls_stay_content() -> None:
    text = "<tool_call>{not json}</tool_call>"
    assert parse_tool_calls(text) == (text, [])
    assert parse_tool_calls("no tools here") == ("no tools here", [])
    assert parse_tool_calls('<tool_call>{"arguments": {}}</tool_call>')[1] == []


def test_untokenizable_text_is_an_invalid_request(tiny_tokenizer: Any) -> None:
    with pytest.raises(InvalidRequest, match="cannot be tokenized"):
        render_prompt(tiny_tokenizer, [{"role": "user", "content": "bad \udcff"}], None)


def test_last_assistant_end_marks_the_turn_boundary(tiny_tokenizer: Any) -> None:
    history = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "Hello there"}]
    prompt = render_prompt(tiny_tokenizer, [*history, {"role": "user", "content": "more"}], None)
    assert prompt.last_assistant_end is not None
    turn = tiny_tokenizer.decode(prompt.ids[: prompt.last_assistant_end])
    assert turn.endswith("Hello there<|im_end|>\n")
    assert tiny_tokenizer.decode(prompt.ids[prompt.last_assistant_end :]).startswith("<|im_start|>user\nmore")
    assert render_prompt(tiny_tokenizer, history[:1], None).last_assistant_end is None
    with_tools = render_prompt(tiny_tokenizer, [*history, {"role": "tool", "content": "42"}], TOOLS)
    assert with_tools.last_assistant_end is not None
    assert tiny_tokenizer.decode(with_tools.ids[with_tools.last_assistant_end :]).startswith("<|im_start|>user\n<tool_")
