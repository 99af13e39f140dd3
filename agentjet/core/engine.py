"""The engine owns the episodes and the engine state machine of one swarm server.

Open episodes live here in memory with the calls tracked so far; closing one (end, abort,
reclaim) writes its `EpisodeRecord` to the journal before the caller hears back. Keys are
checked here: a key whose episode is not open is refused however good its signature.
Event-loop only: every method is called from the server's one asyncio loop.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from agentjet.core.backends.base import Backend
from agentjet.core.clients import ClientTracker
from agentjet.core.config import TrainConfig
from agentjet.core.errors import AuthError, EngineNotReady, EpisodeClosed, EpisodeNotFound
from agentjet.core.journal import Journal
from agentjet.core.keys import EpisodeKeySigner
from agentjet.core.types import (
    NEXT_STATES,
    CallRecord,
    EngineState,
    EpisodeKind,
    EpisodeRecord,
    EpisodeStatus,
)

__all__ = ["Engine", "OpenEpisode"]

log = logging.getLogger(__name__)

_SERVING = frozenset({EngineState.ROLLING, EngineState.DRAINING, EngineState.UPDATING})
_RATE_WINDOW_S = 10.0
_CLOSED_MEMORY = 100_000  # closed ids remembered to explain a 401 without a journal lookup


@dataclass
class OpenEpisode:
    """An episode between begin and end; mutated only by the engine."""

    episode_id: str
    task_id: str
    kind: EpisodeKind
    agent: str | None
    client_id: str | None
    created_at: float
    expires_at: float
    policy_version_at_begin: int
    last_active: float
    calls: list[CallRecord] = field(default_factory=list)
    calls_in_flight: int = 0
    next_call_index: int = 0

    def view(self) -> dict[str, Any]:
        return {
            "episode_id": self.episode_id,
            "task_id": self.task_id,
            "kind": str(self.kind),
            "agent": self.agent,
            "status": str(EpisodeStatus.OPEN),
            "reward": None,
            "metadata": {},
            "created_at": self.created_at,
            "expires_at": self.expires_at,
            "last_active": self.last_active,
            "calls_in_flight": self.calls_in_flight,
            "policy_version_at_begin": self.policy_version_at_begin,
            "calls": [c.to_dict() for c in self.calls],
        }


class Engine:
    """Episodes, keys, state machine and live statistics of one server."""

    def __init__(
        self,
        backend: Backend,
        journal: Journal,
        signer: EpisodeKeySigner,
        *,
        idle_timeout_s: float,
        episode_ttl_s: float,
        train_config: TrainConfig | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.backend = backend
        self.journal = journal
        self.signer = signer
        self.idle_timeout_s = idle_timeout_s
        self.episode_ttl_s = episode_ttl_s
        self.train_config = train_config or TrainConfig()
        self.step = 0
        self._clock = clock
        self._state = EngineState.OFFLINE
        self._started_at = clock()
        self._open: dict[str, OpenEpisode] = {}
        self._closed: dict[str, EpisodeStatus] = {}
        journaled = journal.counts()
        self._counts = {
            s: journaled.get(str(s), 0) for s in (EpisodeStatus.ENDED, EpisodeStatus.ABORTED, EpisodeStatus.RECLAIMED)
        }
        self._recent_calls: deque[tuple[float, int]] = deque()
        self._calls_total = 0
        self._tokens_total = 0
        self._clients = ClientTracker(idle_timeout_s)
        # set by the training loop (training_loop.py); the engine only calls/reports them
        self.on_episode_ended: Callable[[EpisodeRecord, int], None] | None = None
        self.on_clients_changed: Callable[[], None] | None = None  # a request came or went, a client left
        self.pool_stats: Callable[[], dict[str, Any]] | None = None
        self.config_guard: Callable[[TrainConfig], None] | None = None  # raises ConfigConflict to refuse
        self.latest_metrics: dict[str, Any] | None = None

    # ---- state machine -------------------------------------------------------------------
    @property
    def state(self) -> EngineState:
        return self._state

    def _move(self, to: EngineState) -> None:
        if to not in NEXT_STATES[self._state]:
            raise EngineNotReady(f"cannot go from {self._state} to {to}", state=str(self._state))
        log.info("engine state %s -> %s", self._state, to)
        self._state = to

    def move(self, to: EngineState) -> None:
        """A legal state move (NEXT_STATES) for the training loop: draining and updating are its to drive."""
        self._move(to)

    def calls_in_flight(self) -> int:
        """Calls still sampling across open episodes: draining waits for this to reach 0."""
        return sum(e.calls_in_flight for e in self._open.values())

    async def start(self) -> EngineState:
        """Boot the backend (once) and start rolling; a no-op when already serving."""
        if self._state in _SERVING or self._state is EngineState.BOOTING:
            return self._state
        self._move(EngineState.BOOTING)
        try:
            await self.backend.start()
        except BaseException:
            self._state = EngineState.OFFLINE
            raise
        if self.state is EngineState.BOOTING:  # a stop may have come in while booting
            self._move(EngineState.ROLLING)
        return self._state

    def stop(self) -> EngineState:
        """Refuse new episodes and calls; open episodes may still end or abort."""
        if self._state is not EngineState.OFFLINE:
            self._move(EngineState.OFFLINE)
        return self._state

    def _require_serving(self) -> None:
        if self._state not in _SERVING:
            raise EngineNotReady(
                f"engine is {self._state}; start it with POST /swarm/engine/start",
                state=str(self._state),
                needed=tuple(str(s) for s in sorted(_SERVING)),
            )

    # ---- episodes ------------------------------------------------------------------------
    def begin_episode(
        self, task_id: str, *, kind: EpisodeKind, agent: str | None, client_id: str | None
    ) -> tuple[OpenEpisode, str]:
        """Open an episode and issue its signed key."""
        self._require_serving()
        now = self._clock()
        episode = OpenEpisode(
            episode_id=f"ep_{uuid.uuid4().hex}",
            task_id=task_id,
            kind=kind,
            agent=agent,
            client_id=client_id,
            created_at=now,
            expires_at=now + self.episode_ttl_s,
            policy_version_at_begin=self.backend.policy_version,
            last_active=now,
        )
        self._open[episode.episode_id] = episode
        self.touch_client(client_id)
        key = self.signer.issue(episode.episode_id, agent, episode.expires_at)
        log.info("episode began id=%s task=%s kind=%s agent=%s", episode.episode_id, task_id, kind, agent)
        return episode, key

    def authorize_call(self, api_key: str | None) -> OpenEpisode:
        """The open episode an episode key names, or AuthError (forged, stale, closed, unknown)."""
        if not api_key:
            raise AuthError("missing episode key: send Authorization: Bearer <api_key from /swarm/episodes>")
        claims = self.signer.verify(api_key, now=self._clock())
        episode = self._open.get(claims.episode_id)
        if episode is None:
            status = self._closed.get(claims.episode_id)
            reason = f"was {status}" if status else "is not open on this server"
            raise AuthError(f"episode {claims.episode_id} {reason}; its key no longer works")
        self._require_serving()
        return episode

    def call_started(self, episode: OpenEpisode) -> int:
        episode.calls_in_flight += 1
        episode.last_active = self._clock()
        index = episode.next_call_index
        episode.next_call_index += 1
        return index

    def call_finished(self, episode: OpenEpisode, records: list[CallRecord]) -> None:
        """Attach finished calls; calls of an episode closed meanwhile are dropped, never trained."""
        episode.calls_in_flight -= 1
        now = self._clock()
        episode.last_active = now
        tokens = sum(len(r.completion_ids) for r in records)
        self._calls_total += 1
        self._tokens_total += tokens
        self._recent_calls.append((now, tokens))
        if self._open.get(episode.episode_id) is not episode:
            log.warning("call finished after episode closed id=%s; dropped", episode.episode_id)
            return
        episode.calls.extend(records)

    def call_failed(self, episode: OpenEpisode) -> None:
        episode.calls_in_flight -= 1
        episode.last_active = self._clock()

    def _take_open(self, episode_id: str) -> OpenEpisode:
        episode = self._open.pop(episode_id, None)
        if episode is not None:
            return episode
        status = self._closed.get(episode_id)
        if status is not None:
            code = "episode_reclaimed" if status is EpisodeStatus.RECLAIMED else "episode_closed"
            raise EpisodeClosed(f"episode {episode_id} was already {status}", status=code)
        raise EpisodeNotFound(f"no open episode {episode_id}")

    async def _close(
        self, episode_id: str, status: EpisodeStatus, reward: float | None, metadata: dict[str, Any]
    ) -> tuple[EpisodeRecord, int]:
        episode = self._take_open(episode_id)  # synchronous: a second close now fails fast
        self._closed[episode_id] = status
        if len(self._closed) > _CLOSED_MEMORY:
            self._closed.pop(next(iter(self._closed)))
        record = EpisodeRecord(
            episode_id=episode.episode_id,
            task_id=episode.task_id,
            kind=episode.kind,
            agent=episode.agent,
            status=status,
            reward=reward,
            metadata=metadata,
            created_at=episode.created_at,
            closed_at=self._clock(),
            policy_version_at_begin=episode.policy_version_at_begin,
            calls=tuple(sorted(episode.calls, key=lambda c: (c.call_index, c.choice_index))),
            client_id=episode.client_id,
        )
        try:
            seq = await asyncio.to_thread(self.journal.append, record)  # durable before we answer
        except BaseException:
            log.error("journal write failed id=%s; the episode stays open so its client can retry", episode_id)
            self._closed.pop(episode_id, None)
            self._open[episode_id] = episode
            raise
        self._counts[status] += 1
        if status is not EpisodeStatus.RECLAIMED:  # a reclaim is the janitor's doing, not the client's
            self.touch_client(episode.client_id)
        log.info("episode %s id=%s reward=%s calls=%d seq=%d", status, episode_id, reward, len(record.calls), seq)
        return record, seq

    async def end_episode(self, episode_id: str, reward: float, metadata: dict[str, Any]) -> EpisodeRecord:
        record, seq = await self._close(episode_id, EpisodeStatus.ENDED, reward, metadata)
        if self.on_episode_ended is not None:
            self.on_episode_ended(record, seq)  # after the journal write: the pool only holds durable episodes
        return record

    async def abort_episode(self, episode_id: str) -> EpisodeRecord:
        record, _ = await self._close(episode_id, EpisodeStatus.ABORTED, None, {})
        return record

    async def reclaim_idle_episodes(self) -> list[str]:
        """Close episodes idle past the timeout (or past their key's expiry) with no call running."""
        now = self._clock()
        stale = [
            e.episode_id
            for e in self._open.values()
            if e.calls_in_flight == 0 and (now - e.last_active > self.idle_timeout_s or now > e.expires_at)
        ]
        for episode_id in stale:
            log.warning(
                "episode reclaimed id=%s idle>%.0fs; its calls will not be trained", episode_id, self.idle_timeout_s
            )
            await self._close(
                episode_id, EpisodeStatus.RECLAIMED, None, {"reclaimed_after_idle_s": self.idle_timeout_s}
            )
        self.active_clients()  # also a sweep of clients gone idle: that may unblock C5
        return stale

    async def get_episode(self, episode_id: str) -> dict[str, Any]:
        episode = self._open.get(episode_id)
        if episode is not None:
            return episode.view()
        record = await asyncio.to_thread(self.journal.get, episode_id)
        if record is None:
            raise EpisodeNotFound(f"no episode {episode_id}")
        return record.to_dict()

    # ---- config and status ---------------------------------------------------------------
    def set_train_config(self, config: TrainConfig) -> TrainConfig:
        """Replace the training config; the training loop's guard may refuse it (ConfigConflict, 409)."""
        if self.config_guard is not None:
            self.config_guard(config)
        self.train_config = config
        log.info("training config replaced: %s", config.model_dump_json())
        return config

    # ---- clients (C4/C5) -----------------------------------------------------------------
    def touch_client(self, client_id: str | None) -> None:
        """The client is alive (begin, end, heartbeat): active for another idle timeout."""
        if client_id:
            self._clients.seen(client_id, self._clock())

    def request_update(self, client_id: str, *, ready: bool) -> dict[str, Any]:
        """Ask for (ready) or withdraw from the next update; wakes the training loop."""
        self._clients.set_ready(client_id, ready, self._clock())
        log.info("client update request id=%s ready=%s", client_id, ready)
        self._clients_changed()
        return self.client_view(client_id)

    def heartbeat(self, client_id: str) -> dict[str, Any]:
        """A client between episodes says it is still there: it stays active (and C5 waits for it)."""
        self.touch_client(client_id)
        return self.client_view(client_id)

    def client_view(self, client_id: str) -> dict[str, Any]:
        active, requested = self.active_clients(), self.update_requests()
        return {
            "client_id": client_id,
            "active": client_id in active,
            "ready": client_id in requested,
            "active_clients": sorted(active),
            "requested_clients": sorted(requested),  # requests of inactive clients are forgotten
        }

    def active_clients(self) -> frozenset[str]:
        """Clients holding an open episode or seen within the idle timeout. Whoever notices a
        client gone idle (status, the loop, the janitor) says so: C5 may no longer be blocked."""
        now, holding = self._clock(), self._holding_clients()
        gone = self._clients.forget_idle(now, holding)
        if gone:
            log.info("clients inactive ids=%s", ",".join(sorted(gone)))
            self._clients_changed()
        return self._clients.active(now, holding)

    def update_requests(self) -> dict[str, int]:
        """Pending update requests (client id -> request number); pass it to `consume_update_requests`."""
        return self._clients.requests()

    def consume_update_requests(self, answered: Mapping[str, int]) -> None:
        """A batch was trained: the requests it answered are spent (one request, one update)."""
        self._clients.consume(answered)

    def _holding_clients(self) -> frozenset[str]:
        return frozenset(e.client_id for e in self._open.values() if e.client_id)

    def _clients_changed(self) -> None:
        if self.on_clients_changed is not None:
            self.on_clients_changed()

    def status(self) -> dict[str, Any]:
        now = self._clock()
        while self._recent_calls and now - self._recent_calls[0][0] > _RATE_WINDOW_S:
            self._recent_calls.popleft()
        window = min(_RATE_WINDOW_S, max(now - self._started_at, 1e-9))
        active = self.active_clients()
        tasks: dict[str, int] = {}
        for e in self._open.values():
            tasks[e.task_id] = tasks.get(e.task_id, 0) + 1
        return {
            "state": str(self._state),
            "policy_version": self.backend.policy_version,
            "step": self.step,
            "model": self.backend.name,
            "uptime_s": now - self._started_at,
            "episodes": {
                "in_flight": len(self._open),
                "finished": self._counts[EpisodeStatus.ENDED],
                "aborted": self._counts[EpisodeStatus.ABORTED],
                "reclaimed": self._counts[EpisodeStatus.RECLAIMED],
            },
            "active_clients": len(active),
            "calls_total": self._calls_total,
            "tokens_total": self._tokens_total,
            "calls_per_s": len(self._recent_calls) / window,
            "tokens_per_s": sum(t for _, t in self._recent_calls) / window,
            "pool": {
                "open_tasks": len(tasks),
                "collect": self.train_config.collect.strategy,
                **(self.pool_stats() if self.pool_stats is not None else {}),
            },
            "latest_metrics": self.latest_metrics,
        }
