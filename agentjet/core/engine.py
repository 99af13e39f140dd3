"""The engine owns the episodes and the engine state machine of one swarm server.

Open episodes live here in memory with the calls tracked so far; closing one (end, abort,
reclaim) writes its `EpisodeRecord` to the journal before the caller hears back. Keys are
checked here: a key whose episode is not open is refused however good its signature.
Event-loop only: every method is called from the server's one asyncio loop.

Least privilege: each episode belongs to the principal that began it (the admin, or one client
token); a client token may end, abort and read only its own. While the training loop drains for
a hot-load, new calls wait at the door (`admit_call`) so that every call is sampled under one
policy version; `end` waits for the episode's running calls, so a call the agent received is
never left out of its record.

Its parts: the state machine and the door (`engine_states.py`), closing into the journal
(`closed_episodes.py`), the status (`engine_status.py`). The training loop attaches itself
(`attach_training`, `training/seam.py`): the engine calls it, and reads what it publishes.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections.abc import Callable
from typing import Any

from agentjet.core.access.keys import EpisodeKeySigner
from agentjet.core.backends.base import Backend
from agentjet.core.call_stats import CallStats
from agentjet.core.config import TrainConfig
from agentjet.core.engine_states import EngineStates
from agentjet.core.engine_status import engine_status
from agentjet.core.episodes.closed_episodes import ClosedEpisodes
from agentjet.core.episodes.journal import Journal
from agentjet.core.episodes.open_episode import OpenEpisode, check_metadata
from agentjet.core.errors import (
    AuthError,
    EpisodeBusy,
    EpisodeClosed,
    EpisodeNotFound,
    InvalidRequest,
    PermissionDenied,
    RewardRefused,
    TrainingDown,
)
from agentjet.core.training.clients import ClientRoster, ClientTracker
from agentjet.core.training.health import TrainingHealth
from agentjet.core.training.seam import TrainingSeam
from agentjet.core.types import (
    ADMIN,
    CallRecord,
    EngineState,
    EpisodeKind,
    EpisodeRecord,
    EpisodeStatus,
    Principal,
)

__all__ = ["Engine", "OpenEpisode"]

log = logging.getLogger(__name__)


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
        end_wait_s: float = 30.0,
        admission_timeout_s: float = 600.0,
        max_metadata_bytes: int = 64 * 1024,
    ) -> None:
        self.backend = backend
        self.journal = journal
        self.signer = signer
        self.idle_timeout_s = idle_timeout_s
        self.episode_ttl_s = episode_ttl_s
        self.train_config = train_config or TrainConfig()
        self.end_wait_s = end_wait_s
        self.max_metadata_bytes = max_metadata_bytes
        self._clock = clock
        self.states = EngineStates(calls_in_flight=self.calls_in_flight, admission_timeout_s=admission_timeout_s)
        self._open: dict[str, OpenEpisode] = {}
        self._closed = ClosedEpisodes(journal, clock)
        self._calls = CallStats(clock())
        self.clients = ClientRoster(
            ClientTracker(idle_timeout_s), clock=clock, holding=self._holding_clients, on_changed=self._clients_changed
        )
        self._training: TrainingSeam | None = None  # the training loop, once it attached itself
        self.owner_is_live: Callable[[str], bool] = lambda owner: True  # a client token not revoked
        # the serving copy's placement and peak memory ("backend"; the trainer's comes from `training`): /swarm/status
        self.memory_reports: dict[str, Callable[[], dict[str, Any]]] = {}

    # ---- state machine (`engine_states.py`; the training loop drives updating and draining) -----
    @property
    def state(self) -> EngineState:
        return self.states.state

    def calls_in_flight(self) -> int:
        """Calls still sampling across open episodes: draining waits for this to reach 0."""
        return sum(e.calls_in_flight for e in self._open.values())

    async def start(self) -> EngineState:
        """Boot the backend (once) and start rolling; a no-op when already serving."""
        if self.states.is_serving or self.states.state is EngineState.BOOTING:
            return self.state
        self.states.move(EngineState.BOOTING)
        try:
            await self.backend.start()
        except BaseException:
            self.states.boot_failed()
            raise
        if self.state is EngineState.BOOTING:  # a stop may have come in while booting
            self.states.move(EngineState.ROLLING)
        return self.state

    def stop(self) -> EngineState:
        """Refuse new episodes and calls; open episodes may still end or abort."""
        if self.state is not EngineState.OFFLINE:
            self.states.move(EngineState.OFFLINE)
        return self.state

    def now(self) -> float:
        return self._clock()

    @property
    def is_ready(self) -> bool:
        """Whether `begin_episode` can succeed now (the SDK's `wait_ready` polls this via /ready)."""
        return self.states.is_serving

    # ---- the training loop (`training/seam.py`): it publishes these, the engine only reads them -------
    def attach_training(self, training: TrainingSeam) -> None:
        """`training` hears of episode ends, client changes and config PUTs from now on."""
        self._training = training

    @property
    def training(self) -> TrainingSeam | None:
        """None: this server does not train."""
        return self._training

    @property
    def training_health(self) -> TrainingHealth | None:
        return self._training.health if self._training is not None else None

    @property
    def step(self) -> int:
        """The step whose weights are served (0: the base weights)."""
        return self._training.step if self._training is not None else 0

    @property
    def latest_metrics(self) -> dict[str, Any] | None:
        return self._training.latest_metrics if self._training is not None else None

    def _clients_changed(self) -> None:
        if self._training is not None:
            self._training.clients_changed()

    # ---- episodes ------------------------------------------------------------------------
    def begin_episode(
        self,
        task_id: str,
        *,
        kind: EpisodeKind,
        agent: str | None,
        client_id: str | None,
        principal: Principal = ADMIN,
        base_model: bool = False,
    ) -> tuple[OpenEpisode, str]:
        """Open an episode owned by `principal` and issue its signed key; `base_model`: an eval episode whose calls
        sample the base weights beside the policy (never a train one: its samples would not be the policy's)."""
        if base_model and kind is not EpisodeKind.EVAL:
            raise InvalidRequest(
                "base_model is for eval episodes only: the base's samples are not the policy's", param="base_model"
            )
        self.states.require_serving()
        health = self.training_health
        if kind is EpisodeKind.TRAIN and health is not None and health.is_down:
            raise TrainingDown(
                f"training is down on this server ({health.last_error}); train episodes would never be "
                "trained: fix the cause and restart the server (eval episodes still work)",
                state=str(self.state),
            )
        if client_id:
            self.clients.claim(client_id, principal)
        now = self._clock()
        episode = OpenEpisode(
            episode_id=f"ep_{uuid.uuid4().hex}",
            task_id=task_id,
            kind=kind,
            agent=agent,
            client_id=client_id,
            owner=principal.principal_id,
            created_at=now,
            expires_at=now + self.episode_ttl_s,
            policy_version_at_begin=0 if base_model else self.backend.policy_version,
            last_active=now,
            base_model=base_model,
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
            status = self._closed.status_of(claims.episode_id)
            reason = f"was {status}" if status else "is not open on this server"
            raise AuthError(f"episode {claims.episode_id} {reason}; its key no longer works")
        if not self.owner_is_live(episode.owner):
            raise AuthError(f"the client token that began episode {claims.episode_id} was revoked")
        if episode.ending:
            raise EpisodeClosed(f"episode {claims.episode_id} is ending; it accepts no new calls", status="ending")
        self.states.require_serving()
        return episode

    async def admit_call(self, episode: OpenEpisode) -> int:
        """Wait while the engine drains for a hot-load (so the call samples from one policy version), then start it."""
        if not self.states.is_admitting:
            episode.calls_waiting += 1
            try:
                await self.states.wait_at_door()
            finally:
                episode.calls_waiting -= 1
            if self._open.get(episode.episode_id) is not episode or episode.ending:
                raise EpisodeClosed(f"episode {episode.episode_id} closed while its call waited for an update")
        return self.call_started(episode)

    def call_started(self, episode: OpenEpisode) -> int:
        episode.calls_in_flight += 1
        episode.calls_done.clear()
        episode.last_active = self._clock()
        index = episode.next_call_index
        episode.next_call_index += 1
        return index

    def call_finished(self, episode: OpenEpisode, records: list[CallRecord]) -> None:
        """Attach finished calls; calls of an episode aborted or reclaimed meanwhile are dropped, never trained."""
        self._call_over(episode)
        now = episode.last_active
        self._calls.finished(now, sum(len(r.completion_ids) for r in records))
        if any(r.policy_version != self.backend.policy_version for r in records):
            self._calls.straddled_calls += 1  # a hot-load came while it sampled (a drain that timed out)
        if self._open.get(episode.episode_id) is not episode:
            log.warning("call finished after episode closed id=%s; dropped", episode.episode_id)
            return
        episode.calls.extend(records)

    def call_failed(self, episode: OpenEpisode) -> None:
        self._call_over(episode)

    def _call_over(self, episode: OpenEpisode) -> None:
        episode.calls_in_flight -= 1
        episode.last_active = self._clock()
        if episode.calls_in_flight == 0:
            episode.calls_done.set()

    def _open_episode(self, episode_id: str, principal: Principal) -> OpenEpisode | None:
        """The open episode, if `principal` may act on it; PermissionDenied for another's."""
        episode = self._open.get(episode_id)
        if episode is not None and not principal.may_act_for(episode.owner):
            raise PermissionDenied(f"episode {episode_id} belongs to another client token")
        return episode

    def _take_open(self, episode_id: str) -> OpenEpisode:
        episode = self._open.pop(episode_id, None)
        if episode is None:
            self._closed.refuse(episode_id)
        return episode

    async def _close(
        self, episode_id: str, status: EpisodeStatus, reward: float | None, metadata: dict[str, Any]
    ) -> tuple[EpisodeRecord, int]:
        episode = self._take_open(episode_id)  # synchronous: a second close now fails fast
        try:
            record, seq = await self._closed.close(episode, status, reward, metadata)
        except BaseException:
            self._open[episode_id] = episode  # the client can retry
            raise
        if status is not EpisodeStatus.RECLAIMED:  # a reclaim is the janitor's doing, not the client's
            self.touch_client(episode.client_id)
        log.info("episode %s id=%s reward=%s calls=%d seq=%d", status, episode_id, reward, len(record.calls), seq)
        return record, seq

    async def end_episode(
        self, episode_id: str, reward: float, metadata: dict[str, Any], *, principal: Principal = ADMIN
    ) -> EpisodeRecord:
        """Close with a reward once the episode's running calls have finished (EpisodeBusy past `end_wait_s`)."""
        refusal = self.train_config.reward.check(reward)
        if refusal is not None:
            raise RewardRefused(refusal, param="reward")
        check_metadata(metadata, self.max_metadata_bytes)
        episode = self._open_episode(episode_id, principal)
        if episode is not None and episode.calls_in_flight > 0:
            await self._wait_for_calls(episode)
        record, seq = await self._close(episode_id, EpisodeStatus.ENDED, reward, metadata)
        if self._training is not None:
            self._training.episode_ended(record, seq)  # after the journal write: the pool only holds durable episodes
        return record

    async def _wait_for_calls(self, episode: OpenEpisode) -> None:
        """Hold new calls off and wait for the running ones: they belong in the record being closed."""
        episode.ending = True
        try:
            await asyncio.wait_for(episode.calls_done.wait(), self.end_wait_s)
        except TimeoutError:
            raise EpisodeBusy(
                f"episode {episode.episode_id} still has {episode.calls_in_flight} call(s) running after "
                f"{self.end_wait_s:.0f}s; end it once they return"
            ) from None
        finally:
            episode.ending = False

    async def abort_episode(self, episode_id: str, *, principal: Principal = ADMIN) -> EpisodeRecord:
        """Close without a reward; calls still running are dropped (an aborted episode is never trained)."""
        self._open_episode(episode_id, principal)
        record, _ = await self._close(episode_id, EpisodeStatus.ABORTED, None, {})
        return record

    async def reclaim_idle_episodes(self) -> list[str]:
        """Close episodes idle past the timeout (or past their key's expiry) with no call running."""
        now = self._clock()
        stale = [
            e.episode_id
            for e in self._open.values()
            if e.calls_in_flight == 0
            and e.calls_waiting == 0
            and not e.ending
            and (now - e.last_active > self.idle_timeout_s or now > e.expires_at)
        ]
        for episode_id in stale:
            log.warning(
                "episode reclaimed id=%s idle>%.0fs; its calls will not be trained", episode_id, self.idle_timeout_s
            )
            await self._close(
                episode_id, EpisodeStatus.RECLAIMED, None, {"reclaimed_after_idle_s": self.idle_timeout_s}
            )
        self.clients.active()  # also a sweep of clients gone idle: that may unblock C5
        return stale

    async def get_episode(self, episode_id: str, *, principal: Principal = ADMIN) -> dict[str, Any]:
        episode = self._open_episode(episode_id, principal)
        if episode is not None:
            return episode.view()
        record = await asyncio.to_thread(self.journal.get, episode_id)
        if record is None:
            raise EpisodeNotFound(f"no episode {episode_id}")
        if not principal.may_act_for(record.owner or ADMIN.principal_id):
            raise PermissionDenied(f"episode {episode_id} belongs to another client token")
        return record.to_dict()

    # ---- config and status ---------------------------------------------------------------
    def set_train_config(self, config: TrainConfig) -> TrainConfig:
        """Replace the training config; the training loop's guard may refuse it (ConfigConflict, 409)."""
        if self._training is not None:
            self._training.check_config(config)
        self.train_config = config
        log.info("training config replaced: %s", config.model_dump_json())
        if self._training is not None:
            self._training.config_changed()
        return config

    # ---- clients (C4/C5): `self.clients` ---------------------------------------------------
    def touch_client(self, client_id: str | None) -> None:
        self.clients.touch(client_id)

    def _holding_clients(self) -> frozenset[str]:
        return frozenset(e.client_id for e in self._open.values() if e.client_id)

    def status(self, principal: Principal = ADMIN) -> dict[str, Any]:
        """Engine state, episodes, calls, pool and training health (`engine_status.py`)."""
        return engine_status(self, principal)

    def open_episodes(self) -> list[OpenEpisode]:
        return list(self._open.values())

    def closed_counts(self) -> dict[str, int]:
        """Closed episodes by status since the journal began: ended, aborted, reclaimed."""
        return self._closed.counts()

    @property
    def call_stats(self) -> CallStats:
        return self._calls
