"""The pool: ended train episodes waiting for a step, by journal seq, and the seqs already consumed.

A consumed seq (trained, or skipped by C3) is never pooled again. A restart rebuilds the pool
from the journal minus what the newest checkpoint consumed, so no ended episode is lost and
none is trained twice. Owned by the training loop (event loop only).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from types import MappingProxyType

from agentjet.core.types import EpisodeRecord

__all__ = ["EpisodePool"]


class EpisodePool:
    """Untrained ended train episodes, oldest (lowest seq) first, and the journal seqs consumed."""

    def __init__(self) -> None:
        self._pooled: dict[int, EpisodeRecord] = {}  # journal seq -> ended train episode not yet trained
        self._consumed: set[int] = set()  # journal seqs trained or skipped: never pooled again
        self.trained_through_seq = 0  # the newest seq consumed

    def __len__(self) -> int:
        return len(self._pooled)

    def __contains__(self, seq: object) -> bool:
        return seq in self._pooled

    def is_consumed(self, seq: int) -> bool:
        return seq in self._consumed

    @property
    def consumed(self) -> frozenset[int]:
        return frozenset(self._consumed)

    @property
    def records(self) -> Mapping[int, EpisodeRecord]:
        """The pooled episodes by seq (a read-only view)."""
        return MappingProxyType(self._pooled)

    def oldest_first(self) -> list[tuple[int, EpisodeRecord]]:
        return sorted(self._pooled.items())

    def add(self, seq: int, record: EpisodeRecord) -> None:
        """Pool an ended train episode unless its seq was already consumed."""
        if seq not in self._consumed:
            self._pooled[seq] = record

    def drop(self, seqs: Iterable[int]) -> None:
        """Forget seqs that will never be trained (quarantined); they stay unconsumed."""
        for seq in seqs:
            self._pooled.pop(seq, None)

    def consume(self, seqs: Iterable[int]) -> None:
        """The optimiser holds these now (trained, or skipped): out of the pool, for good."""
        taken = list(seqs)
        for seq in taken:
            self._pooled.pop(seq, None)
            self._consumed.add(seq)
        self.trained_through_seq = max([self.trained_through_seq, *taken])

    def restore(self, consumed: Iterable[int]) -> None:
        """What a checkpoint consumed; call before pooling the journal's ended episodes again."""
        self._consumed = set(consumed)
        self.trained_through_seq = max(self._consumed, default=0)
