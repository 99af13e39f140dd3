"""Fuzz the live server: nothing a client sends may produce a 5xx or kill it (DESIGN §3).

Schemathesis generates requests for every operation in the app's own OpenAPI schema, with the
right credentials injected so the fuzzing gets past auth into the handlers; hypothesis then
throws arbitrary JSON at the two routes agents and SDKs hit most. One echo-backed server on
loopback serves the whole module, so state piles up across examples the way it does in
production, and the last test checks it still answers afterwards.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from schemathesis.checks import not_a_server_error
from schemathesis.generation.modes import GenerationMode

from agentjet.core.backends.fakes import EchoBackend
from agentjet.core.config import ServerSettings
from agentjet.core.server.app import create_app
from agentjet.core.testing import serve_in_thread

TOKEN = "fuzz-server-token-0123456789"
SERVER_HEADERS = {"Authorization": f"Bearer {TOKEN}"}
FUZZ_SETTINGS = settings(
    max_examples=40,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much, HealthCheck.function_scoped_fixture],
)


@dataclass(frozen=True)
class FuzzTarget:
    url: str
    episode_id: str
    api_key: str

    def auth_for(self, path: str) -> dict[str, str]:
        """Server token for /swarm/*, the episode key for completions, nothing elsewhere."""
        if path.startswith("/swarm"):
            return dict(SERVER_HEADERS)
        if path.startswith("/v1/chat"):
            return {"Authorization": f"Bearer {self.api_key}"}
        return {}


@pytest.fixture(scope="module")
def target(tiny_tokenizer: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[FuzzTarget]:
    state_dir: Path = tmp_path_factory.mktemp("fuzz-state")
    app = create_app(
        ServerSettings(model="tiny", state_dir=state_dir, token=TOKEN), backend=EchoBackend(tiny_tokenizer)
    )
    with serve_in_thread(app) as server:
        deadline = time.monotonic() + 60
        while httpx.get(f"{server.url}/health").json()["state"] != "rolling":
            assert time.monotonic() < deadline, "fuzz server never reached rolling"
            time.sleep(0.01)
        begun = httpx.post(f"{server.url}/swarm/episodes", json={"task_id": "fuzz"}, headers=SERVER_HEADERS)
        assert begun.status_code == 200, begun.text
        yield FuzzTarget(server.url, begun.json()["episode_id"], begun.json()["api_key"])


def _static_openapi() -> dict[str, Any]:
    """The app's schema, built without starting it (create_app does nothing until its lifespan)."""
    settings_ = ServerSettings(model="tiny", state_dir=Path("unused-state"), token=TOKEN)
    return create_app(settings_).openapi()


OPENAPI = _static_openapi()
OPERATIONS = [(method.upper(), path) for path, ops in OPENAPI["paths"].items() for method in ops]


def _restore(target: FuzzTarget) -> None:
    """Undo what a fuzzed call may legitimately change, so later examples still reach handlers."""
    reply = httpx.post(f"{target.url}/swarm/engine/start", headers=SERVER_HEADERS)
    assert reply.status_code == 200 and reply.json()["state"] == "rolling", reply.text
    status = httpx.get(f"{target.url}/swarm/episodes/{target.episode_id}", headers=SERVER_HEADERS)
    assert status.json()["status"] == "open", "the fuzzer closed the shared episode"


@pytest.mark.parametrize(("method", "path"), OPERATIONS, ids=[f"{m} {p}" for m, p in OPERATIONS])
def test_no_operation_answers_5xx(target: FuzzTarget, method: str, path: str) -> None:
    """Schemathesis cases (schema-valid and schema-breaking) for one operation; none may get a 5xx.

    Driven through `as_strategy` rather than `schemathesis.pytest`: schemathesis 4.32.5's pytest
    integration sets `Node._nodeid`, which pytest 9 no longer has.
    """
    operation = schemathesis.openapi.from_dict(OPENAPI)[path][method]
    cases = st.one_of(operation.as_strategy(GenerationMode.POSITIVE), operation.as_strategy(GenerationMode.NEGATIVE))
    auth = target.auth_for(path)

    @FUZZ_SETTINGS
    @given(case=cases)
    def fuzz(case: Any) -> None:
        case.call_and_validate(base_url=target.url, headers=auth, checks=[not_a_server_error], timeout=30)
        if path == "/swarm/engine/stop":
            _restore(target)

    fuzz()


# ---- arbitrary JSON at the hot routes -------------------------------------------------------
# text may hold lone surrogates: valid JSON escapes (json.dumps writes \udcff), invalid Unicode
_ALPHABET = st.characters() | st.sampled_from(["\udcff", "\ud800"])
_scalars = st.none() | st.booleans() | st.integers() | st.floats() | st.text(_ALPHABET, max_size=20)
_json = st.recursive(
    _scalars,
    lambda kids: st.lists(kids, max_size=4) | st.dictionaries(st.text(_ALPHABET, max_size=8), kids, max_size=4),
    max_leaves=12,
)
_role = st.sampled_from(["system", "developer", "user", "assistant", "tool", "function", "wizard", ""]) | _json
_message = st.fixed_dictionaries(
    {"role": _role},
    optional={
        "content": st.text(_ALPHABET, max_size=40)
        | _json
        | st.lists(
            st.fixed_dictionaries(
                {"type": st.sampled_from(["text", "image_url"]) | _json}, optional={"text": _json | st.text(_ALPHABET)}
            ),
            max_size=3,
        ),
        "name": _json,
        "tool_call_id": _json,
        "tool_calls": st.lists(
            st.fixed_dictionaries(
                {
                    "function": st.fixed_dictionaries(
                        {"name": st.text(_ALPHABET, max_size=8) | _json},
                        optional={"arguments": st.text(_ALPHABET, max_size=20) | _json},
                    )
                },
                optional={"id": _json, "type": _json},
            ),
            max_size=2,
        )
        | _json,
    },
)
_tool = st.fixed_dictionaries(
    {
        "type": st.just("function") | _json,
        "function": st.fixed_dictionaries(
            {"name": st.text(_ALPHABET, max_size=10) | _json}, optional={"parameters": _json, "description": _json}
        ),
    }
)
chat_bodies = st.one_of(
    _json,
    st.fixed_dictionaries(
        {"model": st.text(_ALPHABET, max_size=10) | _json, "messages": st.lists(_message, max_size=4) | _json},
        optional={
            "n": st.integers(-2, 20) | _json,
            "max_tokens": st.integers(-5, 5000) | _json,
            "max_completion_tokens": st.integers(-5, 5000) | _json,
            "temperature": st.floats() | _json,
            "top_p": st.floats() | _json,
            "stop": st.text(_ALPHABET, max_size=4) | st.lists(st.text(_ALPHABET, max_size=4), max_size=6) | _json,
            "seed": st.integers() | _json,
            "logprobs": st.booleans() | _json,
            "top_logprobs": st.integers(-2, 30) | _json,
            "stream": st.booleans() | _json,
            "stream_options": st.fixed_dictionaries({}, optional={"include_usage": st.booleans() | _json}) | _json,
            "tools": st.lists(_tool, max_size=2) | _json,
            "tool_choice": st.sampled_from(["none", "auto", "required"]) | _json,
        },
    ),
)
begin_bodies = st.one_of(
    _json,
    st.fixed_dictionaries(
        {"task_id": st.text(_ALPHABET, max_size=300) | _json},
        optional={
            "kind": st.sampled_from(["train", "eval"]) | _json,
            "agent": st.text(_ALPHABET, max_size=200) | _json,
        },
    ),
)


def _post(url: str, body: Any, headers: dict[str, str]) -> httpx.Response:
    raw = json.dumps(body)  # NaN and Infinity go out as the non-standard literals some clients send
    return httpx.post(url, content=raw, headers={**headers, "Content-Type": "application/json"}, timeout=30)


def _assert_client_error_or_success(reply: httpx.Response) -> None:
    assert reply.status_code < 500, reply.text
    if reply.status_code >= 400:
        error = reply.json()["error"]
        assert isinstance(error["message"], str) and error["type"], error
    else:
        assert reply.status_code == 200, reply.text


@settings(FUZZ_SETTINGS, max_examples=150)
@given(body=chat_bodies)
def test_random_chat_bodies_never_5xx(target: FuzzTarget, body: Any) -> None:
    reply = _post(f"{target.url}/v1/chat/completions", body, target.auth_for("/v1/chat/completions"))
    _assert_client_error_or_success(reply)


@settings(FUZZ_SETTINGS, max_examples=100)
@given(body=begin_bodies)
def test_random_begin_bodies_never_5xx(target: FuzzTarget, body: Any) -> None:
    reply = _post(f"{target.url}/swarm/episodes", body, SERVER_HEADERS)
    _assert_client_error_or_success(reply)
    if reply.status_code == 200:  # a valid begin really opened an episode with a working key
        opened = reply.json()
        assert opened["task_id"] == body["task_id"]
        abort = httpx.post(f"{target.url}/swarm/episodes/{opened['episode_id']}/abort", headers=SERVER_HEADERS)
        assert abort.status_code == 200, abort.text


_header_text = st.text(st.characters(min_codepoint=0x21, max_codepoint=0x7E), min_size=1, max_size=200)


@settings(FUZZ_SETTINGS, max_examples=60)
@given(
    value=st.one_of(
        _header_text, _header_text.map(lambda t: f"Bearer {t}"), _header_text.map(lambda t: f"Bearer ajk_{t}")
    )
)
def test_random_authorization_is_401(target: FuzzTarget, value: str) -> None:
    headers = {"Authorization": value}
    for path, body in (
        ("/v1/chat/completions", {"model": "m", "messages": [{"role": "user", "content": "x"}]}),
        ("/swarm/episodes", {"task_id": "t"}),
    ):
        reply = _post(f"{target.url}{path}", body, headers)
        assert reply.status_code == 401, reply.text
        assert reply.json()["error"]["type"] == "authentication_error"


def test_server_still_healthy_after_fuzzing(target: FuzzTarget) -> None:
    """Runs last in this module: the server survived everything above and still serves a real call."""
    health = httpx.get(f"{target.url}/health")
    assert health.status_code == 200 and health.json()["state"] == "rolling"
    reply = _post(
        f"{target.url}/v1/chat/completions",
        {"model": "m", "messages": [{"role": "user", "content": "still there?"}], "max_tokens": 4},
        target.auth_for("/v1/chat/completions"),
    )
    assert reply.status_code == 200, reply.text
    record = httpx.get(f"{target.url}/swarm/episodes/{target.episode_id}", headers=SERVER_HEADERS).json()
    assert record["status"] == "open"
    assert record["calls"][-1]["completion_ids"] == record["calls"][-1]["prompt_ids"][-4:]
