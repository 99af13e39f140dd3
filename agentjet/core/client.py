"""Python SDK for a swarm server: begin and end episodes, read status, steer the engine.

`SwarmClient` and `AsyncSwarmClient` share everything but the send. Each operation is a small
sans-IO *plan*: a generator that yields the HTTP calls it needs, receives their replies and
returns the result (or raises a typed error). The twins differ only in how they perform one
call, with retries on transport errors and on the server's transient refusals (a full disk:
507 `storage_full`; too many connections: 503 `too_many_connections`), `time.sleep` vs
`asyncio.sleep`. The token is the admin token or a client token (`agentjet server token create`);
a client token may only begin, end and read its own episodes, vote and read the status.

    client = SwarmClient("http://127.0.0.1:8710", token="...")
    with client.episode("t-17") as ep:        # ep.base_url, ep.api_key for any OpenAI client
        ...
        ep.end(reward=1.0)                     # an exception in the block aborts the episode
"""

from __future__ import annotations

import asyncio
import logging
import math
import os
import random
import re
import time
import uuid
import warnings
from collections.abc import Generator, Mapping
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, Literal, Protocol, TypeVar, cast
from urllib.parse import quote

import httpx

from agentjet.core.client_replies import EpisodeReclaimed, JsonDict, parse_object
from agentjet.core.errors import (
    AgentJetError,
    ConfigError,
    EngineNotReady,
    EpisodeClosed,
    InvalidRequest,
    ServerOffline,
)
from agentjet.core.types import CLIENT_ID_PATTERN

__all__ = ["AsyncEpisode", "AsyncSwarmClient", "Episode", "EpisodeReclaimed", "SwarmClient"]

log = logging.getLogger(__name__)

T = TypeVar("T")
EpisodeKindName = Literal["train", "eval"]

TOKEN_ENV = "AGENTJET_TOKEN"
_MAX_BACKOFF_S = 5.0
_RETRIED_CODES = frozenset({"storage_full", "too_many_connections"})  # transient: nothing was done
_READY_POLL_S = 0.1


class SupportsModelDump(Protocol):
    """A pydantic model (e.g. `TrainConfig`) as `configure` accepts it."""

    def model_dump(self, *, mode: str = ...) -> dict[str, Any]: ...


# ---- plans: what to send and how to read the replies (shared by both twins) ----------------


@dataclass(frozen=True)
class _Call:
    method: str
    path: str
    body: Any = None


@dataclass(frozen=True)
class _Reply:
    response: httpx.Response
    attempts: int  # > 1 when an earlier attempt was lost: the server may have acted on it


_Plan = Generator[_Call, _Reply, T]


def _one_call(call: _Call) -> _Plan[JsonDict]:
    """Most operations: send one call and return its JSON object, errors typed."""
    reply = yield call
    return parse_object(reply.response)


def _episode_path(episode_id: str) -> str:
    return f"/swarm/episodes/{quote(episode_id, safe='')}"


def _end_plan(episode_id: str, body: JsonDict) -> _Plan[JsonDict]:
    """End an episode. When a retried end meets 409, the lost first attempt may have ended it:
    the episode record decides, so a reward is never reported as lost when it was kept."""
    path = _episode_path(episode_id)
    reply = yield _Call("POST", f"{path}/end", body)
    try:
        return parse_object(reply.response)
    except EpisodeClosed as exc:
        if reply.attempts == 1 or isinstance(exc, EpisodeReclaimed):
            raise
        closed = exc
    record = parse_object((yield _Call("GET", path)).response)
    if record.get("status") != "ended":
        raise closed
    log.info("episode end confirmed after a lost reply id=%s", episode_id)
    calls = record.get("calls")
    count = len(calls) if isinstance(calls, list) else calls
    reward = record.get("reward")
    return {"episode_id": episode_id, "status": "ended", "reward": reward, "calls": count}


def _begin_call(task_id: str, kind: str, agent: str | None, client_id: str) -> _Call:
    if kind not in ("train", "eval"):
        raise InvalidRequest(f"kind must be 'train' or 'eval', got {kind!r}", param="kind")
    body = {"task_id": task_id, "kind": kind, "agent": agent, "client_id": client_id}
    return _Call("POST", "/swarm/episodes", body)


def _client_call(client_id: str, action: Literal["update", "heartbeat"], ready: bool | None = None) -> _Call:
    body = None if ready is None else {"ready": ready}
    return _Call("POST", f"/swarm/clients/{client_id}/{action}", body)


def _checked_client_id(client_id: str | None) -> str:
    """The given id (checked here, so a bad one fails at construction, not on every begin) or a fresh one."""
    if client_id is None:
        return uuid.uuid4().hex
    if not isinstance(client_id, str) or not re.fullmatch(CLIENT_ID_PATTERN, client_id):
        rule = "1-64 characters of A-Z a-z 0-9 _ . : - starting with a letter or digit"
        raise ConfigError(f"client_id must be {rule}, got {client_id!r}")
    return client_id


def _end_body(reward: float, metadata: Mapping[str, Any] | None) -> JsonDict:
    """Refuse a NaN/inf reward here: JSON cannot carry it and it would poison the batch."""
    if isinstance(reward, bool) or not isinstance(reward, int | float) or not math.isfinite(reward):
        raise InvalidRequest(f"reward must be a finite number, got {reward!r}", param="reward")
    return {"reward": float(reward), "metadata": dict(metadata or {})}


def _token_plan(method: str, which: str | None = None, name: str | None = None) -> _Plan[Any]:
    """The admin's client-token calls: create (returns the secret once), list, revoke."""
    path = "/swarm/tokens" + (f"/{quote(which, safe='')}" if which else "")
    body = parse_object((yield _Call(method, path, {"name": name} if name is not None else None)).response)
    return body if method == "POST" else list(body.get("tokens", []))


def _error_code(response: httpx.Response) -> str | None:
    try:
        body = response.json()
    except ValueError:
        return None
    error = body.get("error") if isinstance(body, dict) else None
    code = error.get("code") if isinstance(error, dict) else None
    return code if isinstance(code, str) else None


def _config_body(config: SupportsModelDump | Mapping[str, Any]) -> JsonDict:
    if isinstance(config, Mapping):
        return dict(config)
    return config.model_dump(mode="json")


# ---- the shared client core -----------------------------------------------------------------


def _backoff_delay_s(attempt: int, base_s: float, rng: random.Random) -> float:
    """Exponential backoff plus up to 10 % jitter, so clients that lost one server together
    do not all come back in the same instant."""
    delay_s = min(base_s * 2.0 ** (attempt - 1), _MAX_BACKOFF_S)
    return delay_s + rng.uniform(0.0, 0.1 * delay_s)


def _checked_url(url: str) -> str:
    parsed = httpx.URL(url)
    if parsed.scheme not in ("http", "https") or not parsed.host:
        raise ConfigError(f"server url must look like http://HOST:PORT, got {url!r}")
    return url.rstrip("/")


class _ClientCore:
    """Settings, headers and retry policy shared by both twins; no I/O."""

    def __init__(
        self,
        url: str,
        token: str | None,
        *,
        client_id: str | None,
        timeout_s: float,
        retries: int,
        backoff_s: float,
    ) -> None:
        self.url = _checked_url(url)
        self.client_id = _checked_client_id(client_id)
        self.timeout_s = timeout_s
        self.retries = max(1, retries)  # attempts per request before ServerOffline
        self.backoff_s = backoff_s
        self._token = token if token is not None else os.environ.get(TOKEN_ENV)
        self._rng = random.Random()

    def __repr__(self) -> str:  # never show the token
        return f"{type(self).__name__}(url={self.url!r}, client_id={self.client_id!r})"

    def _http_options(self) -> dict[str, Any]:
        headers = {"X-AgentJet-Client": self.client_id}
        if self._token:
            headers["Authorization"] = f"Bearer {self._token}"
        return {"base_url": self.url, "headers": headers, "timeout": self.timeout_s}

    def _reply(self, response: httpx.Response, attempt: int) -> _Reply:
        log.debug(
            "%s %s -> %d attempt=%d", response.request.method, response.request.url.path, response.status_code, attempt
        )
        if response.status_code == 401 and not self._token:
            log.warning("server refused a request and no token was given: pass token= or set %s", TOKEN_ENV)
        return _Reply(response, attempt)

    def _refusal_delay_s(self, call: _Call, response: httpx.Response, attempt: int) -> float | None:
        """Seconds before retrying a transient refusal (nothing was done); None to hand the reply back."""
        if response.status_code not in (503, 507) or attempt >= self.retries:
            return None
        code = _error_code(response)
        if code not in _RETRIED_CODES:
            return None
        delay_s = _backoff_delay_s(attempt, self.backoff_s, self._rng)
        log.warning("server refused call=%s %s code=%s, retrying attempt=%d/%d delay_s=%.2f",
                    call.method, call.path, code, attempt, self.retries, delay_s)  # fmt: skip
        return delay_s

    def _retry_delay_s(self, call: _Call, attempt: int, exc: httpx.TransportError) -> float:
        """How long to wait before the next attempt; ServerOffline once attempts run out."""
        reason = str(exc) or type(exc).__name__
        if attempt >= self.retries:
            raise ServerOffline(f"server at {self.url} is not reachable ({reason}) after {attempt} attempt(s)") from exc
        delay_s = _backoff_delay_s(attempt, self.backoff_s, self._rng)
        log.warning(
            "server unreachable, retrying call=%s %s attempt=%d/%d delay_s=%.2f error=%s",
            call.method,
            call.path,
            attempt,
            self.retries,
            delay_s,
            reason,
        )
        return delay_s


@dataclass(eq=False)
class _EpisodeCore:
    """What the server handed out for one episode, and whether it is still open."""

    episode_id: str
    base_url: str
    api_key: str = field(repr=False)
    expires_at: float
    task_id: str
    kind: str
    agent: str | None = None
    _status: str = field(default="open", init=False, repr=False)

    @property
    def is_closed(self) -> bool:
        return self._status != "open"

    @property
    def status(self) -> str:
        """`open`, or how it closed as far as this client knows (ended, aborted, reclaimed...)."""
        return self._status

    def _end(self, reward: float, metadata: Mapping[str, Any] | None) -> _Plan[JsonDict]:
        if self.is_closed:
            raise EpisodeClosed(f"episode {self.episode_id} is already {self._status}", status=self._status)
        try:
            result = yield from _end_plan(self.episode_id, _end_body(reward, metadata))
        except EpisodeClosed as exc:
            self._status = exc.status
            raise
        self._status = "ended"
        return result

    def _abort(self) -> _Plan[None]:
        """Abort is idempotent: an episode already closed (here or on the server) stays closed."""
        if self.is_closed:
            return
        try:
            yield from _one_call(_Call("POST", f"{_episode_path(self.episode_id)}/abort"))
        except EpisodeClosed as exc:
            log.info("abort: episode already closed id=%s status=%s", self.episode_id, exc.status)
            self._status = exc.status
            return
        self._status = "aborted"

    def _warning(self) -> str:
        return (
            f"episode {self.episode_id} left its `with` block without end(reward=...); "
            "it was aborted and no reward was reported"
        )


def _episode_fields(body: JsonDict, task_id: str, kind: str, agent: str | None) -> JsonDict:
    """Check a begin reply has what an agent needs before handing it out."""
    missing = [k for k in ("episode_id", "base_url", "api_key", "expires_at") if k not in body]
    if missing:
        raise AgentJetError(f"server's begin-episode reply lacks {', '.join(missing)}")
    return {
        "episode_id": str(body["episode_id"]),
        "base_url": str(body["base_url"]),
        "api_key": str(body["api_key"]),
        "expires_at": float(body["expires_at"]),
        "task_id": str(body.get("task_id", task_id)),
        "kind": str(body.get("kind", kind)),
        "agent": body.get("agent", agent),
    }


# ---- the blocking twin ----------------------------------------------------------------------


@dataclass(eq=False)
class Episode(_EpisodeCore):
    """One open episode; point an OpenAI client at `base_url` with `api_key`, then `end()`."""

    _client: SwarmClient = field(repr=False, kw_only=True)

    def end(self, reward: float, metadata: Mapping[str, Any] | None = None) -> JsonDict:
        """Report the reward and close the episode; its calls become training data (train kind)."""
        return self._client._run(self._end(reward, metadata))

    def abort(self) -> None:
        """Close the episode without a reward; its calls are dropped."""
        self._client._run(self._abort())


class _EpisodeScope:
    """`with client.episode(...)`: abort on error (and re-raise), abort with a warning if
    the block forgot to report a reward."""

    def __init__(self, client: SwarmClient, task_id: str, kind: EpisodeKindName, agent: str | None) -> None:
        self._client, self._args = client, (task_id, kind, agent)
        self._episode: Episode | None = None

    def __enter__(self) -> Episode:
        self._episode = self._client.begin_episode(*self._args)
        return self._episode

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        episode = self._episode
        if episode is None or (exc is None and episode.is_closed):
            return
        if exc is not None:
            try:
                episode.abort()
            except AgentJetError as err:  # never hide the block's own error behind ours
                log.warning("could not abort episode id=%s after an error: %s", episode.episode_id, err)
            return
        warnings.warn(episode._warning(), stacklevel=2)
        episode.abort()


class SwarmClient(_ClientCore):
    """Blocking client for one swarm server. Thread-safe as httpx.Client is.

    `retries` is the number of attempts per request on transport errors (connection refused,
    dropped, timed out) before `ServerOffline`; HTTP error replies are never retried.
    """

    def __init__(
        self,
        url: str,
        token: str | None = None,
        *,
        client_id: str | None = None,
        timeout_s: float = 30.0,
        retries: int = 5,
        backoff_s: float = 0.2,
    ) -> None:
        super().__init__(url, token, client_id=client_id, timeout_s=timeout_s, retries=retries, backoff_s=backoff_s)
        self._http = httpx.Client(**self._http_options())

    def _send(self, call: _Call) -> _Reply:
        attempt = 1
        while True:
            try:
                response = self._http.request(call.method, call.path, json=call.body)
            except httpx.TransportError as exc:
                time.sleep(self._retry_delay_s(call, attempt, exc))
            else:
                delay_s = self._refusal_delay_s(call, response, attempt)
                if delay_s is None:
                    return self._reply(response, attempt)
                time.sleep(delay_s)
            attempt += 1

    def _run(self, plan: _Plan[T]) -> T:
        try:
            call = next(plan)
            while True:
                call = plan.send(self._send(call))
        except StopIteration as done:
            return cast(T, done.value)

    def episode(self, task_id: str, *, kind: EpisodeKindName = "train", agent: str | None = None) -> _EpisodeScope:
        """Begin an episode for a `with` block (see the module docstring)."""
        return _EpisodeScope(self, task_id, kind, agent)

    def begin_episode(self, task_id: str, kind: EpisodeKindName = "train", agent: str | None = None) -> Episode:
        """Begin an episode you close yourself with `end()` or `abort()`. A begin retried after
        a lost reply may leave an unused episode behind; the server reclaims it when idle."""
        body = self._run(_one_call(_begin_call(task_id, kind, agent, self.client_id)))
        return Episode(**_episode_fields(body, task_id, kind, agent), _client=self)

    def get_episode(self, episode_id: str) -> JsonDict:
        return self._run(_one_call(_Call("GET", _episode_path(episode_id))))

    def status(self) -> JsonDict:
        return self._run(_one_call(_Call("GET", "/swarm/status")))

    def request_update(self, ready: bool = True) -> JsonDict:
        """Ask for the next update (`any_client`), or agree to it (`all_clients`); `ready=False`
        withdraws. One request asks for one update: it is spent when a batch is trained."""
        return self._run(_one_call(_client_call(self.client_id, "update", ready)))

    def heartbeat(self) -> JsonDict:
        """Stay active between episodes (active = an open episode or seen within the idle timeout)."""
        return self._run(_one_call(_client_call(self.client_id, "heartbeat")))

    def configure(self, config: SupportsModelDump | Mapping[str, Any]) -> JsonDict:
        """Send a training config; returns the config the server accepted."""
        body = self._run(_one_call(_Call("PUT", "/swarm/config", _config_body(config))))
        return dict(body.get("config", body))

    def start_engine(self) -> JsonDict:
        return self._run(_one_call(_Call("POST", "/swarm/engine/start")))

    def stop_engine(self) -> JsonDict:
        return self._run(_one_call(_Call("POST", "/swarm/engine/stop")))

    def health(self) -> JsonDict:
        return self._run(_one_call(_Call("GET", "/health")))

    def wait_ready(self, timeout_s: float = 120.0) -> JsonDict:
        """Block until episodes can begin (`GET /ready` is 200); EngineNotReady after `timeout_s`."""
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                return self._run(_one_call(_Call("GET", "/ready")))
            except (EngineNotReady, ServerOffline):
                if time.monotonic() > deadline:
                    raise
            time.sleep(_READY_POLL_S)

    def create_token(self, name: str) -> JsonDict:
        """Admin: issue a client token named `name`; the reply's `token` is its secret (shown once)."""
        return cast(JsonDict, self._run(_token_plan("POST", name=name)))

    def list_tokens(self) -> list[JsonDict]:
        """Admin: the issued client tokens (never their secrets)."""
        return cast(list[JsonDict], self._run(_token_plan("GET")))

    def revoke_token(self, which: str) -> list[JsonDict]:
        """Admin: revoke a client token by id, or every live one of a name."""
        return cast(list[JsonDict], self._run(_token_plan("DELETE", which)))

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> SwarmClient:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


# ---- the asyncio twin -----------------------------------------------------------------------


@dataclass(eq=False)
class AsyncEpisode(_EpisodeCore):
    """`Episode` for asyncio: `await ep.end(reward)`, `await ep.abort()`."""

    _client: AsyncSwarmClient = field(repr=False, kw_only=True)

    async def end(self, reward: float, metadata: Mapping[str, Any] | None = None) -> JsonDict:
        """Report the reward and close the episode; its calls become training data (train kind)."""
        return await self._client._run(self._end(reward, metadata))

    async def abort(self) -> None:
        """Close the episode without a reward; its calls are dropped."""
        await self._client._run(self._abort())


class _AsyncEpisodeScope:
    """`async with client.episode(...)`, with the same rules as the blocking scope."""

    def __init__(self, client: AsyncSwarmClient, task_id: str, kind: EpisodeKindName, agent: str | None) -> None:
        self._client, self._args = client, (task_id, kind, agent)
        self._episode: AsyncEpisode | None = None

    async def __aenter__(self) -> AsyncEpisode:
        self._episode = await self._client.begin_episode(*self._args)
        return self._episode

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        episode = self._episode
        if episode is None or (exc is None and episode.is_closed):
            return
        if exc is not None:
            try:
                await episode.abort()
            except AgentJetError as err:  # never hide the block's own error behind ours
                log.warning("could not abort episode id=%s after an error: %s", episode.episode_id, err)
            return
        warnings.warn(episode._warning(), stacklevel=2)
        await episode.abort()


class AsyncSwarmClient(_ClientCore):
    """asyncio twin of `SwarmClient`: the same methods, as coroutines."""

    def __init__(
        self,
        url: str,
        token: str | None = None,
        *,
        client_id: str | None = None,
        timeout_s: float = 30.0,
        retries: int = 5,
        backoff_s: float = 0.2,
    ) -> None:
        super().__init__(url, token, client_id=client_id, timeout_s=timeout_s, retries=retries, backoff_s=backoff_s)
        self._http = httpx.AsyncClient(**self._http_options())

    async def _send(self, call: _Call) -> _Reply:
        attempt = 1
        while True:
            try:
                response = await self._http.request(call.method, call.path, json=call.body)
            except httpx.TransportError as exc:
                await asyncio.sleep(self._retry_delay_s(call, attempt, exc))
            else:
                delay_s = self._refusal_delay_s(call, response, attempt)
                if delay_s is None:
                    return self._reply(response, attempt)
                await asyncio.sleep(delay_s)
            attempt += 1

    async def _run(self, plan: _Plan[T]) -> T:
        try:
            call = next(plan)
            while True:
                call = plan.send(await self._send(call))
        except StopIteration as done:
            return cast(T, done.value)

    def episode(self, task_id: str, *, kind: EpisodeKindName = "train", agent: str | None = None) -> _AsyncEpisodeScope:
        """Begin an episode for an `async with` block."""
        return _AsyncEpisodeScope(self, task_id, kind, agent)

    async def begin_episode(
        self, task_id: str, kind: EpisodeKindName = "train", agent: str | None = None
    ) -> AsyncEpisode:
        """Begin an episode you close yourself with `end()` or `abort()`."""
        body = await self._run(_one_call(_begin_call(task_id, kind, agent, self.client_id)))
        return AsyncEpisode(**_episode_fields(body, task_id, kind, agent), _client=self)

    async def get_episode(self, episode_id: str) -> JsonDict:
        return await self._run(_one_call(_Call("GET", _episode_path(episode_id))))

    async def status(self) -> JsonDict:
        return await self._run(_one_call(_Call("GET", "/swarm/status")))

    async def request_update(self, ready: bool = True) -> JsonDict:
        """Ask for (or agree to) the next update; `ready=False` withdraws (see `SwarmClient`)."""
        return await self._run(_one_call(_client_call(self.client_id, "update", ready)))

    async def heartbeat(self) -> JsonDict:
        """Stay active between episodes."""
        return await self._run(_one_call(_client_call(self.client_id, "heartbeat")))

    async def configure(self, config: SupportsModelDump | Mapping[str, Any]) -> JsonDict:
        """Send a training config; returns the config the server accepted."""
        body = await self._run(_one_call(_Call("PUT", "/swarm/config", _config_body(config))))
        return dict(body.get("config", body))

    async def start_engine(self) -> JsonDict:
        return await self._run(_one_call(_Call("POST", "/swarm/engine/start")))

    async def stop_engine(self) -> JsonDict:
        return await self._run(_one_call(_Call("POST", "/swarm/engine/stop")))

    async def health(self) -> JsonDict:
        return await self._run(_one_call(_Call("GET", "/health")))

    async def wait_ready(self, timeout_s: float = 120.0) -> JsonDict:
        """Until episodes can begin (`GET /ready` is 200); EngineNotReady after `timeout_s`."""
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                return await self._run(_one_call(_Call("GET", "/ready")))
            except (EngineNotReady, ServerOffline):
                if time.monotonic() > deadline:
                    raise
            await asyncio.sleep(_READY_POLL_S)

    async def create_token(self, name: str) -> JsonDict:
        """Admin: issue a client token named `name`; the reply's `token` is its secret (shown once)."""
        return cast(JsonDict, await self._run(_token_plan("POST", name=name)))

    async def list_tokens(self) -> list[JsonDict]:
        """Admin: the issued client tokens (never their secrets)."""
        return cast(list[JsonDict], await self._run(_token_plan("GET")))

    async def revoke_token(self, which: str) -> list[JsonDict]:
        """Admin: revoke a client token by id, or every live one of a name."""
        return cast(list[JsonDict], await self._run(_token_plan("DELETE", which)))

    async def close(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> AsyncSwarmClient:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()
