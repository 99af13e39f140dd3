"""SwarmClient/AsyncSwarmClient against a small real FastAPI fake of the swarm HTTP contract,
plus the pure parts of the client (error mapping, backoff) and of the status view.

The fake runs under uvicorn on 127.0.0.1 in a thread. It can drop a route's connection
before or after handling it, so retries and lost replies are tested over real sockets.
"""

from __future__ import annotations

import io
import math
import random
import socket
import threading
import uuid
from collections import Counter
from collections.abc import Iterator, MutableMapping
from dataclasses import dataclass, field
from typing import Any, Literal

import httpx
import pytest
import uvicorn
from fastapi import APIRouter, Depends, FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, PlainTextResponse
from pydantic import BaseModel, Field
from rich.console import Console

from agentjet.core.errors import (
    AgentJetError,
    AuthError,
    ConfigError,
    ContextLengthExceeded,
    EngineNotReady,
    EpisodeClosed,
    EpisodeNotFound,
    InvalidRequest,
    ServerOffline,
)
from agentjet.core.sdk.client import AsyncSwarmClient, EpisodeReclaimed, SwarmClient
from agentjet.core.sdk.client_core import backoff_delay_s
from agentjet.core.sdk.client_replies import error_from_response
from agentjet.core.sdk.status_view import render_status, watch_status

TOKEN = "secret-token"
DropMode = Literal["before", "after"]


# ---- the fake server ------------------------------------------------------------------------


@dataclass
class FakeState:
    """What the fake server knows; tests read and poke it directly."""

    engine: str = "rolling"
    episodes: dict[str, dict[str, Any]] = field(default_factory=dict)
    config: dict[str, Any] = field(default_factory=dict)
    seen_headers: list[dict[str, str]] = field(default_factory=list)
    drops: dict[str, tuple[int, DropMode]] = field(default_factory=dict)  # path -> (times, mode)
    hits: Counter[str] = field(default_factory=Counter)  # "METHOD path" -> requests received

    def reset(self) -> None:
        self.__init__()  # type: ignore[misc]


class _Fail(Exception):
    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status, self.code, self.message = status, code, message


def _error(status: int, code: str | None, message: str) -> JSONResponse:
    body = {"error": {"message": message, "type": "test_error", "code": code, "param": None}}
    return JSONResponse(body, status_code=status)


class BeginIn(BaseModel):
    task_id: str = Field(min_length=1)
    kind: Literal["train", "eval"] = "train"
    agent: str | None = None


class EndIn(BaseModel):
    reward: float
    metadata: dict[str, Any] = Field(default_factory=dict)


def _token_check(state: FakeState) -> list[Any]:
    """The `/swarm/*` auth dependency; it also records each request's headers for the tests."""

    def require_token(request: Request) -> None:
        state.seen_headers.append(dict(request.headers))
        if request.headers.get("authorization") != f"Bearer {TOKEN}":
            raise _Fail(401, "invalid_token", "missing or invalid server token")

    return [Depends(require_token)]


def _open_episode(state: FakeState, episode_id: str) -> dict[str, Any]:
    record = state.episodes.get(episode_id)
    if record is None:
        raise _Fail(404, "episode_not_found", f"no open episode {episode_id}")
    if record["status"] != "open":
        code = "episode_reclaimed" if record["status"] == "reclaimed" else "episode_closed"
        raise _Fail(409, code, f"episode {episode_id} was already {record['status']}")
    return record


def _episode_router(state: FakeState) -> APIRouter:
    router = APIRouter(prefix="/swarm/episodes", dependencies=_token_check(state))

    @router.post("")
    async def begin(body: BeginIn, request: Request) -> dict[str, Any]:
        if state.engine != "rolling":
            message = f"engine is {state.engine}; start it with POST /swarm/engine/start"
            raise _Fail(503, "engine_not_ready", message)
        episode_id = uuid.uuid4().hex
        state.episodes[episode_id] = {
            "episode_id": episode_id,
            "status": "open",
            "reward": None,
            "calls": [{"i": 0}, {"i": 1}],
            **body.model_dump(),
        }
        return {
            "episode_id": episode_id,
            "base_url": f"{request.base_url}v1",
            "api_key": f"ek-{episode_id}",
            "expires_at": 1e10,
            **body.model_dump(),
        }

    @router.post("/{episode_id}/end")
    async def end(episode_id: str, body: EndIn) -> dict[str, Any]:
        record = _open_episode(state, episode_id)
        record.update(status="ended", reward=body.reward, metadata=body.metadata)
        return {"episode_id": episode_id, "status": "ended", "reward": body.reward, "calls": len(record["calls"])}

    @router.post("/{episode_id}/abort")
    async def abort(episode_id: str) -> dict[str, Any]:
        _open_episode(state, episode_id)["status"] = "aborted"
        return {"episode_id": episode_id, "status": "aborted"}

    @router.get("/{episode_id}")
    async def get_episode(episode_id: str) -> dict[str, Any]:
        if episode_id not in state.episodes:
            raise _Fail(404, "episode_not_found", f"no episode {episode_id}")
        return state.episodes[episode_id]

    return router


def _control_router(state: FakeState) -> APIRouter:
    router = APIRouter(prefix="/swarm", dependencies=_token_check(state))

    @router.get("/status")
    async def status() -> dict[str, Any]:
        counts = Counter(e["status"] for e in state.episodes.values())
        return {
            "state": state.engine,
            "policy_version": 3,
            "step": 7,
            "model": "tiny",
            "uptime_s": 3661.0,
            "active_clients": 2,
            "calls_total": 1234,
            "tokens_total": 56789,
            "calls_per_s": 4.5,
            "tokens_per_s": 812.25,
            "episodes": {
                "in_flight": counts["open"],
                "finished": counts["ended"],
                "aborted": counts["aborted"],
                "reclaimed": counts["reclaimed"],
            },
            "pool": {"slots": 8},
            "latest_metrics": None,
        }

    @router.put("/config")
    async def configure(body: dict[str, Any]) -> dict[str, Any]:
        if body.get("group_size", 2) < 2:
            raise _Fail(422, "invalid_config", "group_size=1 must be at least 2")
        state.config = body
        return {"config": body}

    @router.post("/engine/{action}")
    async def engine(action: Literal["start", "stop"]) -> dict[str, Any]:
        state.engine = "rolling" if action == "start" else "offline"
        return {"state": state.engine}

    return router


def _build_fake_app(state: FakeState) -> FastAPI:
    app = FastAPI()
    app.include_router(_episode_router(state))
    app.include_router(_control_router(state))

    @app.exception_handler(_Fail)
    async def on_fail(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, _Fail)
        return _error(exc.status, exc.code, exc.message)

    @app.exception_handler(RequestValidationError)
    async def on_invalid(request: Request, exc: Exception) -> JSONResponse:
        return _error(422, "invalid_request", f"invalid request: {exc}")

    @app.get("/health")
    async def health() -> dict[str, Any]:
        return {"status": "ok", "state": state.engine, "model": "tiny"}

    @app.get("/broken")
    async def broken() -> PlainTextResponse:
        return PlainTextResponse("upstream exploded", status_code=502)

    return app


class DropConnections:
    """ASGI wrapper: for a path in `state.drops`, start a reply and hang up mid-way, either
    before the app sees the request or after it has acted on it (a lost reply)."""

    def __init__(self, app: FastAPI, state: FakeState) -> None:
        self.app, self.state = app, state

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        path = scope["path"]
        self.state.hits[f"{scope['method']} {path}"] += 1
        times, mode = self.state.drops.get(path, (0, "before"))
        if times <= 0:
            return await self.app(scope, receive, send)
        self.state.drops[path] = (times - 1, mode)
        if mode == "after":
            await self.app(scope, receive, _discard)
        start = {"type": "http.response.start", "status": 200, "headers": [(b"content-length", b"64")]}
        await send(start)  # uvicorn closes the socket: no body ever follows these headers


async def _discard(message: MutableMapping[str, Any]) -> None:
    return None


@dataclass
class FakeServer:
    url: str
    state: FakeState


@pytest.fixture(scope="module")
def _running_server() -> Iterator[FakeServer]:
    state = FakeState()
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)  # connections queue here until uvicorn serves them: no start-up race
    config = uvicorn.Config(DropConnections(_build_fake_app(state), state), log_level="critical", lifespan="off")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    yield FakeServer(f"http://127.0.0.1:{sock.getsockname()[1]}", state)
    server.should_exit = True
    thread.join(timeout=10)
    sock.close()


@pytest.fixture
def fake(_running_server: FakeServer) -> FakeServer:
    _running_server.state.reset()
    return _running_server


@pytest.fixture(autouse=True)
def _no_token_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AGENTJET_TOKEN", raising=False)


@pytest.fixture
def client(fake: FakeServer) -> Iterator[SwarmClient]:
    with SwarmClient(fake.url, TOKEN, retries=3, backoff_s=0.001) as swarm:
        yield swarm


@pytest.fixture
def dead_url() -> str:
    """A local port with nothing listening: connections are refused at once."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"


# ---- episodes, blocking twin ----------------------------------------------------------------


def test_episode_block_hands_out_keys_and_end_reports_the_reward(client: SwarmClient, fake: FakeServer) -> None:
    with client.episode("t-17", agent="solver") as ep:
        assert ep.base_url == f"{fake.url}/v1"
        assert ep.api_key == f"ek-{ep.episode_id}"
        assert (ep.task_id, ep.kind, ep.agent, ep.expires_at) == ("t-17", "train", "solver", 1e10)
        assert not ep.is_closed
        result = ep.end(0.75, {"note": "ok"})
    assert result == {"episode_id": ep.episode_id, "status": "ended", "reward": 0.75, "calls": 2}
    assert ep.is_closed and ep.status == "ended"
    record = client.get_episode(ep.episode_id)
    assert (record["status"], record["reward"]) == ("ended", 0.75)
    assert record["metadata"] == {"note": "ok"}


def test_every_request_carries_the_token_and_the_client_id(client: SwarmClient, fake: FakeServer) -> None:
    client.status()
    client.begin_episode("t-1", kind="eval").abort()
    assert len(fake.state.seen_headers) == 3
    for headers in fake.state.seen_headers:
        assert headers["authorization"] == f"Bearer {TOKEN}"
        assert headers["x-agentjet-client"] == client.client_id
    assert len(client.client_id) == 32 and int(client.client_id, 16) >= 0
    with SwarmClient(fake.url, TOKEN) as other, SwarmClient(fake.url, TOKEN, client_id="me") as me:
        assert other.client_id != client.client_id
        assert me.client_id == "me"


def test_token_defaults_to_the_environment(fake: FakeServer, monkeypatch: pytest.MonkeyPatch) -> None:
    with SwarmClient(fake.url) as anonymous, pytest.raises(AuthError):
        anonymous.status()
    monkeypatch.setenv("AGENTJET_TOKEN", TOKEN)
    with SwarmClient(fake.url) as from_env:
        assert from_env.status()["state"] == "rolling"
    assert TOKEN not in repr(from_env)


def test_an_error_in_the_block_aborts_the_episode_and_propagates(client: SwarmClient, fake: FakeServer) -> None:
    with pytest.raises(ZeroDivisionError), client.episode("t-2") as ep:
        _ = 1 / 0
    assert ep.status == "aborted"
    assert fake.state.episodes[ep.episode_id]["status"] == "aborted"


def test_an_error_in_the_block_is_not_hidden_when_the_abort_fails(client: SwarmClient, fake: FakeServer) -> None:
    with pytest.raises(ZeroDivisionError), client.episode("t-2") as ep:
        fake.state.drops[f"/swarm/episodes/{ep.episode_id}/abort"] = (9, "before")
        _ = 1 / 0
    assert fake.state.episodes[ep.episode_id]["status"] == "open"


def test_leaving_the_block_without_end_warns_at_the_callers_line_and_aborts(
    client: SwarmClient, fake: FakeServer
) -> None:
    with pytest.warns(UserWarning, match="without end") as caught:
        with client.episode("t-3") as ep:
            pass
    assert caught[0].filename == __file__
    assert fake.state.episodes[ep.episode_id]["status"] == "aborted"


def test_a_closed_episode_refuses_a_second_end_without_asking_the_server(client: SwarmClient, fake: FakeServer) -> None:
    episode = client.begin_episode("t-4")
    episode.end(1.0)
    before = sum(fake.state.hits.values())
    with pytest.raises(EpisodeClosed, match="already ended"):
        episode.end(0.0)
    episode.abort()  # idempotent: nothing to do
    assert sum(fake.state.hits.values()) == before


@pytest.mark.parametrize("reward", [math.nan, math.inf, "1.0", True])
def test_a_reward_json_cannot_carry_is_refused_before_sending(
    client: SwarmClient, fake: FakeServer, reward: Any
) -> None:
    episode = client.begin_episode("t-5")
    with pytest.raises(InvalidRequest, match="finite number") as caught:
        episode.end(reward)
    assert caught.value.param == "reward"
    assert not episode.is_closed
    assert fake.state.hits[f"POST /swarm/episodes/{episode.episode_id}/end"] == 0


def test_a_reclaimed_episode_raises_episode_reclaimed_on_end(client: SwarmClient, fake: FakeServer) -> None:
    episode = client.begin_episode("t-6")
    fake.state.episodes[episode.episode_id]["status"] = "reclaimed"
    with pytest.raises(EpisodeReclaimed) as caught:
        episode.end(1.0)
    assert caught.value.status == "reclaimed" and episode.status == "reclaimed"


def test_abort_of_an_episode_the_server_already_closed_is_quiet(client: SwarmClient, fake: FakeServer) -> None:
    episode = client.begin_episode("t-7")
    fake.state.episodes[episode.episode_id]["status"] = "reclaimed"
    episode.abort()
    assert episode.status == "reclaimed"


# ---- retries and lost replies ---------------------------------------------------------------


def test_dropped_connections_are_retried_until_one_gets_through(client: SwarmClient, fake: FakeServer) -> None:
    fake.state.drops["/swarm/episodes"] = (2, "before")
    episode = client.begin_episode("t-8")
    assert fake.state.hits["POST /swarm/episodes"] == 3
    assert list(fake.state.episodes) == [episode.episode_id]


def test_after_all_attempts_fail_server_offline_is_raised_from_the_transport_error(
    client: SwarmClient, fake: FakeServer
) -> None:
    fake.state.drops["/swarm/status"] = (10, "before")
    with pytest.raises(ServerOffline, match="after 3 attempt") as caught:
        client.status()
    assert isinstance(caught.value.__cause__, httpx.TransportError)
    assert fake.state.hits["GET /swarm/status"] == 3


def test_a_refused_connection_becomes_server_offline(dead_url: str) -> None:
    with SwarmClient(dead_url, TOKEN, retries=2, backoff_s=0.001) as swarm:
        with pytest.raises(ServerOffline, match=f"server at {dead_url} is not reachable") as caught:
            swarm.health()
    assert isinstance(caught.value, ConnectionError)
    assert isinstance(caught.value.__cause__, httpx.ConnectError)


def test_http_errors_are_not_retried(fake: FakeServer) -> None:
    with SwarmClient(fake.url, "wrong", retries=5, backoff_s=0.001) as swarm:
        with pytest.raises(AuthError, match="invalid server token"):
            swarm.status()
    assert fake.state.hits["GET /swarm/status"] == 1


def test_an_end_whose_reply_was_lost_is_confirmed_from_the_episode_record(
    client: SwarmClient, fake: FakeServer
) -> None:
    episode = client.begin_episode("t-9")
    fake.state.drops[f"/swarm/episodes/{episode.episode_id}/end"] = (1, "after")
    result = episode.end(0.5)
    expected = {"episode_id": episode.episode_id, "status": "ended", "reward": 0.5, "calls": 2}
    assert result == expected
    assert fake.state.hits[f"POST /swarm/episodes/{episode.episode_id}/end"] == 2
    assert fake.state.hits[f"GET /swarm/episodes/{episode.episode_id}"] == 1


def test_a_retried_end_meeting_an_episode_closed_otherwise_still_raises(client: SwarmClient, fake: FakeServer) -> None:
    episode = client.begin_episode("t-10")
    fake.state.drops[f"/swarm/episodes/{episode.episode_id}/end"] = (1, "before")
    fake.state.episodes[episode.episode_id]["status"] = "aborted"
    with pytest.raises(EpisodeClosed, match="already aborted") as caught:
        episode.end(0.5)
    assert caught.value.status == "aborted"


def test_backoff_doubles_per_attempt_with_bounded_jitter_and_a_cap() -> None:
    rng = random.Random(0)
    delays = [backoff_delay_s(attempt, 0.2, rng) for attempt in range(1, 8)]
    for attempt, delay in enumerate(delays[:4], start=1):
        assert 0.2 * 2 ** (attempt - 1) <= delay <= 0.22 * 2 ** (attempt - 1)
    assert all(5.0 <= delay <= 5.5 for delay in delays[5:])


# ---- other operations and error mapping -----------------------------------------------------


class _GrpoLike(BaseModel):
    group_size: int = 8
    loss: str = "dapo"


def test_configure_accepts_a_model_or_a_dict_and_maps_rejections(client: SwarmClient, fake: FakeServer) -> None:
    assert client.configure(_GrpoLike()) == {"group_size": 8, "loss": "dapo"}
    assert fake.state.config == {"group_size": 8, "loss": "dapo"}
    with pytest.raises(ConfigError, match="at least 2"):
        client.configure({"group_size": 1})


def test_engine_control_and_engine_not_ready(client: SwarmClient) -> None:
    assert client.stop_engine() == {"state": "offline"}
    assert client.health() == {"status": "ok", "state": "offline", "model": "tiny"}
    with pytest.raises(EngineNotReady) as caught:
        client.begin_episode("t-11")
    assert caught.value.state == "offline"
    assert client.start_engine() == {"state": "rolling"}
    assert client.begin_episode("t-11").kind == "train"


def test_request_errors_map_to_typed_exceptions(client: SwarmClient, fake: FakeServer) -> None:
    with pytest.raises(EpisodeNotFound, match="no episode nope"):
        client.get_episode("nope")
    with pytest.raises(InvalidRequest, match="invalid request"):
        client.begin_episode("")
    with pytest.raises(InvalidRequest, match="kind must be"):
        client.begin_episode("t-12", kind="test")  # type: ignore[arg-type]
    assert fake.state.hits["POST /swarm/episodes"] == 1  # the bad kind never left the client
    with pytest.raises(ConfigError, match="http://HOST:PORT"):
        SwarmClient("localhost:8710")


def _response(status: int, body: Any, path: str = "/swarm/episodes/e1/end") -> httpx.Response:
    request = httpx.Request("POST", f"http://server{path}")
    if isinstance(body, str):
        return httpx.Response(status, text=body, request=request)
    return httpx.Response(status, json=body, request=request)


def _err(message: str, code: str | None, param: str | None = None) -> dict[str, Any]:
    return {"error": {"message": message, "type": "x", "code": code, "param": param}}


@pytest.mark.parametrize(
    ("status", "body", "expected", "attrs"),
    [
        (401, _err("bad token", "invalid_token"), AuthError, {}),
        (401, _err("bad key", "invalid_api_key"), AuthError, {}),
        (404, _err("no open episode e1", "episode_not_found"), EpisodeNotFound, {}),
        (409, _err("episode e1 was already ended", "episode_closed"), EpisodeClosed, {"status": "ended"}),
        (409, _err("episode e1 was already reclaimed", "episode_reclaimed"), EpisodeReclaimed, {"status": "reclaimed"}),
        (400, _err("too long", "context_length_exceeded", "messages"), ContextLengthExceeded, {"param": "messages"}),
        (400, _err("bad json", "invalid_json"), InvalidRequest, {}),
        (
            422,
            _err("invalid request: body.task_id", "invalid_request", "task_id"),
            InvalidRequest,
            {"param": "task_id"},
        ),
        (422, _err("group_size=1 must be at least 2", "invalid_config"), ConfigError, {}),
        (
            503,
            _err("engine is booting; start it with POST /swarm/engine/start", "engine_not_ready"),
            EngineNotReady,
            {"state": "booting"},
        ),
        (
            503,
            {"error": {"message": "not now", "code": "engine_not_ready", "state": "draining", "needed": ["rolling"]}},
            EngineNotReady,
            {"state": "draining", "needed": ("rolling",)},
        ),
        (503, "<html>busy</html>", EngineNotReady, {"state": "unknown"}),
    ],
)
def test_error_replies_map_to_the_error_tree(
    status: int, body: Any, expected: type[AgentJetError], attrs: dict[str, Any]
) -> None:
    error = error_from_response(_response(status, body))
    assert type(error) is expected
    for name, value in attrs.items():
        assert getattr(error, name) == value


def test_replies_outside_the_contract_become_plain_agentjet_errors(fake: FakeServer) -> None:
    unknown_route = error_from_response(_response(404, {"detail": "Not Found"}, "/v1/swarm"))
    assert type(unknown_route) is AgentJetError and "HTTP 404" in str(unknown_route)
    crashed = error_from_response(_response(500, _err("internal server error", "internal_error")))
    assert type(crashed) is AgentJetError and "internal server error" in str(crashed)
    with httpx.Client() as raw:
        proxy_page = error_from_response(raw.get(f"{fake.url}/broken"))
    assert type(proxy_page) is AgentJetError and "upstream exploded" in str(proxy_page)


def test_episode_repr_never_shows_the_key(client: SwarmClient) -> None:
    episode = client.begin_episode("t-13")
    assert episode.api_key not in repr(episode) and episode.episode_id in repr(episode)


# ---- the asyncio twin -----------------------------------------------------------------------


@pytest.mark.asyncio
async def test_async_episode_block_ends_with_a_reward(fake: FakeServer) -> None:
    async with AsyncSwarmClient(fake.url, TOKEN, retries=3, backoff_s=0.001) as swarm:
        async with swarm.episode("t-20", kind="eval") as ep:
            result = await ep.end(1.0)
        assert result["status"] == "ended" and ep.kind == "eval"
        assert (await swarm.get_episode(ep.episode_id))["reward"] == 1.0
        assert (await swarm.status())["episodes"]["finished"] == 1
    assert fake.state.seen_headers[0]["x-agentjet-client"] == swarm.client_id


@pytest.mark.asyncio
async def test_async_errors_abort_and_a_missing_end_warns(fake: FakeServer) -> None:
    async with AsyncSwarmClient(fake.url, TOKEN) as swarm:
        with pytest.raises(KeyError):
            async with swarm.episode("t-21") as failed:
                raise KeyError("boom")
        with pytest.warns(UserWarning, match="without end") as caught:
            async with swarm.episode("t-22") as forgotten:
                pass
    assert caught[0].filename == __file__
    assert fake.state.episodes[failed.episode_id]["status"] == "aborted"
    assert fake.state.episodes[forgotten.episode_id]["status"] == "aborted"


@pytest.mark.asyncio
async def test_async_retries_and_lost_replies(fake: FakeServer, dead_url: str) -> None:
    fake.state.drops["/swarm/episodes"] = (2, "before")
    async with AsyncSwarmClient(fake.url, TOKEN, retries=3, backoff_s=0.001) as swarm:
        episode = await swarm.begin_episode("t-23")
        fake.state.drops[f"/swarm/episodes/{episode.episode_id}/end"] = (1, "after")
        assert (await episode.end(0.25))["reward"] == 0.25
        assert await swarm.configure({"group_size": 4}) == {"group_size": 4}
    assert fake.state.hits["POST /swarm/episodes"] == 3
    async with AsyncSwarmClient(dead_url, TOKEN, retries=2, backoff_s=0.001) as offline:
        with pytest.raises(ServerOffline):
            await offline.health()


# ---- status view ----------------------------------------------------------------------------


def _text(renderable: Any) -> str:
    console = Console(file=io.StringIO(), width=120, record=True, color_system=None)
    console.print(renderable)
    return console.export_text()


FULL_STATUS: dict[str, Any] = {
    "state": "rolling",
    "policy_version": 3,
    "step": 7,
    "model": "tiny",
    "uptime_s": 3661.0,
    "episodes": {"in_flight": 3, "finished": 1200, "aborted": 4, "reclaimed": 1},
    "active_clients": 2,
    "calls_total": 1234,
    "tokens_total": 56789,
    "calls_per_s": 4.5,
    "tokens_per_s": 812.25,
    "pool": {"slots": 8, "busy": 5},
    "latest_metrics": {"loss": 0.0123, "reward_mean": 0.5},
}


def _rows(text: str) -> dict[str, str]:
    """label -> value for each `│ label  value │` line of a rendered panel."""
    rows = {}
    for line in text.splitlines():
        label, _, value = line.strip("│╭╮╰╯─ ").partition("  ")
        rows[label.strip()] = value.strip()
    return rows


def test_render_status_shows_every_field_and_the_open_ended_sections() -> None:
    text = _text(render_status(FULL_STATUS, url="http://h:1"))
    assert "AgentJet server http://h:1" in text
    expected = {
        "state": "rolling",
        "model": "tiny",
        "policy version": "3",
        "step": "7",
        "episodes": "3 in flight · 1,200 finished · 4 aborted · 1 reclaimed",
        "active clients": "2",
        "calls": "4.50/s (1,234 total)",
        "tokens": "812.25/s (56,789 total)",
        "uptime": "1h 01m 01s",
        "slots": "8",
        "busy": "5",
        "loss": "0.0123",
        "reward": "0.5",
        "eval reward": "-",
        "pool": "",
        "last step": "-",
    }
    rows = _rows(text)
    assert {label: rows.get(label) for label in expected} == expected


def test_render_status_tolerates_missing_fields_and_null_metrics() -> None:
    text = _text(render_status({"state": "offline", "latest_metrics": None, "pool": {}}))
    assert "offline" in text and "last step" not in text and "pool" not in text
    assert "uptime" in text and "-" in text


def test_watch_status_once_prints_the_status(client: SwarmClient) -> None:
    console = Console(file=io.StringIO(), width=120, record=True, color_system=None)
    assert watch_status(client, once=True, console=console) == 0
    assert "rolling" in console.export_text()


def test_watch_status_once_on_an_offline_server_exits_1(dead_url: str) -> None:
    console = Console(file=io.StringIO(), width=200, record=True, color_system=None)
    with SwarmClient(dead_url, TOKEN, retries=1) as swarm:
        assert watch_status(swarm, once=True, console=console) == 1
    assert f"server at {dead_url} is not reachable (" in console.export_text()


def test_watch_status_live_keeps_polling_an_offline_server(dead_url: str) -> None:
    console = Console(file=io.StringIO(), width=200, record=True, color_system=None)
    with SwarmClient(dead_url, TOKEN, retries=1) as swarm:
        assert watch_status(swarm, interval_s=0.0, console=console, polls=3) == 0
    text = console.export_text()
    assert f"server at {dead_url} is not reachable" in text and "retrying every 0s" in text
    assert text.count("is not reachable") == 3  # not a terminal: every poll printed as it came


@pytest.mark.parametrize("terminal", [True, False])
def test_watch_status_redraws_in_place_only_on_a_terminal(dead_url: str, terminal: bool) -> None:
    out = io.StringIO()
    console = Console(file=out, width=200, color_system=None, force_terminal=terminal)
    with SwarmClient(dead_url, TOKEN, retries=1) as swarm:
        assert watch_status(swarm, interval_s=0.0, console=console, polls=3) == 0
    assert ("\x1b[1A" in out.getvalue() or "\x1b[2K" in out.getvalue()) is terminal  # cursor moves: rich's Live
    assert out.getvalue().count("is not reachable") == (4 if terminal else 3)  # Live draws its last frame again


def test_watch_status_stops_when_the_server_refuses(fake: FakeServer) -> None:
    console = Console(file=io.StringIO(), width=200, record=True, color_system=None)
    with SwarmClient(fake.url, "wrong") as swarm:
        assert watch_status(swarm, interval_s=0.0, console=console, polls=5) == 1
    assert "refused" in console.export_text()
    assert fake.state.hits["GET /swarm/status"] == 1


@pytest.mark.parametrize(
    ("training", "shown"),
    [
        ({"state": "ready", "last_step": 12}, "ready · last step 12"),
        (
            {"state": "failed", "last_error": "restore failed: disk", "refused_steps": 1, "quarantined_episodes": 4},
            "FAILED · 1 refused steps · 4 quarantined episodes · last error: restore failed: disk",
        ),
        ({"state": "off"}, "off"),
    ],
)
def test_render_status_shows_the_training_health(training: dict[str, Any], shown: str) -> None:
    rows = _rows(_text(render_status({"state": "rolling", "latest_metrics": None, "pool": {}, "training": training})))
    assert rows["training"] == shown
