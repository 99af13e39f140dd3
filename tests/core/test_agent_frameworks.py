"""Real agent frameworks against a live swarm server: every call they make is tracked token-exactly.

Each test drives one client stack (official `openai` SDK sync/async/streaming/tools/n, LangChain
`ChatOpenAI`, a LangGraph ReAct agent, litellm, raw httpx) with nothing but an episode's
`base_url`/`api_key`, then reads the episode back and checks that every call it made is there,
once, with prompt ids that are the tokenised prompt and completion ids that decode to exactly
what the framework received. That is the promise training depends on: what was trained is what
the agent saw.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # litellm must never reach the network
os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")

from agentjet.core.backends.fakes import ScriptedBackend  # noqa: E402
from agentjet.core.chat_format import parse_tool_calls  # noqa: E402
from agentjet.core.testing import RunningServer  # noqa: E402

SERVER_HEADERS = {"Authorization": "Bearer test-server-token-012345"}  # the token tests/conftest.py starts servers with

WEATHER_TOOL: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Current weather in a city.",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    },
}


# ---- helpers ------------------------------------------------------------------------------
@dataclass(frozen=True)
class Episode:
    """One begun episode: what an agent gets (`base_url`, `api_key`) plus where to read it back."""

    server_url: str
    episode_id: str
    base_url: str
    api_key: str

    def end(self, reward: float = 1.0) -> dict[str, Any]:
        """End with a reward and return the journaled record (what the trainer will read)."""
        reply = httpx.post(
            f"{self.server_url}/swarm/episodes/{self.episode_id}/end", json={"reward": reward}, headers=SERVER_HEADERS
        )
        assert reply.status_code == 200, reply.text
        record = httpx.get(f"{self.server_url}/swarm/episodes/{self.episode_id}", headers=SERVER_HEADERS)
        assert record.status_code == 200, record.text
        body: dict[str, Any] = record.json()
        assert body["status"] == "ended"
        assert body["reward"] == reward
        return body


def begin(server: RunningServer, task_id: str = "t") -> Episode:
    reply = httpx.post(f"{server.url}/swarm/episodes", json={"task_id": task_id}, headers=SERVER_HEADERS)
    assert reply.status_code == 200, reply.text
    body = reply.json()
    assert body["base_url"] == f"{server.url}/v1"
    return Episode(server.url, body["episode_id"], body["base_url"], body["api_key"])


def assert_token_exact(call: dict[str, Any], tokenizer: Any) -> None:
    """The record's ids are the tokenised prompt and decode to the recorded completion text."""
    assert call["prompt_ids"], "a call was recorded without prompt ids"
    assert call["prompt_ids"] == tokenizer(call["prompt_text"], add_special_tokens=False)["input_ids"]
    assert tokenizer.decode(call["completion_ids"], skip_special_tokens=True) == call["completion_text"]
    assert len(call["completion_logprobs"]) == len(call["completion_ids"])
    assert all(lp <= 0.0 for lp in call["completion_logprobs"])


def assert_plain_prompt(call: dict[str, Any], tokenizer: Any) -> None:
    """Without tools the prompt is exactly the model's chat template over the messages as sent."""
    expected = tokenizer.apply_chat_template(call["messages"], add_generation_prompt=True, tokenize=False)
    assert call["prompt_text"] == expected


def sdk(episode: Episode) -> openai.OpenAI:
    return openai.OpenAI(base_url=episode.base_url, api_key=episode.api_key, max_retries=0, timeout=30)


@pytest.fixture
def scripted_server(
    live_server: Callable[..., RunningServer], scripted_backend: Callable[..., ScriptedBackend]
) -> Callable[..., RunningServer]:
    """`scripted_server(script, token_delay_s=0)` -> a live server whose model says what the script says."""

    def start(script: Any, **kwargs: Any) -> RunningServer:
        return live_server(scripted_backend(script, **kwargs))

    return start


# ---- official openai SDK -------------------------------------------------------------------
def test_openai_sync_multi_turn_records_every_call(
    scripted_server: Callable[..., RunningServer], tiny_tokenizer: Any
) -> None:
    answers = ["Paris is the capital of France.", "About two million people live there."]
    episode = begin(scripted_server(answers))
    client = sdk(episode)
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "You are terse."},
        {"role": "user", "content": "Capital of France?"},
    ]
    first = client.chat.completions.create(model="tiny", messages=messages)  # type: ignore[arg-type]
    assert first.choices[0].message.content == answers[0]
    assert first.choices[0].finish_reason == "stop"
    messages += [{"role": "assistant", "content": answers[0]}, {"role": "user", "content": "How many people?"}]
    second = client.chat.completions.create(model="tiny", messages=messages, max_tokens=64)  # type: ignore[arg-type]
    assert second.choices[0].message.content == answers[1]

    calls = episode.end()["calls"]
    assert len(calls) == 2
    assert [c["call_index"] for c in calls] == [0, 1]
    for call, response, answer in zip(calls, (first, second), answers, strict=True):
        assert_token_exact(call, tiny_tokenizer)
        assert_plain_prompt(call, tiny_tokenizer)
        assert call["completion_text"] == answer
        assert response.usage is not None
        assert response.usage.prompt_tokens == len(call["prompt_ids"])
        assert response.usage.completion_tokens == len(call["completion_ids"])
    assert calls[1]["messages"] == messages
    assert calls[1]["sampling"]["max_tokens"] == 64
    # the second prompt extends the first: the earlier answer is in it verbatim
    assert answers[0] in calls[1]["prompt_text"]


async def test_openai_async_concurrent_calls_in_one_episode(
    scripted_server: Callable[..., RunningServer], tiny_tokenizer: Any
) -> None:
    def answer(prompt: str) -> str:
        question = prompt.rsplit("question ", 1)[1].split("<|im_end|>", 1)[0]
        return f"answer {question}"

    episode = begin(scripted_server(answer, token_delay_s=0.002))
    client = openai.AsyncOpenAI(base_url=episode.base_url, api_key=episode.api_key, max_retries=0, timeout=30)

    async def ask(i: int) -> str | None:
        reply = await client.chat.completions.create(
            model="tiny", messages=[{"role": "user", "content": f"question {i}"}]
        )
        return reply.choices[0].message.content

    contents = await asyncio.gather(*(ask(i) for i in range(6)))
    await client.close()
    assert contents == [f"answer {i}" for i in range(6)]

    calls = episode.end()["calls"]
    assert len(calls) == 6
    assert sorted(c["call_index"] for c in calls) == list(range(6))
    assert sorted(c["completion_text"] for c in calls) == sorted(f"answer {i}" for i in range(6))
    for call in calls:
        assert_token_exact(call, tiny_tokenizer)
        assert call["completion_text"] == "answer " + call["messages"][0]["content"].split()[-1]


def test_openai_streaming_arrives_incrementally(
    scripted_server: Callable[..., RunningServer], tiny_tokenizer: Any
) -> None:
    text = "One two three four five six seven eight nine ten eleven twelve thirteen fourteen."
    delay = 0.02
    episode = begin(scripted_server([text], token_delay_s=delay))
    client = sdk(episode)
    started = time.monotonic()
    stream = client.chat.completions.create(
        model="tiny",
        messages=[{"role": "user", "content": "Count."}],
        stream=True,
        stream_options={"include_usage": True},
    )
    arrivals: list[float] = []
    pieces: list[str] = []
    finish: list[str] = []
    usage = None
    for chunk in stream:
        if chunk.usage is not None:
            usage = chunk.usage
        for choice in chunk.choices:
            if choice.delta.content:
                arrivals.append(time.monotonic() - started)
                pieces.append(choice.delta.content)
            if choice.finish_reason:
                finish.append(choice.finish_reason)
    ended = time.monotonic() - started

    n_tokens = len(tiny_tokenizer(text, add_special_tokens=False)["input_ids"])
    assert "".join(pieces) == text
    assert len(pieces) >= n_tokens // 2, f"only {len(pieces)} content chunks for {n_tokens} tokens: buffered?"
    # the first token must reach the client long before the last one is even sampled
    assert arrivals[0] < ended - (n_tokens // 2) * delay, (arrivals[0], ended)
    assert finish == ["stop"]

    calls = episode.end()["calls"]
    assert len(calls) == 1
    assert_token_exact(calls[0], tiny_tokenizer)
    assert calls[0]["completion_text"] == text
    assert calls[0]["sampling"]["stream"] is True
    assert usage is not None and usage.completion_tokens == len(calls[0]["completion_ids"]) == n_tokens


def test_openai_tool_call_round_trip(scripted_server: Callable[..., RunningServer], tiny_tokenizer: Any) -> None:
    call_text = '<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>'
    final = "It is sunny in Paris."
    episode = begin(scripted_server([call_text, final]))
    client = sdk(episode)
    messages: list[dict[str, Any]] = [{"role": "user", "content": "Weather in Paris?"}]

    first = client.chat.completions.create(model="tiny", messages=messages, tools=[WEATHER_TOOL])  # type: ignore[arg-type, list-item]
    choice = first.choices[0]
    assert choice.finish_reason == "tool_calls"
    assert choice.message.content is None
    assert choice.message.tool_calls is not None and len(choice.message.tool_calls) == 1
    tool_call = choice.message.tool_calls[0]
    assert tool_call.function.name == "get_weather"  # type: ignore[union-attr]
    assert json.loads(tool_call.function.arguments) == {"city": "Paris"}  # type: ignore[union-attr]
    assert tool_call.id.startswith("call_")

    messages.append(choice.message.model_dump(exclude_none=True))
    messages.append({"role": "tool", "tool_call_id": tool_call.id, "content": "sunny, 24 C"})
    second = client.chat.completions.create(model="tiny", messages=messages, tools=[WEATHER_TOOL])  # type: ignore[arg-type, list-item]
    assert second.choices[0].message.content == final
    assert second.choices[0].message.tool_calls is None
    assert second.choices[0].finish_reason == "stop"

    calls = episode.end()["calls"]
    assert len(calls) == 2
    for call in calls:
        assert_token_exact(call, tiny_tokenizer)
        assert call["tools"] == [WEATHER_TOOL]
        assert call["tool_format"] == "fallback"
        assert "get_weather" in call["prompt_text"]  # the schema reached the model
    assert calls[0]["completion_text"] == call_text
    assert calls[0]["tool_calls"] == [tool_call.model_dump(exclude_none=True)]
    assert [m["role"] for m in calls[1]["messages"]] == ["user", "assistant", "tool"]
    assert "<tool_response>\nsunny, 24 C\n</tool_response>" in calls[1]["prompt_text"]
    # the earlier call is written back into the prompt in the format the model emitted it
    between = calls[1]["prompt_text"].split("Weather in Paris?", 1)[1].split("<tool_response>\nsunny", 1)[0]
    _, replayed = parse_tool_calls(between)
    assert [(c["function"]["name"], json.loads(c["function"]["arguments"])) for c in replayed] == [
        ("get_weather", {"city": "Paris"})
    ]
    assert calls[1]["completion_text"] == final


def test_a_tools_strict_flag_is_not_rendered(scripted_server: Callable[..., RunningServer]) -> None:
    """`strict` asks the API for schema-constrained arguments; the model never reads it, so a client
    that sends `strict: false` (AutoGen does) gets the prompt the openai SDK's request gets."""
    episode = begin(scripted_server(["ok"]))
    client = sdk(episode)
    strict = {"type": "function", "function": {**WEATHER_TOOL["function"], "strict": False}}
    for tool in (WEATHER_TOOL, strict):
        client.chat.completions.create(model="tiny", messages=[{"role": "user", "content": "hi"}], tools=[tool])  # type: ignore[arg-type, list-item]
    bad = {"type": "function", "function": {**WEATHER_TOOL["function"], "strict": "sometimes"}}
    reply = httpx.post(
        f"{episode.base_url}/chat/completions",
        json={"model": "tiny", "messages": [{"role": "user", "content": "hi"}], "tools": [bad]},
        headers={"Authorization": f"Bearer {episode.api_key}"},
    )
    assert reply.status_code == 422 and reply.json()["error"]["message"]
    plain, flagged = episode.end()["calls"]
    assert flagged["prompt_ids"] == plain["prompt_ids"]
    assert "strict" not in flagged["prompt_text"] and flagged["tools"] == [WEATHER_TOOL]


def test_openai_streamed_tool_call(scripted_server: Callable[..., RunningServer], tiny_tokenizer: Any) -> None:
    text = 'Let me look. <tool_call>{"name": "get_weather", "arguments": {"city": "Oslo"}}</tool_call>'
    episode = begin(scripted_server([text], token_delay_s=0.001))
    stream = sdk(episode).chat.completions.create(
        model="tiny",
        messages=[{"role": "user", "content": "Oslo?"}],
        tools=[WEATHER_TOOL],
        stream=True,  # type: ignore[list-item]
    )
    content: list[str] = []
    names: list[str] = []
    arguments: list[str] = []
    finish: list[str] = []
    for chunk in stream:
        for choice in chunk.choices:
            content.append(choice.delta.content or "")
            for delta in choice.delta.tool_calls or []:
                if delta.function and delta.function.name:
                    names.append(delta.function.name)
                if delta.function and delta.function.arguments:
                    arguments.append(delta.function.arguments)
            if choice.finish_reason:
                finish.append(choice.finish_reason)
    assert "".join(content).strip() == "Let me look."
    assert "<tool_call>" not in "".join(content)  # the raw block is never streamed as text
    assert names == ["get_weather"]
    assert json.loads("".join(arguments)) == {"city": "Oslo"}
    assert finish == ["tool_calls"]

    calls = episode.end()["calls"]
    assert len(calls) == 1
    assert_token_exact(calls[0], tiny_tokenizer)
    assert calls[0]["completion_text"] == text


def test_openai_n_choices_make_n_records(scripted_server: Callable[..., RunningServer], tiny_tokenizer: Any) -> None:
    texts = ["alpha answer", "beta answer", "gamma answer"]
    episode = begin(scripted_server(texts))
    reply = sdk(episode).chat.completions.create(
        model="tiny", messages=[{"role": "user", "content": "Pick one."}], n=3, seed=7
    )
    assert [c.index for c in reply.choices] == [0, 1, 2]
    contents = {c.index: c.message.content for c in reply.choices}
    assert sorted(contents.values()) == sorted(texts)  # type: ignore[type-var]

    calls = episode.end()["calls"]
    assert len(calls) == 3
    assert [c["choice_index"] for c in calls] == [0, 1, 2]
    assert {c["call_index"] for c in calls} == {0}
    assert len({tuple(c["prompt_ids"]) for c in calls}) == 1  # one prompt, three samples
    for call in calls:
        assert_token_exact(call, tiny_tokenizer)
        assert call["completion_text"] == contents[call["choice_index"]]
        assert call["sampling"]["n"] == 3
    assert reply.usage is not None
    assert reply.usage.completion_tokens == sum(len(c["completion_ids"]) for c in calls)


# ---- LangChain / LangGraph -------------------------------------------------------------------
def _chat_openai(episode: Episode) -> Any:
    from langchain_openai import ChatOpenAI

    return ChatOpenAI(model="tiny", base_url=episode.base_url, api_key=episode.api_key, max_retries=0, timeout=30)


def test_langchain_chat_openai_invoke_and_bind_tools(
    scripted_server: Callable[..., RunningServer], tiny_tokenizer: Any
) -> None:
    from langchain_core.tools import tool

    @tool
    def get_weather(city: str) -> str:
        """Current weather in a city."""
        return f"sunny in {city}"

    tool_text = '<tool_call>{"name": "get_weather", "arguments": {"city": "Rome"}}</tool_call>'
    episode = begin(scripted_server(["Hello from the model.", tool_text]))
    llm = _chat_openai(episode)

    plain = llm.invoke("Say hello.")
    assert plain.content == "Hello from the model."
    with_tools = llm.bind_tools([get_weather]).invoke("Weather in Rome?")
    assert [(c["name"], c["args"]) for c in with_tools.tool_calls] == [("get_weather", {"city": "Rome"})]

    calls = episode.end()["calls"]
    assert len(calls) == 2
    for call in calls:
        assert_token_exact(call, tiny_tokenizer)
    assert_plain_prompt(calls[0], tiny_tokenizer)
    assert calls[0]["completion_text"] == "Hello from the model."
    assert calls[1]["tools"] is not None and calls[1]["tools"][0]["function"]["name"] == "get_weather"
    assert calls[1]["tool_calls"][0]["function"]["name"] == "get_weather"


def test_langgraph_react_agent_calls_python_tool(
    scripted_server: Callable[..., RunningServer], tiny_tokenizer: Any
) -> None:
    from langchain_core.tools import tool
    from langgraph.prebuilt import create_react_agent

    invocations: list[tuple[int, int]] = []

    @tool
    def multiply(a: int, b: int) -> int:
        """Multiply two integers."""
        invocations.append((a, b))
        return a * b

    def model(prompt: str) -> str:
        if "<tool_response>\n" not in prompt:  # the fallback instructions mention the tag bare
            return '<tool_call>{"name": "multiply", "arguments": {"a": 6, "b": 7}}</tool_call>'
        result = prompt.rsplit("<tool_response>\n", 1)[1].split("\n</tool_response>", 1)[0]
        return f"The answer is {result}."

    episode = begin(scripted_server(model))
    agent = create_react_agent(_chat_openai(episode), [multiply])
    state = agent.invoke({"messages": [("user", "What is 6 times 7?")]})

    assert invocations == [(6, 7)]
    assert state["messages"][-1].content == "The answer is 42."
    calls = episode.end()["calls"]
    assert len(calls) == 2  # one model call per agent step: act, then answer
    for call in calls:
        assert_token_exact(call, tiny_tokenizer)
    assert calls[0]["tool_calls"][0]["function"]["name"] == "multiply"
    assert [m["role"] for m in calls[1]["messages"]] == ["user", "assistant", "tool"]
    assert calls[1]["messages"][2]["content"] == "42"
    assert calls[1]["completion_text"] == "The answer is 42."


# ---- litellm / raw httpx ---------------------------------------------------------------------
def test_litellm_completion_and_stream(scripted_server: Callable[..., RunningServer], tiny_tokenizer: Any) -> None:
    import litellm

    answers = ["Litellm says hi.", "Streamed through litellm."]
    episode = begin(scripted_server(answers, token_delay_s=0.001))
    common: dict[str, Any] = {"model": "openai/tiny", "api_base": episode.base_url, "api_key": episode.api_key}

    reply = litellm.completion(messages=[{"role": "user", "content": "hi"}], **common)
    assert reply.choices[0].message.content == answers[0]
    pieces = [
        chunk.choices[0].delta.content or ""
        for chunk in litellm.completion(messages=[{"role": "user", "content": "stream"}], stream=True, **common)
        if chunk.choices
    ]
    assert "".join(pieces) == answers[1]

    calls = episode.end()["calls"]
    assert len(calls) == 2
    assert [c["completion_text"] for c in calls] == answers
    for call in calls:
        assert_token_exact(call, tiny_tokenizer)
        assert_plain_prompt(call, tiny_tokenizer)


def test_raw_httpx_with_logprobs(scripted_server: Callable[..., RunningServer], tiny_tokenizer: Any) -> None:
    answer = "Raw HTTP works fine."
    episode = begin(scripted_server([answer]))
    reply = httpx.post(
        f"{episode.base_url}/chat/completions",
        json={"model": "tiny", "messages": [{"role": "user", "content": "ping"}], "logprobs": True, "temperature": 0.5},
        headers={"Authorization": f"Bearer {episode.api_key}"},
    )
    assert reply.status_code == 200, reply.text
    body = reply.json()
    assert body["object"] == "chat.completion"
    assert body["choices"][0]["message"] == {"role": "assistant", "content": answer}

    calls = episode.end()["calls"]
    assert len(calls) == 1
    call = calls[0]
    assert_token_exact(call, tiny_tokenizer)
    assert_plain_prompt(call, tiny_tokenizer)
    entries = body["choices"][0]["logprobs"]["content"]
    assert [e["token"] for e in entries] == tiny_tokenizer.convert_ids_to_tokens(call["completion_ids"])
    assert [e["logprob"] for e in entries] == call["completion_logprobs"]
    assert call["sampling"]["temperature"] == 0.5
    assert body["usage"]["completion_tokens"] == len(call["completion_ids"])


def test_a_streamed_choice_carries_its_logprobs_in_its_closing_chunk(
    scripted_server: Callable[..., RunningServer], tiny_tokenizer: Any
) -> None:
    answer = "Streamed with logprobs."
    episode = begin(scripted_server([answer]))
    request = {"model": "tiny", "messages": [{"role": "user", "content": "ping"}], "stream": True}
    headers = {"Authorization": f"Bearer {episode.api_key}"}
    chunks = {}
    for logprobs in (True, False):
        with httpx.stream(
            "POST", f"{episode.base_url}/chat/completions", json={**request, "logprobs": logprobs}, headers=headers
        ) as reply:
            assert reply.status_code == 200
            lines = [line.removeprefix("data: ") for line in reply.iter_lines() if line.startswith("data: ")]
        chunks[logprobs] = [json.loads(line) for line in lines if line != "[DONE]"]
    calls = episode.end()["calls"]
    closing = [c["choices"][0] for c in chunks[True] if c["choices"] and c["choices"][0]["finish_reason"]]
    assert len(closing) == 1
    entries = closing[0]["logprobs"]["content"]
    assert [e["token"] for e in entries] == tiny_tokenizer.convert_ids_to_tokens(calls[0]["completion_ids"])
    assert [e["logprob"] for e in entries] == calls[0]["completion_logprobs"]
    assert "".join(c["choices"][0]["delta"].get("content", "") for c in chunks[True] if c["choices"]) == answer
    assert all("logprobs" not in c["choices"][0] for c in chunks[False] if c["choices"])


# ---- the real model ---------------------------------------------------------------------------
@pytest.fixture(params=["tiny", pytest.param("smollm2-135m", marks=pytest.mark.slow)])
def real_server(
    request: pytest.FixtureRequest, live_server: Callable[..., RunningServer]
) -> Iterator[tuple[RunningServer, Any]]:
    """A live server on the real TransformersBackend (imported here: it may land after this file)."""
    from agentjet.core.backends.transformers_backend import TransformersBackend
    from agentjet.core.models import resolve_model

    path: Path = resolve_model(request.param)
    backend = TransformersBackend(path, name=request.param, max_batch_size=4)
    server = live_server(backend, model=request.param)
    yield server, backend.tokenizer


def test_openai_sdk_on_real_backend(real_server: tuple[RunningServer, Any]) -> None:
    server, tokenizer = real_server
    episode = begin(server)
    client = sdk(episode)
    messages = [{"role": "user", "content": "Write one short sentence about the sea."}]

    reply = client.chat.completions.create(model="m", messages=messages, max_tokens=24, seed=3)  # type: ignore[arg-type]
    content = reply.choices[0].message.content
    assert reply.usage is not None and 1 <= reply.usage.completion_tokens <= 24

    stream = client.chat.completions.create(
        model="m",
        messages=messages,
        max_tokens=24,
        temperature=1.0,
        stream=True,  # type: ignore[arg-type]
    )
    pieces = [c.choices[0].delta.content or "" for c in stream if c.choices]
    streamed = "".join(pieces)

    calls = episode.end()["calls"]
    assert len(calls) == 2
    for call in calls:
        assert_token_exact(call, tokenizer)
        assert_plain_prompt(call, tokenizer)
        assert call["finish_reason"] in ("stop", "length")
        assert 1 <= len(call["completion_ids"]) <= 24
    assert calls[0]["completion_text"] == content
    assert calls[1]["completion_text"] == streamed
    assert reply.usage.completion_tokens == len(calls[0]["completion_ids"])
    assert calls[0]["prompt_ids"] == calls[1]["prompt_ids"]


def test_every_framework_on_real_backend(real_server: tuple[RunningServer, Any]) -> None:
    """openai async + n, LangChain, a LangGraph agent, litellm and httpx against real sampling."""
    import litellm
    from langchain_core.tools import tool
    from langgraph.prebuilt import create_react_agent

    @tool
    def shout(text: str) -> str:
        """Upper-case a text."""
        return text.upper()

    from langchain_openai import ChatOpenAI

    server, tokenizer = real_server
    episode = begin(server)
    question = [{"role": "user", "content": "Name one colour."}]
    chat_model = ChatOpenAI(
        model="m", base_url=episode.base_url, api_key=episode.api_key, max_tokens=8, max_retries=0, timeout=120
    )

    async def async_sdk() -> list[str]:
        client = openai.AsyncOpenAI(base_url=episode.base_url, api_key=episode.api_key, max_retries=0, timeout=60)
        reply = await client.chat.completions.create(model="m", messages=question, max_tokens=8, n=2, seed=1)  # type: ignore[arg-type]
        return [c.message.content or "" for c in reply.choices]

    made = 0
    assert len(asyncio.run(async_sdk())) == 2
    made += 1
    assert isinstance(chat_model.invoke("Name one colour.").content, str)
    made += 1
    state = create_react_agent(chat_model, [shout]).invoke({"messages": [("user", "Shout 'hi'.")]})
    made += sum(1 for m in state["messages"] if m.type == "ai")
    common: dict[str, Any] = {"model": "openai/m", "api_base": episode.base_url, "api_key": episode.api_key}
    assert isinstance(litellm.completion(messages=question, max_tokens=8, **common).choices[0].message.content, str)
    made += 1
    raw = httpx.post(
        f"{episode.base_url}/chat/completions",
        headers={"Authorization": f"Bearer {episode.api_key}"},
        json={"model": "m", "messages": question, "max_tokens": 8, "logprobs": True},
        timeout=60,
    )
    assert raw.status_code == 200
    made += 1

    calls = episode.end()["calls"]
    assert len({c["call_index"] for c in calls}) == made
    assert len(calls) == made + 1  # the n=2 call left two records
    for call in calls:
        assert_token_exact(call, tokenizer)
    logprobs = [t["logprob"] for t in raw.json()["choices"][0]["logprobs"]["content"]]
    assert logprobs == pytest.approx(calls[-1]["completion_logprobs"])
