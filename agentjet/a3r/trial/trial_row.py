"""`TrialRow`: one trial as the analysis, the confirmation and the report see it (plain data)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["TrialRow"]


@dataclass(frozen=True)
class TrialRow:
    """One trial as the analysis and the report see it."""

    number: int
    kind: str  # search | confirm | baseline
    state: str  # COMPLETE | PRUNED | FAIL | RUNNING | WAITING
    params: dict[str, Any]
    value: float | None
    server: str | None = None
    duration_s: float | None = None
    seed: int | None = None
    void: bool = False  # failed and queued to run again: shown, never counted
    fail_reason: str | None = None
    confirm_of: int | None = None  # confirm/baseline trials: the search trial they confirm
    confirm_index: int | None = None  # confirm/baseline trials: a re-run and its baseline share it (and the seed)
    curve: tuple[tuple[int, float], ...] = ()  # (step, objective) at each eval

    @property
    def counted(self) -> bool:
        """A finished measurement: a COMPLETE trial with a value."""
        return self.state == "COMPLETE" and self.value is not None and not self.void
