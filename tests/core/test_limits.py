"""Bounded inputs over real HTTP: no request can freeze the server, fill its memory or its journal.

Bodies over the limit get 413 before authentication (by Content-Length, or counted when chunked);
prompts that cannot fit are refused before tokenising, and those that must be tokenised are
tokenised off the event loop (`/health` keeps answering); counts of messages, tools and choices,
metadata size and rewards are bounded, each a 4xx naming its field.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from agentjet.core.testing import RunningServer
from tests.conftest import TOKEN
from tests.core.test_http_errors import assert_error

HEADERS = {"Authorization": f"Bearer {TOKEN}"}


def _begin(url: str) -> dict[str, Any]:
    body: dict[str, Any] = httpx.post(f"{url}/swarm/episodes", json={"task_id": "t"}, headers=HEADERS).json()
    return body


def _chat(url: str, key: str, body: dict[str, Any], timeout_s: float = 60) -> httpx.Response:
    return httpx.post(
        f"{url}/v1/chat/completions", json=body, headers={"Authorization": f"Bearer {key}"}, timeout=timeout_s
    )


def _messages(text: str) -> dict[str, Any]:
    return {"model": "tiny", "messages": [{"role": "user", "content": text}], "max_tokens": 4}


@pytest.fixture
def server(live_server: Callable[..., RunningServer], echo_backend: Any) -> RunningServer:
    return live_server(echo_backend, max_request_bytes=1024 * 1024, max_messages=8, max_tools=2, max_n=3,
                       max_metadata_bytes=1024)  # fmt: skip


@pytest.mark.parametrize("path", ["/v1/chat/completions", "/swarm/episodes", "/swarm/episodes/ep_x/end", "/nowhere"])
def test_a_body_over_the_limit_is_refused_before_auth(server: RunningServer, path: str) -> None:
    started = time.monotonic()
    reply = httpx.post(
        f"{server.url}{path}", content=b"x" * (1024 * 1024 + 1), headers={"content-type": "application/json"}
    )
    assert_error(reply, 413, code="request_too_large")
    assert time.monotonic() - started < 5
    assert httpx.get(f"{server.url}/health").json()["state"] == "rolling"


def test_a_chunked_body_is_counted_and_cut_at_the_limit(server: RunningServer) -> None:
    def chunks() -> Iterator[bytes]:
        for _ in range(64):
            yield b" " * 65536  # 4 MiB in all, no Content-Length

    reply = httpx.post(f"{server.url}/swarm/episodes", content=chunks(), headers=HEADERS)
    assert_error(reply, 413, code="request_too_large")
    assert _begin(server.url)["episode_id"]  # the server is fine


def test_a_prompt_that_cannot_fit_is_refused_without_tokenising(server: RunningServer) -> None:
    episode = _begin(server.url)
    started = time.monotonic()
    reply = _chat(server.url, episode["api_key"], _messages("word " * 200_000))  # 1 MB of text, 8k context
    assert_error(reply, 400, code="context_length_exceeded")
    assert "characters" in reply.json()["error"]["message"]
    assert time.monotonic() - started < 2.0


def test_tokenising_a_long_prompt_does_not_stall_the_server(
    live_server: Callable[..., RunningServer], echo_backend: Any
) -> None:
    server = live_server(echo_backend)
    episode = _begin(server.url)
    runtime = server.app.state.runtime
    bound = runtime.engine.backend.max_context * runtime.chat.longest_token_chars  # the pre-check's
    text = "".join(chr(0x4E00 + i % 2000) for i in range(int(bound * 0.95)))  # under it: tokenised, ~1 token/char
    replies: list[httpx.Response] = []
    took: list[float] = []

    def long_call() -> None:
        started = time.monotonic()
        replies.append(_chat(server.url, episode["api_key"], _messages(text)))
        took.append(time.monotonic() - started)

    worker = threading.Thread(target=long_call)
    worker.start()
    latencies = []
    while worker.is_alive():
        started = time.monotonic()
        assert httpx.get(f"{server.url}/health", timeout=10).status_code == 200
        latencies.append(time.monotonic() - started)
        time.sleep(0.01)
    worker.join()
    assert_error(replies[0], 400, code="context_length_exceeded")
    assert "tokens" in replies[0].json()["error"]["message"]
    assert len(latencies) >= 5, (latencies, took)
    # Rendering on the event loop makes one /health wait ~90% of the long call (measured); off it, the
    # slowest /health is ~15% on a quiet machine and under 30% on a loaded one: half separates them.
    assert max(latencies) < 0.5 * took[0], (latencies, took)


@pytest.mark.parametrize(
    ("change", "param"),
    [
        ({"messages": [{"role": "user", "content": "hi"}] * 9}, "messages"),
        ({"tools": [{"type": "function", "function": {"name": f"f{i}"}} for i in range(3)]}, "tools"),
        ({"n": 4}, "n"),
    ],
    ids=["messages", "tools", "n"],
)
def test_counts_in_a_chat_request_are_bounded(server: RunningServer, change: dict[str, Any], param: str) -> None:
    episode = _begin(server.url)
    reply = _chat(server.url, episode["api_key"], {**_messages("hi"), **change})
    error = assert_error(reply, 400, code="invalid_request")
    assert error["param"] == param
    assert _chat(server.url, episode["api_key"], _messages("hi")).status_code == 200


def test_metadata_over_the_limit_is_refused_and_the_episode_stays_open(server: RunningServer) -> None:
    episode = _begin(server.url)
    end = f"{server.url}/swarm/episodes/{episode['episode_id']}/end"
    reply = httpx.post(end, json={"reward": 1.0, "metadata": {"blob": "x" * 2000}}, headers=HEADERS)
    assert assert_error(reply, 400, code="invalid_request")["param"] == "metadata"
    assert httpx.post(end, json={"reward": 1.0, "metadata": {"ok": 1}}, headers=HEADERS).status_code == 200


REWARDS = [b'{"reward": 1e308}', b'{"reward": -1e308}', b'{"reward": 2000000}', b'{"reward": NaN}',
           b'{"reward": Infinity}', b'{"reward": 1e999}']  # fmt: skip


@pytest.mark.parametrize("raw", REWARDS)
def test_rewards_outside_the_range_are_a_422(server: RunningServer, raw: bytes) -> None:
    episode = _begin(server.url)
    end = f"{server.url}/swarm/episodes/{episode['episode_id']}/end"
    reply = httpx.post(end, content=raw, headers={**HEADERS, "content-type": "application/json"})
    assert reply.status_code == 422, reply.text
    assert reply.json()["error"]["code"] in ("invalid_reward", "invalid_request")
    status = httpx.get(f"{server.url}/swarm/episodes/{episode['episode_id']}", headers=HEADERS).json()["status"]
    assert status == "open"
    assert httpx.get(f"{server.url}/swarm/status", headers=HEADERS).status_code == 200


def test_deeply_nested_json_is_a_4xx_not_a_500(server: RunningServer) -> None:
    episode = _begin(server.url)
    nested = b'{"reward": 1, "metadata": ' + b'{"a": ' * 5000 + b"1" + b"}" * 5000 + b"}"
    end = f"{server.url}/swarm/episodes/{episode['episode_id']}/end"
    reply = httpx.post(end, content=nested, headers={**HEADERS, "content-type": "application/json"})
    assert 400 <= reply.status_code < 500, reply.text
    assert httpx.get(f"{server.url}/health").status_code == 200
