"""One episode of a task family on its servers: begin one episode per server, run the family, end each with its
reward, or abort them all.

`EpisodePlayer` is the one place where an item becomes server episodes, for `agentjet client run` (`runner.py`,
several servers, Ctrl-C) and for the rounds of `bench learn`, `bench learn-check` and campaign trials
(`rounds.py`, one policy server). Every episode it begins ends up ended or aborted; what it wrote on an ended
episode (the outcome's metadata, made JSON-safe) comes back in the `EpisodeResult`. Which failures count as a
broken episode (reported as an error) rather than a bug (raised, after the abort) is the caller's `broken`.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from agentjet.core import SwarmClient
from agentjet.tasks.base import Endpoint, Outcome, TaskFamily, TaskItem
from agentjet.tasks.play.swarm_side import OpenEpisodes

__all__ = ["EpisodePlayer", "EpisodeResult"]


@dataclass(frozen=True)
class EpisodeResult:
    """How one scheduled episode went: rewards per server (ended), an error (aborted), or neither (skipped).

    `metadata` is what was written on the ended episodes (the outcome's, JSON-safe)."""

    kind: str
    rewards: Mapping[str, float] | None = None
    error: str | None = None
    interrupted: bool = False
    metadata: Mapping[str, Any] = field(default_factory=dict)


class EpisodePlayer:
    """Plays items of `family` on `clients` (server name -> SwarmClient, the family's servers). Thread-safe.

    `episodes` is the ledger of the open ones (`OpenEpisodes.abort_all` stops the player)."""

    def __init__(
        self,
        family: TaskFamily,
        clients: Mapping[str, SwarmClient],
        *,
        broken: tuple[type[Exception], ...] = (Exception,),
        base_model: bool = False,  # eval episodes are played by the base weights, not the trained policy
    ) -> None:
        self.family, self.clients, self._broken = family, dict(clients), broken
        self.base_model = base_model
        self.servers = tuple(self.clients)
        self.episodes = OpenEpisodes()

    def play(self, item: TaskItem, kind: str, *, on_begun: Callable[[], None] | None = None) -> EpisodeResult:
        """One episode of `item` (kind `train` or `eval`) on every server. A failure of a `broken` type is an
        error result (a failed begin reads `begin failed: ...`); any other is raised once the episodes are aborted.
        `on_begun` is called once the begin is settled (begun, failed or skipped), before the agent runs.
        """
        try:
            begun = self.episodes.begin(self.clients, item.task_id, kind, self.family.name, base_model=self.base_model)
        except self._broken as exc:
            return EpisodeResult(kind, error=f"begin failed: {describe(exc)}")
        finally:
            if on_begun is not None:
                on_begun()
        if begun is None:  # stopping: never begun
            return EpisodeResult(kind)
        try:
            endpoints = {name: Endpoint(ep.base_url, ep.api_key) for name, ep in begun.items()}
            outcome = self.family.run(item, endpoints)
            rewards = checked_rewards(outcome, self.servers)
            metadata = _json_safe(outcome.metadata)
            for name, episode in begun.items():
                episode.end(rewards[name], metadata)
        except BaseException as exc:  # the family's code is arbitrary: any failure aborts the episode
            self.episodes.abort(begun.values())
            if not isinstance(exc, self._broken):
                raise
            if self.episodes.stopping:
                return EpisodeResult(kind, interrupted=True)
            return EpisodeResult(kind, error=describe(exc))
        finally:
            self.episodes.forget(begun.values())
        return EpisodeResult(kind, rewards=rewards, metadata=metadata)


def describe(exc: BaseException) -> str:
    """`TypeName: message`, how a failed episode is reported."""
    return f"{type(exc).__name__}: {exc}"


def checked_rewards(outcome: object, servers: tuple[str, ...]) -> dict[str, float]:
    """The Outcome's rewards, checked: one finite number per server the family names."""
    if not isinstance(outcome, Outcome):
        raise TypeError(f"run() must return an Outcome, got {type(outcome).__name__}")
    if set(outcome.rewards) != set(servers):
        raise ValueError(f"Outcome rewards name {sorted(outcome.rewards)}, the family's servers are {list(servers)}")
    rewards = {name: outcome.rewards[name] for name in servers}
    for name, reward in rewards.items():
        if isinstance(reward, bool) or not isinstance(reward, int | float) or not math.isfinite(reward):
            raise ValueError(f"reward for {name!r} must be a finite number, got {reward!r}")
    return {name: float(reward) for name, reward in rewards.items()}


def _json_safe(metadata: Mapping[str, Any]) -> dict[str, Any]:
    safe: dict[str, Any] = json.loads(json.dumps(dict(metadata), default=str))
    return safe
