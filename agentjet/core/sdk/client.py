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
import time
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, Literal, TypeVar, cast

import httpx

from agentjet.core.errors import (
    AgentJetError,
    EngineNotReady,
    ServerOffline,
)
from agentjet.core.sdk.client_core import ClientCore, EpisodeCore, episode_fields
from agentjet.core.sdk.client_plans import (
    Call,
    Plan,
    Reply,
    SupportsModelDump,
    begin_call,
    client_call,
    config_body,
    episode_path,
    one_call,
    token_plan,
)
from agentjet.core.sdk.client_replies import EpisodeReclaimed, JsonDict

__all__ = ["AsyncEpisode", "AsyncSwarmClient", "Episode", "EpisodeReclaimed", "SwarmClient"]

log = logging.getLogger(__name__)

T = TypeVar("T")
EpisodeKindName = Literal["train", "eval"]

_READY_POLL_S = 0.1


# ---- the blocking twin ----------------------------------------------------------------------


@dataclass(eq=False)
class Episode(EpisodeCore):
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


class SwarmClient(ClientCore):
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

    def _send(self, call: Call) -> Reply:
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

    def _run(self, plan: Plan[T]) -> T:
        try:
            call = next(plan)
            while True:
                call = plan.send(self._send(call))
        except StopIteration as done:
            return cast(T, done.value)

    def episode(self, task_id: str, *, kind: EpisodeKindName = "train", agent: str | None = None) -> _EpisodeScope:
        """Begin an episode for a `with` block (see the module docstring)."""
        return _EpisodeScope(self, task_id, kind, agent)

    def begin_episode(
        self, task_id: str, kind: EpisodeKindName = "train", agent: str | None = None, *, base_model: bool = False
    ) -> Episode:
        """Begin an episode you close yourself with `end()` or `abort()`. A begin retried after
        a lost reply may leave an unused episode behind; the server reclaims it when idle.
        `base_model` (eval only): its calls sample the base weights, not the trained policy."""
        body = self._run(one_call(begin_call(task_id, kind, agent, self.client_id, base_model=base_model)))
        return Episode(**episode_fields(body, task_id, kind, agent), _client=self)

    def get_episode(self, episode_id: str) -> JsonDict:
        return self._run(one_call(Call("GET", episode_path(episode_id))))

    def status(self) -> JsonDict:
        return self._run(one_call(Call("GET", "/swarm/status")))

    def request_update(self, ready: bool = True) -> JsonDict:
        """Ask for the next update (`any_client`), or agree to it (`all_clients`); `ready=False`
        withdraws. One request asks for one update: it is spent when a batch is trained."""
        return self._run(one_call(client_call(self.client_id, "update", ready)))

    def heartbeat(self) -> JsonDict:
        """Stay active between episodes (active = an open episode or seen within the idle timeout)."""
        return self._run(one_call(client_call(self.client_id, "heartbeat")))

    def configure(self, config: SupportsModelDump | Mapping[str, Any]) -> JsonDict:
        """Send a training config; returns the config the server accepted."""
        body = self._run(one_call(Call("PUT", "/swarm/config", config_body(config))))
        return dict(body.get("config", body))

    def start_engine(self) -> JsonDict:
        return self._run(one_call(Call("POST", "/swarm/engine/start")))

    def stop_engine(self) -> JsonDict:
        return self._run(one_call(Call("POST", "/swarm/engine/stop")))

    def health(self) -> JsonDict:
        return self._run(one_call(Call("GET", "/health")))

    def wait_ready(self, timeout_s: float = 120.0) -> JsonDict:
        """Block until episodes can begin (`GET /ready` is 200); EngineNotReady after `timeout_s`."""
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                return self._run(one_call(Call("GET", "/ready")))
            except (EngineNotReady, ServerOffline):
                if time.monotonic() > deadline:
                    raise
            time.sleep(_READY_POLL_S)

    def create_token(self, name: str) -> JsonDict:
        """Admin: issue a client token named `name`; the reply's `token` is its secret (shown once)."""
        return cast(JsonDict, self._run(token_plan("POST", name=name)))

    def list_tokens(self) -> list[JsonDict]:
        """Admin: the issued client tokens (never their secrets)."""
        return cast(list[JsonDict], self._run(token_plan("GET")))

    def revoke_token(self, which: str) -> list[JsonDict]:
        """Admin: revoke a client token by id, or every live one of a name."""
        return cast(list[JsonDict], self._run(token_plan("DELETE", which)))

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> SwarmClient:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


# ---- the asyncio twin -----------------------------------------------------------------------


@dataclass(eq=False)
class AsyncEpisode(EpisodeCore):
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


class AsyncSwarmClient(ClientCore):
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

    async def _send(self, call: Call) -> Reply:
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

    async def _run(self, plan: Plan[T]) -> T:
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
        self, task_id: str, kind: EpisodeKindName = "train", agent: str | None = None, *, base_model: bool = False
    ) -> AsyncEpisode:
        """Begin an episode you close yourself with `end()` or `abort()` (`base_model`: see `SwarmClient`)."""
        body = await self._run(one_call(begin_call(task_id, kind, agent, self.client_id, base_model=base_model)))
        return AsyncEpisode(**episode_fields(body, task_id, kind, agent), _client=self)

    async def get_episode(self, episode_id: str) -> JsonDict:
        return await self._run(one_call(Call("GET", episode_path(episode_id))))

    async def status(self) -> JsonDict:
        return await self._run(one_call(Call("GET", "/swarm/status")))

    async def request_update(self, ready: bool = True) -> JsonDict:
        """Ask for (or agree to) the next update; `ready=False` withdraws (see `SwarmClient`)."""
        return await self._run(one_call(client_call(self.client_id, "update", ready)))

    async def heartbeat(self) -> JsonDict:
        """Stay active between episodes."""
        return await self._run(one_call(client_call(self.client_id, "heartbeat")))

    async def configure(self, config: SupportsModelDump | Mapping[str, Any]) -> JsonDict:
        """Send a training config; returns the config the server accepted."""
        body = await self._run(one_call(Call("PUT", "/swarm/config", config_body(config))))
        return dict(body.get("config", body))

    async def start_engine(self) -> JsonDict:
        return await self._run(one_call(Call("POST", "/swarm/engine/start")))

    async def stop_engine(self) -> JsonDict:
        return await self._run(one_call(Call("POST", "/swarm/engine/stop")))

    async def health(self) -> JsonDict:
        return await self._run(one_call(Call("GET", "/health")))

    async def wait_ready(self, timeout_s: float = 120.0) -> JsonDict:
        """Until episodes can begin (`GET /ready` is 200); EngineNotReady after `timeout_s`."""
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                return await self._run(one_call(Call("GET", "/ready")))
            except (EngineNotReady, ServerOffline):
                if time.monotonic() > deadline:
                    raise
            await asyncio.sleep(_READY_POLL_S)

    async def create_token(self, name: str) -> JsonDict:
        """Admin: issue a client token named `name`; the reply's `token` is its secret (shown once)."""
        return cast(JsonDict, await self._run(token_plan("POST", name=name)))

    async def list_tokens(self) -> list[JsonDict]:
        """Admin: the issued client tokens (never their secrets)."""
        return cast(list[JsonDict], await self._run(token_plan("GET")))

    async def revoke_token(self, which: str) -> list[JsonDict]:
        """Admin: revoke a client token by id, or every live one of a name."""
        return cast(list[JsonDict], await self._run(token_plan("DELETE", which)))

    async def close(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> AsyncSwarmClient:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()
