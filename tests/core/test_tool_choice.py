"""`tool_choice`: "required" and a named function open the reply with a tool call, in every format.

The opening comes from the model's own rendering of a tool call (the fallback block, or a native
template's); the server records it as `forced_text`, parses the reply with it, streams no content
and merges the next turn onto the call as onto any other.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import httpx
import openai
import pytest

from agentjet.core.chat_format import force_tool_call, render_prompt
from agentjet.core.episodes.merging import merge_timelines
from agentjet.core.errors import InvalidRequest
from agentjet.core.testing import RunningServer
from tests.core.factories import rendered_call

SERVER_HEADERS = {"Authorization": "Bearer test-server-token-012345"}
WEATHER: Any = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Current weather in a city.",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    },
}
CLOCK: Any = {"type": "function", "function": {"name": "get_time", "parameters": {"type": "object", "properties": {}}}}
ASK: Any = [{"role": "user", "content": "Weather in Paris?"}]

# A native template in Qwen2.5's manner: tools in the system turn, calls as <tool_call> blocks whose
# arguments are written with `tojson` (a string argument comes out quoted)
QWEN_LIKE = (
    "{% if tools %}<|im_start|>system\n# Tools\n{% for t in tools %}{{ t.function.name }}\n{% endfor %}<|im_end|>\n"
    "{% endif %}{% for m in messages %}<|im_start|>{{ m.role }}\n{% if m.content %}{{ m.content }}{% endif %}"
    '{% for c in m.tool_calls or [] %}<tool_call>\n{"name": "{{ c.function.name }}", "arguments": '
    "{{ c.function.arguments | tojson }}}\n</tool_call>{% endfor %}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


@pytest.fixture
def native_tokenizer(tiny_tokenizer: Any) -> Any:
    tokenizer = type(tiny_tokenizer).from_pretrained(tiny_tokenizer.name_or_path)
    tokenizer.chat_template = QWEN_LIKE
    return tokenizer


@pytest.mark.parametrize(
    ("name", "opening"),
    [(None, '<tool_call>{"name": "'), ("get_weather", '<tool_call>{"name": "get_weather", "arguments": ')],
)
def test_the_fallback_format_opens_its_own_tool_call_block(tiny_tokenizer: Any, name: str | None, opening: str) -> None:
    prompt = render_prompt(tiny_tokenizer, ASK, [WEATHER])
    forced = force_tool_call(tiny_tokenizer, ASK, [WEATHER], prompt, name)
    assert forced.forced_text == opening and forced.text == prompt.text + opening
    assert list(forced.ids) == tiny_tokenizer(forced.text, add_special_tokens=False)["input_ids"]
    assert forced.tool_format == "fallback" and forced.last_assistant_end == prompt.last_assistant_end


@pytest.mark.parametrize(
    ("name", "opening"),
    [(None, '<tool_call>\n{"name": "'), ("get_time", '<tool_call>\n{"name": "get_time", "arguments": ')],
)
def test_a_native_template_opens_the_call_as_it_writes_one(
    native_tokenizer: Any, name: str | None, opening: str
) -> None:
    tools = [WEATHER, CLOCK]
    prompt = render_prompt(native_tokenizer, ASK, tools)
    assert prompt.tool_format == "native"
    forced = force_tool_call(native_tokenizer, ASK, tools, prompt, name)
    assert forced.forced_text == opening  # a string-quoted arguments' opening quote is not forced
    assert forced.text.endswith("<|im_start|>assistant\n" + opening)


def test_a_template_that_writes_no_call_by_name_is_a_clear_invalid_request(native_tokenizer: Any) -> None:
    native_tokenizer.chat_template = "{% for m in messages %}{{ m.content }}{% endfor %}{# tools ignored #}"
    prompt = render_prompt(native_tokenizer, ASK, [WEATHER])
    with pytest.raises(InvalidRequest, match="tool_choice cannot be honoured") as caught:
        force_tool_call(native_tokenizer, ASK, [WEATHER], prompt, None)
    assert caught.value.param == "tool_choice"


def test_the_next_turn_merges_onto_a_forced_call(tiny_tokenizer: Any) -> None:
    """Text merging recognises the reply: the forced opening plus what was sampled."""
    prompt = force_tool_call(tiny_tokenizer, ASK, [WEATHER], render_prompt(tiny_tokenizer, ASK, [WEATHER]), None)
    sampled = 'get_weather", "arguments": {"city": "Paris"}}</tool_call>'
    call = {"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}}
    first = replace(
        rendered_call(tiny_tokenizer, 0, ASK, sampled, tools=[WEATHER]),
        prompt_ids=prompt.ids,
        prompt_text=prompt.text,
        forced_text=prompt.forced_text,
        tool_calls=[call],
    )
    history = [*ASK, {"role": "assistant", "content": None, "tool_calls": [call]}]
    second = rendered_call(
        tiny_tokenizer,
        1,
        [*history, {"role": "tool", "tool_call_id": "c1", "content": "sunny"}],
        "Sunny.",
        tools=[WEATHER],
    )
    samples, drifts = merge_timelines([first, second], match="text")
    assert drifts == [] and len(samples) == 1
    assert samples[0].token_ids[: len(prompt.ids)] == prompt.ids  # the opening is context, never trained
    assert sum(samples[0].loss_mask) == len(first.completion_ids) + len(second.completion_ids)
    unforced, _ = merge_timelines([replace(first, forced_text=""), second], match="text")
    assert len(unforced) == 2  # without the opening the reply does not parse as the call the history holds


def _begin(server: RunningServer) -> tuple[str, openai.OpenAI]:
    reply = httpx.post(f"{server.url}/swarm/episodes", json={"task_id": "t"}, headers=SERVER_HEADERS)
    assert reply.status_code == 200, reply.text
    body = reply.json()
    return body["episode_id"], openai.OpenAI(base_url=body["base_url"], api_key=body["api_key"], max_retries=0)


def _calls(server: RunningServer, episode_id: str) -> list[dict[str, Any]]:
    httpx.post(f"{server.url}/swarm/episodes/{episode_id}/end", json={"reward": 1.0}, headers=SERVER_HEADERS)
    record = httpx.get(f"{server.url}/swarm/episodes/{episode_id}", headers=SERVER_HEADERS).json()
    calls: list[dict[str, Any]] = record["calls"]
    return calls


def test_required_and_named_tool_choice_over_http(
    live_server: Callable[..., RunningServer], scripted_backend: Callable[..., Any]
) -> None:
    script = ['get_weather", "arguments": {"city": "Paris"}}</tool_call>', '{"city": "Rome"}}</tool_call>', "Hi"]
    server = live_server(scripted_backend(script))
    episode_id, client = _begin(server)
    tools: Any = [WEATHER, CLOCK]
    required = client.chat.completions.create(model="tiny", messages=ASK, tools=tools, tool_choice="required")
    named = client.chat.completions.create(
        model="tiny",
        messages=ASK,
        tools=tools,
        tool_choice={"type": "function", "function": {"name": "get_weather"}},
    )
    auto = client.chat.completions.create(model="tiny", messages=ASK, tools=tools)
    for reply, city in ((required, "Paris"), (named, "Rome")):
        choice = reply.choices[0]
        assert choice.finish_reason == "tool_calls" and choice.message.content is None
        assert choice.message.tool_calls is not None
        function = choice.message.tool_calls[0].function  # type: ignore[union-attr]
        assert (function.name, json.loads(function.arguments)) == ("get_weather", {"city": city})
    assert auto.choices[0].message.content == "Hi" and auto.choices[0].message.tool_calls is None
    calls = _calls(server, episode_id)
    assert [c["forced_text"] for c in calls] == [
        '<tool_call>{"name": "',
        '<tool_call>{"name": "get_weather", "arguments": ',
        "",
    ]
    for call, sampled in zip(calls, script, strict=True):
        assert call["completion_text"] == sampled and call["prompt_text"].endswith(call["forced_text"])


def test_a_streamed_forced_call_sends_no_content(
    live_server: Callable[..., RunningServer], scripted_backend: Callable[..., Any]
) -> None:
    server = live_server(scripted_backend(['get_time", "arguments": {}}</tool_call>']))
    _, client = _begin(server)
    stream = client.chat.completions.create(
        model="tiny",
        messages=ASK,
        tools=[WEATHER, CLOCK],
        tool_choice="required",
        stream=True,
    )
    chunks = list(stream)
    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == ""
    names = [t.function and t.function.name for c in chunks if c.choices for t in c.choices[0].delta.tool_calls or []]
    assert names == ["get_time"]


@pytest.mark.parametrize(
    ("tools", "choice", "message"),
    [
        (None, "required", "needs tools"),
        ([WEATHER], {"type": "function", "function": {"name": "get_time"}}, "not among the tools"),
        ([WEATHER], {"type": "function"}, "tool_choice must be"),
        ([WEATHER], {"type": "allowed_tools", "allowed_tools": {}}, "tool_choice must be"),
    ],
)
def test_a_tool_choice_that_cannot_be_met_is_a_400(
    live_server: Callable[..., RunningServer],
    scripted_backend: Callable[..., Any],
    tools: Any,
    choice: Any,
    message: str,
) -> None:
    server = live_server(scripted_backend(["unused"]))
    _, client = _begin(server)
    offered: Any = tools or openai.NOT_GIVEN
    with pytest.raises(openai.BadRequestError) as caught:
        client.chat.completions.create(model="tiny", messages=ASK, tools=offered, tool_choice=choice)
    error = caught.value.body
    assert isinstance(error, dict) and message in error["message"] and "\n" not in error["message"]
    assert error.get("param") == "tool_choice"
