"""Collection strategies C1-C5: when the pool of finished episodes makes a training batch (pure).

A strategy looks at the pool (finished train episodes not yet trained, oldest first) and the
clients' update requests, and either waits or returns a `Batch`. Episodes it does not take stay
in the pool for the next step: completed work is never dropped. `skipped` lists complete
groups that carry no signal (C3 only): consumed, not trained, and counted in metrics.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence, Set
from dataclasses import dataclass
from typing import Any, Protocol

from agentjet.core.config import CollectConfig
from agentjet.core.training.advantages import mean_std

__all__ = ["Batch", "CollectionStrategy", "PoolEpisode", "build_strategy", "pool_summary"]

_SHOWN_IN_STATUS = 50  # task groups / client ids listed in the pool summary (counts cover the rest)


@dataclass(frozen=True)
class PoolEpisode:
    seq: int  # journal position: the pool is ordered by it
    episode_id: str
    task_id: str
    reward: float
    client_id: str | None


@dataclass(frozen=True)
class Batch:
    episodes: tuple[PoolEpisode, ...]
    skipped: tuple[PoolEpisode, ...] = ()


class CollectionStrategy(Protocol):
    """Decides when rolling turns into draining. Pure: the same inputs give the same batch."""

    def select(self, pool: Sequence[PoolEpisode], *, active: Set[str], requested: Set[str]) -> Batch | None: ...


def _by_task(pool: Sequence[PoolEpisode]) -> OrderedDict[str, list[PoolEpisode]]:
    groups: OrderedDict[str, list[PoolEpisode]] = OrderedDict()
    for episode in sorted(pool, key=lambda e: e.seq):
        groups.setdefault(episode.task_id, []).append(episode)
    return groups


@dataclass(frozen=True)
class Episodes:
    """C1: the oldest `count` finished episodes."""

    count: int

    def select(self, pool: Sequence[PoolEpisode], *, active: Set[str], requested: Set[str]) -> Batch | None:
        if len(pool) < self.count:
            return None
        return Batch(tuple(sorted(pool, key=lambda e: e.seq)[: self.count]))


@dataclass(frozen=True)
class Tasks:
    """C2: `tasks` task groups with at least `group_size` episodes each (oldest groups first).
    C3 (`informative=True`): only groups whose rewards are not all equal count; complete
    uninformative groups are consumed as `skipped`."""

    tasks: int
    group_size: int
    informative: bool = False

    def select(self, pool: Sequence[PoolEpisode], *, active: Set[str], requested: Set[str]) -> Batch | None:
        chosen: list[PoolEpisode] = []
        skipped: list[PoolEpisode] = []
        groups = 0
        for episodes in _by_task(pool).values():
            if len(episodes) < self.group_size:
                continue
            group = episodes[: self.group_size]
            if self.informative and len({e.reward for e in group}) == 1:
                skipped.extend(group)
                continue
            chosen.extend(group)
            groups += 1
            if groups == self.tasks:
                return Batch(tuple(chosen), tuple(skipped))
        return None


@dataclass(frozen=True)
class AnyClient:
    """C4: as soon as any active client asks for an update, train on everything finished."""

    def select(self, pool: Sequence[PoolEpisode], *, active: Set[str], requested: Set[str]) -> Batch | None:
        if not pool or not (requested & active):
            return None
        return Batch(tuple(sorted(pool, key=lambda e: e.seq)))


@dataclass(frozen=True)
class AllClients:
    """C5: once every active client has agreed, train on everything finished."""

    def select(self, pool: Sequence[PoolEpisode], *, active: Set[str], requested: Set[str]) -> Batch | None:
        if not pool or not active or not active <= requested:
            return None
        return Batch(tuple(sorted(pool, key=lambda e: e.seq)))


def build_strategy(config: CollectConfig, *, group_size: int) -> CollectionStrategy:
    """The one place a config name becomes a strategy."""
    match config.strategy:
        case "episodes":
            return Episodes(config.episodes)
        case "tasks":
            return Tasks(config.tasks, group_size)
        case "informative_tasks":
            return Tasks(config.tasks, group_size, informative=True)
        case "any_client":
            return AnyClient()
        case "all_clients":
            return AllClients()


def pool_summary(
    pool: Sequence[tuple[str, float]],
    *,
    group_size: int,
    trained_through_seq: int,
    active: Sequence[str],
    requested: Sequence[str],
) -> dict[str, Any]:
    """The pool as `GET /swarm/status` shows it: `(task_id, reward)` oldest first -> per-group stats.

    Overflow-safe for any finite rewards (`mean_std`), so no pooled reward can make status fail."""
    rewards: dict[str, list[float]] = {}
    for task_id, reward in pool:
        rewards.setdefault(task_id, []).append(reward)
    groups = []
    for task_id, values in rewards.items():
        mean, std = mean_std(values)
        groups.append(
            {"task_id": task_id, "episodes": len(values), "complete": len(values) >= group_size,
             "reward_mean": mean, "reward_std": std}
        )  # fmt: skip
    return {
        "pooled_episodes": len(pool),
        "group_size": group_size,  # clients schedule GRPO groups of this size (`agentjet client run`)
        "complete_groups": sum(1 for g in groups if g["complete"]),
        "trained_through_seq": trained_through_seq,
        "tasks": len(groups),
        "groups": groups[:_SHOWN_IN_STATUS],
        "clients": {
            "active": len(active),
            "requested": len(requested),
            "active_ids": list(active[:_SHOWN_IN_STATUS]),
            "requested_ids": list(requested[:_SHOWN_IN_STATUS]),
        },
    }
