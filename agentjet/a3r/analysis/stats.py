"""Confidence intervals for campaign results: a mean, and the difference of two means. Pure, no I/O.

Student t intervals, not the bootstrap: a confirmation has 2-5 re-runs, where a percentile
bootstrap interval is far too narrow (at n=3 it covers the mean about 80% of the time, not 95%),
while the t interval is exact for normal noise at any n >= 2. Two groups use Welch's interval
(no equal-variance assumption). One value gives no interval (`low`/`high` are None).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

__all__ = ["CONFIDENCE", "Interval", "difference_interval", "mean_interval", "t_quantile"]

CONFIDENCE = 0.95
_GRID = 4001  # integration points of the t density (Simpson): quantiles to ~1e-6


@dataclass(frozen=True)
class Interval:
    """A mean (or a difference of means) with its two-sided confidence interval.

    `low`/`high` are None when the data cannot give an interval (fewer than two values).
    """

    mean: float
    low: float | None
    high: float | None
    n: int
    sd: float = 0.0

    @property
    def known(self) -> bool:
        return self.low is not None and self.high is not None

    def excludes(self, value: float) -> bool:
        """The interval lies wholly on one side of `value` (never true without an interval)."""
        if self.low is None or self.high is None:
            return False
        return self.low > value or self.high < value

    def above(self, value: float) -> bool:
        return self.low is not None and self.low > value

    def below(self, value: float) -> bool:
        return self.high is not None and self.high < value

    def describe(self, digits: int = 3) -> str:
        """`0.612 [0.581, 0.643] (n=3)`, or `0.612 (n=1, no interval)`."""
        if self.low is None or self.high is None:
            return f"{self.mean:.{digits}g} (n={self.n}, no interval)"
        return f"{self.mean:.{digits}g} [{self.low:.{digits}g}, {self.high:.{digits}g}] (n={self.n})"


def _t_cdf(x: float, df: float) -> float:
    """P(T <= x) for Student's t with `df` degrees of freedom, by Simpson's rule on [0, |x|]."""
    if x == 0:
        return 0.5
    log_norm = math.lgamma((df + 1) / 2) - math.lgamma(df / 2) - 0.5 * math.log(df * math.pi)
    grid = np.linspace(0.0, abs(x), _GRID)
    density = np.exp(log_norm - (df + 1) / 2 * np.log1p(grid * grid / df))
    step = grid[1] - grid[0]
    area = step / 3 * (density[0] + density[-1] + 4 * density[1:-1:2].sum() + 2 * density[2:-1:2].sum())
    return 0.5 + math.copysign(float(area), x)


@lru_cache(maxsize=256)
def t_quantile(p: float, df: float) -> float:
    """The `p` quantile of Student's t (df may be fractional, as Welch's is). Bisection on the CDF."""
    if not 0 < p < 1 or df <= 0:
        raise ValueError(f"need 0 < p < 1 and df > 0, got p={p}, df={df}")
    if p < 0.5:
        return -t_quantile(1 - p, df)
    low, high = 0.0, 1.0
    while _t_cdf(high, df) < p:
        high *= 2
    for _ in range(60):
        mid = (low + high) / 2
        low, high = (mid, high) if _t_cdf(mid, df) < p else (low, mid)
    return (low + high) / 2


def _clean(values: Sequence[float]) -> list[float]:
    return [float(v) for v in values if v is not None and math.isfinite(float(v))]


def mean_interval(values: Sequence[float], confidence: float = CONFIDENCE) -> Interval:
    """The mean of `values` with its t interval (ValueError on no finite value)."""
    data = _clean(values)
    if not data:
        raise ValueError("no finite values to average")
    n = len(data)
    mean = sum(data) / n
    if n < 2:
        return Interval(mean, None, None, n)
    sd = math.sqrt(sum((v - mean) ** 2 for v in data) / (n - 1))
    half = t_quantile(0.5 + confidence / 2, n - 1) * sd / math.sqrt(n)
    return Interval(mean, mean - half, mean + half, n, sd)


def difference_interval(a: Sequence[float], b: Sequence[float], confidence: float = CONFIDENCE) -> Interval:
    """mean(a) - mean(b) with Welch's t interval; `n` is len(a) + len(b).

    No interval when either group has one value. Two groups with no spread at all give a
    zero-width interval at the difference (the data are deterministic).
    """
    xa, xb = _clean(a), _clean(b)
    if not xa or not xb:
        raise ValueError("both groups need at least one finite value")
    ia, ib = mean_interval(xa), mean_interval(xb)
    diff = ia.mean - ib.mean
    n = len(xa) + len(xb)
    if len(xa) < 2 or len(xb) < 2:
        return Interval(diff, None, None, n)
    va, vb = ia.sd**2 / len(xa), ib.sd**2 / len(xb)
    se = math.sqrt(va + vb)
    if se == 0:
        return Interval(diff, diff, diff, n)
    df = (va + vb) ** 2 / (va**2 / (len(xa) - 1) + vb**2 / (len(xb) - 1))
    half = t_quantile(0.5 + confidence / 2, df) * se
    return Interval(diff, diff - half, diff + half, n, se)
