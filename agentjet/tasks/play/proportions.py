"""Confidence intervals for success rates (accuracy, win rate) and their change. Pure, no numpy.

Wilson's score interval for one proportion, and Newcombe's hybrid score interval (method 10)
for the difference of two independent proportions: both behave at 0 and 1 successes, where the
textbook Wald interval collapses to a point.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

__all__ = ["Rate", "difference_ci", "wilson"]

Z95 = 1.959963984540054


@dataclass(frozen=True)
class Rate:
    successes: int
    trials: int

    def __post_init__(self) -> None:
        if self.trials < 1 or not 0 <= self.successes <= self.trials:
            raise ValueError(f"need 0 <= successes <= trials and trials >= 1, got {self.successes}/{self.trials}")

    @property
    def value(self) -> float:
        return self.successes / self.trials


def wilson(rate: Rate, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval of a proportion."""
    n, p = rate.trials, rate.value
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def difference_ci(after: Rate, before: Rate, z: float = Z95) -> tuple[float, float]:
    """Newcombe's interval for after - before (independent samples); excludes 0 = a real change."""
    l1, u1 = wilson(after, z)
    l2, u2 = wilson(before, z)
    d = after.value - before.value
    low = d - math.sqrt((after.value - l1) ** 2 + (u2 - before.value) ** 2)
    high = d + math.sqrt((u1 - after.value) ** 2 + (before.value - l2) ** 2)
    return max(-1.0, low), min(1.0, high)
