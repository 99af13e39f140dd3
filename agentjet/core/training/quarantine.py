"""Episodes refused for training, for good, with the reason: so nothing a client sent poisons the policy.

Three things send an ended train episode here instead of into a step: a reward the current
`reward` range refuses (journaled by an older version or before a range change: `end` refuses
such rewards now), a task group whose advantages are not finite, and a batch whose step the
trainer refused (`NonFiniteStep`: non-finite loss, gradients or weights). The seqs and reasons are
journaled (`Journal.quarantine`), so a restart never pools them again, and counted in the
training health. `Quarantine` is owned by the training loop (event loop; journal writes in a thread).
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
from collections.abc import Iterable, Mapping, Sequence

from agentjet.core.config import RewardConfig
from agentjet.core.episodes.journal import Journal
from agentjet.core.training.health import TrainingHealth
from agentjet.core.types import EpisodeRecord

__all__ = ["Quarantine", "reward_refusal"]

log = logging.getLogger(__name__)


def reward_refusal(reward: float, limits: RewardConfig) -> str | None:
    """The quarantine reason for a reward the range refuses (a short category), else None. Pure."""
    if not math.isfinite(reward):
        return "reward not finite"
    if not limits.min <= reward <= limits.max:
        return f"reward outside [{limits.min:g}, {limits.max:g}]"
    return None


class Quarantine:
    """The quarantined journal seqs of one server, loaded at restore and added to as refusals happen."""

    def __init__(self, journal: Journal, health: TrainingHealth) -> None:
        self.journal = journal
        self.health = health
        self.seqs: set[int] = set()

    async def load(self) -> None:
        self.seqs = set(await asyncio.to_thread(self.journal.quarantined))

    def __contains__(self, seq: int) -> bool:
        return seq in self.seqs

    async def add(self, seqs: Sequence[int], reason: str) -> None:
        """Journal the refusal first (durable), then remember it; the caller drops them from its pool."""
        await asyncio.to_thread(self.journal.quarantine, seqs, reason, at=time.time())
        self.seqs.update(seqs)
        self.health.quarantine(len(seqs), reason)
        log.warning("episodes quarantined count=%d reason=%s seqs=%s", len(seqs), reason, sorted(seqs)[:20])

    @staticmethod
    def unusable_rewards(pool: Mapping[int, EpisodeRecord], limits: RewardConfig) -> dict[str, list[int]]:
        """Reason -> the pooled seqs whose reward the range refuses. Pure."""
        refused: dict[str, list[int]] = {}
        for seq, record in pool.items():
            reason = reward_refusal(record.reward if record.reward is not None else 0.0, limits)
            if reason is not None:
                refused.setdefault(reason, []).append(seq)
        return refused

    @staticmethod
    def nonfinite_groups(task_ids: Iterable[str], advantages: Iterable[float]) -> set[str]:
        """Task groups with a non-finite advantage. Pure."""
        return {t for t, a in zip(task_ids, advantages, strict=True) if not math.isfinite(a)}
