"""Every way a client can get a request wrong gets the right 4xx and an OpenAI-style error body.

Keys: forged, tampered (payload or signature), or naming an episode that ended, aborted or was
reclaimed -> 401. Server token: missing or wrong on any /swarm route -> 401 (and nothing
happens). Bodies: not JSON -> 400, JSON that breaks the schema -> 422, a prompt that cannot fit
-> 400 context_length_exceeded. Episodes: unknown -> 404, closed twice -> 409. All over real
HTTP on loopback, because the error handlers, the auth headers and the status codes are what
agents actually see.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from agentjet.core.backends.fakes import EchoBackend
from agentjet.core.config import ServerSettings
from agentjet.core.server.app import create_app
from agentjet.core.testing import RunningServer, serve_in_thread

SERVER_HEADERS = {"Authorization": "Bearer test-server-token-012345"}  # the token tests/conftest.py starts servers with
CHAT_BODY: dict[str, Any] = {"model": "tiny", "messages": [{"role": "user", "content": "hello"}], "max_tokens": 8}


# ---- helpers ------------------------------------------------------------------------------
def assert_error(
    reply: httpx.Response, status: int, *, code: str | None = None, type_: str | None = None
) -> dict[str, Any]:
    """The reply has this status and an OpenAI error body `{"error": {"message", "type", "code"}}`."""
    assert reply.status_code == status, (
        f"{reply.request.method} {reply.request.url.path}: {reply.status_code} {reply.text}"
    )
    assert reply.headers["content-type"].startswith("application/json")
    body = reply.json()
    assert set(body) == {"error"}, body
    error = body["error"]
    assert {"message", "type", "code"} <= set(error), error
    assert isinstance(error["message"], str) and error["message"], error
    assert isinstance(error["type"], str) and error["type"], error
    assert error["code"] is None or isinstance(error["code"], str), error
    if code is not None:
        assert error["code"] == code, error
    if type_ is not None:
        assert error["type"] == type_, error
    if status == 401:
        assert reply.headers.get("www-authenticate") == "Bearer"
    return error


def begin(url: str) -> dict[str, Any]:
    reply = httpx.post(f"{url}/swarm/episodes", json={"task_id": "t"}, headers=SERVER_HEADERS)
    assert reply.status_code == 200, reply.text
    body: dict[str, Any] = reply.json()
    return body


def chat(url: str, key: str | None, body: dict[str, Any] | None = None) -> httpx.Response:
    headers = {"Authorization": f"Bearer {key}".strip()} if key is not None else {}  # h11 refuses trailing spaces
    return httpx.post(f"{url}/v1/chat/completions", json=body or CHAT_BODY, headers=headers)


def episode_status(url: str, episode_id: str) -> str:
    reply = httpx.get(f"{url}/swarm/episodes/{episode_id}", headers=SERVER_HEADERS)
    assert reply.status_code == 200, reply.text
    status: str = reply.json()["status"]
    return status


def flip(text: str, index: int) -> str:
    """`text` with the base64url character at `index` replaced by a different one."""
    replacement = "A" if text[index] != "A" else "B"
    return text[:index] + replacement + text[index + 1 :]


@pytest.fixture(scope="module")
def server(tiny_tokenizer: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    """One echo server for the module: these tests only open episodes, so they can share it."""
    settings = ServerSettings(
        model="tiny", state_dir=tmp_path_factory.mktemp("state"), token="test-server-token-012345"
    )
    with serve_in_thread(create_app(settings, backend=EchoBackend(tiny_tokenizer))) as running:
        deadline = time.monotonic() + 60
        while httpx.get(f"{running.url}/health").json()["state"] != "rolling":
            assert time.monotonic() < deadline, "echo server never reached rolling"
            time.sleep(0.01)
        yield running


def in_flight(url: str) -> int:
    count: int = httpx.get(f"{url}/swarm/status", headers=SERVER_HEADERS).json()["episodes"]["in_flight"]
    return count


# ---- episode keys ---------------------------------------------------------------------------
def test_valid_key_works(server: RunningServer) -> None:
    """The control for every 401 below: the same request with the real key succeeds."""
    reply = chat(server.url, begin(server.url)["api_key"])
    assert reply.status_code == 200, reply.text
    assert reply.json()["choices"][0]["message"]["role"] == "assistant"


@pytest.mark.parametrize(
    "key",
    [
        None,
        "",
        "sk-not-an-agentjet-key",
        "ajk_",
        "ajk_.",
        "ajk_eyJlIjoiZXBfeCIsImEiOm51bGwsIngiOjk5OTk5OTk5OTl9.c2lnbmF0dXJl",  # well-formed, unsigned
        "ajk_a.b.c",
        "ajk_!!!.???",
        "test-server-token-012345",  # the server token is not an episode key
    ],
)
def test_forged_or_missing_key_is_401(server: RunningServer, key: str | None) -> None:
    begin(server.url)  # an open episode exists: a forged key must not reach it
    assert_error(chat(server.url, key), 401, code="invalid_api_key", type_="authentication_error")


@pytest.mark.parametrize("part", ["payload", "signature"])
@pytest.mark.parametrize("where", ["start", "middle", "end"])
def test_tampered_key_is_401(server: RunningServer, part: str, where: str) -> None:
    key = begin(server.url)["api_key"]
    prefix, rest = key[:4], key[4:]
    payload, signature = rest.split(".")
    target = payload if part == "payload" else signature
    index = {"start": 0, "middle": len(target) // 2, "end": len(target) - 2}[where]
    tampered = flip(target, index)
    forged = prefix + (f"{tampered}.{signature}" if part == "payload" else f"{payload}.{tampered}")
    assert forged != key
    assert_error(chat(server.url, forged), 401, code="invalid_api_key")
    assert chat(server.url, key).status_code == 200  # the genuine key still works


def test_key_of_another_server_is_401(
    live_server: Callable[..., RunningServer], echo_backend: EchoBackend, tmp_path: Any
) -> None:
    """Keys are signed with a per-state-dir secret: a key minted elsewhere is forged here."""
    first = live_server(echo_backend)
    second = live_server(echo_backend, state_dir=tmp_path / "other-state")
    key = begin(first.url)["api_key"]
    assert chat(first.url, key).status_code == 200
    assert_error(chat(second.url, key), 401, code="invalid_api_key")


def test_ended_key_is_401(server: RunningServer) -> None:
    episode = begin(server.url)
    assert chat(server.url, episode["api_key"]).status_code == 200
    ended = httpx.post(
        f"{server.url}/swarm/episodes/{episode['episode_id']}/end", json={"reward": 1.0}, headers=SERVER_HEADERS
    )
    assert ended.status_code == 200, ended.text
    error = assert_error(chat(server.url, episode["api_key"]), 401, code="invalid_api_key")
    assert "ended" in error["message"]
    assert (
        len(httpx.get(f"{server.url}/swarm/episodes/{episode['episode_id']}", headers=SERVER_HEADERS).json()["calls"])
        == 1
    )


def test_aborted_key_is_401(server: RunningServer) -> None:
    episode = begin(server.url)
    aborted = httpx.post(f"{server.url}/swarm/episodes/{episode['episode_id']}/abort", headers=SERVER_HEADERS)
    assert aborted.status_code == 200, aborted.text
    assert aborted.json()["status"] == "aborted"
    error = assert_error(chat(server.url, episode["api_key"]), 401, code="invalid_api_key")
    assert "aborted" in error["message"]


def test_reclaimed_key_is_401(live_server: Callable[..., RunningServer], echo_backend: EchoBackend) -> None:
    server = live_server(echo_backend, idle_timeout_s=0.2, janitor_interval_s=0.05)
    episode = begin(server.url)
    deadline = time.monotonic() + 10.0
    while episode_status(server.url, episode["episode_id"]) != "reclaimed":
        assert time.monotonic() < deadline, "the janitor never reclaimed an idle episode"
        time.sleep(0.02)
    error = assert_error(chat(server.url, episode["api_key"]), 401, code="invalid_api_key")
    assert "reclaimed" in error["message"]
    late_end = httpx.post(
        f"{server.url}/swarm/episodes/{episode['episode_id']}/end", json={"reward": 1.0}, headers=SERVER_HEADERS
    )
    assert_error(late_end, 409, code="episode_reclaimed")


# ---- server token ---------------------------------------------------------------------------
def _swarm_routes(server: RunningServer, episode_id: str) -> list[tuple[str, str]]:
    """Every (method, path) under /swarm, read from the app's own schema so new routes are covered."""
    assert httpx.get(f"{server.url}/openapi.json").status_code == 404  # off by default: no schema for strangers
    spec = server.app.openapi()
    routes = [
        (method.upper(), path.replace("{episode_id}", episode_id))
        for path, operations in spec["paths"].items()
        if path.startswith("/swarm")
        for method in operations
    ]
    assert len(routes) >= 9, routes  # begin, end, abort, get, status, get/put config, start, stop
    return routes


@pytest.mark.parametrize(
    "headers",
    [
        {},
        {"Authorization": "Bearer wrong-token"},
        {"Authorization": "Bearer"},
        {"Authorization": "test-server-token-012345"},  # no scheme
        {"Authorization": "Basic test-server-token-012345"},
        {"Authorization": "Bearer test-server-token-012345-and-more"},
        {"Authorization": "Bearer TEST-SERVER-TOKEN"},
    ],
    ids=["missing", "wrong", "empty", "no-scheme", "basic", "longer", "case"],
)
def test_every_swarm_route_needs_the_server_token(server: RunningServer, headers: dict[str, str]) -> None:
    episode = begin(server.url)
    before = in_flight(server.url)
    bodies: dict[str, Any] = {"/end": {"reward": 1.0}, "/swarm/episodes": {"task_id": "t"}, "/swarm/config": {}}
    for method, path in _swarm_routes(server, episode["episode_id"]):
        body = next((b for suffix, b in bodies.items() if path.endswith(suffix)), None)
        reply = httpx.request(method, f"{server.url}{path}", json=body, headers=headers)
        assert_error(reply, 401, code="invalid_token", type_="authentication_error")
    # nothing happened: the episode is still open and the engine still rolls
    assert episode_status(server.url, episode["episode_id"]) == "open"
    assert in_flight(server.url) == before  # the unauthorised begin opened nothing
    assert httpx.get(f"{server.url}/health").json()["state"] == "rolling"
    assert chat(server.url, episode["api_key"]).status_code == 200


def test_episode_key_is_not_a_server_token(server: RunningServer) -> None:
    key = begin(server.url)["api_key"]
    reply = httpx.post(
        f"{server.url}/swarm/episodes", json={"task_id": "t"}, headers={"Authorization": f"Bearer {key}"}
    )
    assert_error(reply, 401, code="invalid_token")


# ---- malformed bodies ------------------------------------------------------------------------
@pytest.mark.parametrize("raw", [b"{", b"not json", b'{"model": "m", "messages": [}', b"\xff\xfe", b""])
def test_malformed_json_is_400(server: RunningServer, raw: bytes) -> None:
    episode = begin(server.url)
    json_header = {"Content-Type": "application/json"}
    targets = [
        ("POST", "/v1/chat/completions", {"Authorization": f"Bearer {episode['api_key']}"}),
        ("POST", "/swarm/episodes", SERVER_HEADERS),
        ("POST", f"/swarm/episodes/{episode['episode_id']}/end", SERVER_HEADERS),
        ("PUT", "/swarm/config", SERVER_HEADERS),
    ]
    for method, path, auth in targets:
        reply = httpx.request(method, f"{server.url}{path}", content=raw, headers={**auth, **json_header})
        if raw == b"":
            assert_error(reply, 422, type_="invalid_request_error")  # no body at all: a missing field
        else:
            assert_error(reply, 400, code="invalid_json", type_="invalid_request_error")
    assert episode_status(server.url, episode["episode_id"]) == "open"


@pytest.mark.parametrize(
    ("patch", "param"),
    [
        ({"n": 0}, "n"),
        ({"n": 17}, "n"),
        ({"n": "two"}, "n"),
        ({"temperature": 5}, "temperature"),
        ({"temperature": -0.1}, "temperature"),
        ({"top_p": 0}, "top_p"),
        ({"max_tokens": 0}, "max_tokens"),
        ({"messages": []}, "messages"),
        ({"messages": [{"role": "wizard", "content": "hi"}]}, "messages.0.role"),
        ({"messages": [{"content": "no role"}]}, "messages.0.role"),
        ({"messages": "hello"}, "messages"),
        ({"stop": ["a", "b", "c", "d", "e"]}, "stop"),
        ({"model": ""}, "model"),
        ({"tools": [{"type": "function", "function": {"name": ""}}]}, "tools.0.function.name"),
        ({"top_logprobs": 21}, "top_logprobs"),
    ],
)
def test_chat_schema_violation_is_422(server: RunningServer, patch: dict[str, Any], param: str) -> None:
    key = begin(server.url)["api_key"]
    error = assert_error(
        chat(server.url, key, {**CHAT_BODY, **patch}), 422, code="invalid_request", type_="invalid_request_error"
    )
    assert error["param"] == param


@pytest.mark.parametrize(
    ("raw", "param"),
    [
        (b'{"reward": "abc"}', "reward"),
        (b'{"reward": NaN}', "reward"),
        (b'{"reward": Infinity}', "reward"),
        (b'{"reward": -Infinity}', "reward"),
        (b'{"reward": 1e999}', "reward"),
        (b'{"reward": null}', "reward"),
        (b"{}", "reward"),
        (b'{"reward": 1.0, "metadata": []}', "metadata"),
        (b'{"reward": 1.0, "bonus": 2}', "bonus"),
    ],
)
def test_end_schema_violation_is_422(server: RunningServer, raw: bytes, param: str) -> None:
    episode = begin(server.url)
    reply = httpx.post(
        f"{server.url}/swarm/episodes/{episode['episode_id']}/end",
        content=raw,
        headers={**SERVER_HEADERS, "Content-Type": "application/json"},
    )
    error = assert_error(reply, 422, code="invalid_request")
    assert error["param"] == param
    assert episode_status(server.url, episode["episode_id"]) == "open"  # a bad end does not close it


@pytest.mark.parametrize(
    ("body", "param"),
    [
        ({"task_id": "t", "extra": 1}, "extra"),
        ({}, "task_id"),
        ({"task_id": ""}, "task_id"),
        ({"task_id": "t", "kind": "both"}, "kind"),
        ({"task_id": "t", "agent": ""}, "agent"),
        ({"task_id": 17}, "task_id"),
    ],
)
def test_begin_schema_violation_is_422(server: RunningServer, body: dict[str, Any], param: str) -> None:
    before = in_flight(server.url)
    reply = httpx.post(f"{server.url}/swarm/episodes", json=body, headers=SERVER_HEADERS)
    error = assert_error(reply, 422, code="invalid_request")
    assert error["param"] == param
    assert in_flight(server.url) == before  # nothing was opened


def test_config_schema_violation_is_422(server: RunningServer) -> None:
    reply = httpx.put(f"{server.url}/swarm/config", json={"grpo": {"group_size": 1}}, headers=SERVER_HEADERS)
    assert_error(reply, 422)
    reply = httpx.put(f"{server.url}/swarm/config", json={"no_such_knob": 1}, headers=SERVER_HEADERS)
    assert_error(reply, 422)


def test_unsupported_content_part_is_400(server: RunningServer) -> None:
    key = begin(server.url)["api_key"]
    image = [{"type": "image_url", "image_url": {"url": "data:,"}}]
    error = assert_error(chat(server.url, key, {**CHAT_BODY, "messages": [{"role": "user", "content": image}]}), 400)
    assert error["param"] == "messages"


# ---- context length ---------------------------------------------------------------------------
def test_over_long_prompt_is_400_context_length_exceeded(server: RunningServer) -> None:
    episode = begin(server.url)
    long_text = "word " * 3000  # the echo backend's context is 2048 tokens
    body = {**CHAT_BODY, "messages": [{"role": "user", "content": long_text}]}
    error = assert_error(
        chat(server.url, episode["api_key"], body), 400, code="context_length_exceeded", type_="invalid_request_error"
    )
    assert "2048" in error["message"]
    too_many = assert_error(chat(server.url, episode["api_key"], {**CHAT_BODY, "max_tokens": 5000}), 400)
    assert too_many["code"] == "context_length_exceeded"
    streamed = chat(server.url, episode["api_key"], {**body, "stream": True})  # refused before any SSE starts
    assert_error(streamed, 400, code="context_length_exceeded")
    reply = httpx.get(f"{server.url}/swarm/episodes/{episode['episode_id']}", headers=SERVER_HEADERS).json()
    assert reply["calls"] == [] and reply["calls_in_flight"] == 0


# ---- episodes --------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("method", "suffix", "body"),
    [("GET", "", None), ("POST", "/end", {"reward": 0.0}), ("POST", "/abort", None)],
)
def test_unknown_episode_is_404(server: RunningServer, method: str, suffix: str, body: Any) -> None:
    reply = httpx.request(
        method, f"{server.url}/swarm/episodes/ep_doesnotexist{suffix}", json=body, headers=SERVER_HEADERS
    )
    assert_error(reply, 404, code="episode_not_found", type_="not_found_error")


def test_over_long_episode_id_is_422(server: RunningServer) -> None:
    reply = httpx.get(f"{server.url}/swarm/episodes/{'x' * 129}", headers=SERVER_HEADERS)
    assert_error(reply, 422)


@pytest.mark.parametrize(
    ("first", "second"),
    [("end", "end"), ("end", "abort"), ("abort", "end"), ("abort", "abort")],
)
def test_closing_twice_is_409(server: RunningServer, first: str, second: str) -> None:
    episode_id = begin(server.url)["episode_id"]
    body = {"reward": 0.5}

    def close(how: str) -> httpx.Response:
        return httpx.post(
            f"{server.url}/swarm/episodes/{episode_id}/{how}",
            json=body if how == "end" else None,
            headers=SERVER_HEADERS,
        )

    assert close(first).status_code == 200
    assert_error(close(second), 409, code="episode_closed", type_="conflict_error")
    record = httpx.get(f"{server.url}/swarm/episodes/{episode_id}", headers=SERVER_HEADERS).json()
    assert record["status"] == ("ended" if first == "end" else "aborted")  # the second close changed nothing
    assert record["reward"] == (0.5 if first == "end" else None)


def test_stopped_engine_refuses_calls_with_503(
    live_server: Callable[..., RunningServer], echo_backend: EchoBackend
) -> None:
    server = live_server(echo_backend)  # its own server: stopping the shared one would break the others
    episode = begin(server.url)
    assert httpx.post(f"{server.url}/swarm/engine/stop", headers=SERVER_HEADERS).json() == {"state": "offline"}
    error = assert_error(chat(server.url, episode["api_key"]), 503, code="engine_not_ready")
    assert "engine/start" in error["message"]
    assert_error(httpx.post(f"{server.url}/swarm/episodes", json={"task_id": "t"}, headers=SERVER_HEADERS), 503)
    assert httpx.post(f"{server.url}/swarm/engine/start", headers=SERVER_HEADERS).json() == {"state": "rolling"}
    assert chat(server.url, episode["api_key"]).status_code == 200


# ---- routing ---------------------------------------------------------------------------------
def test_unknown_route_and_wrong_method_have_error_shape(server: RunningServer) -> None:
    assert_error(httpx.get(f"{server.url}/v1/nothing-here"), 404)
    assert_error(httpx.get(f"{server.url}/v1/chat/completions"), 405)
    assert_error(httpx.delete(f"{server.url}/swarm/status", headers=SERVER_HEADERS), 405)
