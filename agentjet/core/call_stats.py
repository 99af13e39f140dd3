"""Live call statistics of one server (totals, calls/s and tokens/s over a sliding window). Time is an argument."""

from __future__ import annotations

from collections import deque
from typing import Any

__all__ = ["CallStats"]

_RATE_WINDOW_S = 10.0


class CallStats:
    """Counts finished calls and their sampled tokens; event-loop only (owned by the engine)."""

    def __init__(self, started_at: float) -> None:
        self.started_at = started_at
        self.calls_total = 0
        self.tokens_total = 0
        self.straddled_calls = 0  # calls that saw a hot-load while sampling (a drain that timed out)
        self._recent: deque[tuple[float, int]] = deque()

    def finished(self, now: float, tokens: int) -> None:
        self.calls_total += 1
        self.tokens_total += tokens
        self._recent.append((now, tokens))

    def view(self, now: float) -> dict[str, Any]:
        while self._recent and now - self._recent[0][0] > _RATE_WINDOW_S:
            self._recent.popleft()
        window = min(_RATE_WINDOW_S, max(now - self.started_at, 1e-9))
        return {
            "calls_total": self.calls_total,
            "tokens_total": self.tokens_total,
            "calls_per_s": len(self._recent) / window,
            "tokens_per_s": sum(t for _, t in self._recent) / window,
            "straddled_calls": self.straddled_calls,
        }
