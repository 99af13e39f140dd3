"""The GPU check's time budget: every stage asks before it starts and is skipped rather than overrun."""

from __future__ import annotations

import time
from collections.abc import Callable

__all__ = ["SKIPPED_BUDGET", "Budget"]

SKIPPED_BUDGET = "skipped: budget"


class Budget:
    """`total_s` of wall clock from construction; `clock` is injectable for tests."""

    def __init__(self, total_s: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.total_s = total_s
        self._clock = clock
        self._started = clock()

    def elapsed_s(self) -> float:
        return self._clock() - self._started

    def left_s(self) -> float:
        return max(0.0, self.total_s - self.elapsed_s())

    def allows(self, need_s: float) -> bool:
        """Whether a stage expected to take `need_s` still fits."""
        return self.left_s() >= need_s
