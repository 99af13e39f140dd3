"""A vibe run's wall-clock budget (`--budget M`): when training stops, and where the pace says it will stop.

The budget counts from the vibe run's start. Once it has run out, or what is left of it is shorter than the
last update took (an update begun then would land past it), the watch waits for no further step: the final
held-out round follows, and an update already under way lands before it (the round holds the policy and waits
for the server to roll). After each step the pace so far says where training will stop, so a user
on a slow machine (a CPU without native bf16 runs ~2-3.5x slower) learns it minutes in, not at the end.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any, Protocol

__all__ = ["Budget", "last_update_s"]


class _Run(Protocol):  # what the budget reads of a TrainingRun
    started_at: float
    first_step_at: float | None
    step_at_launch: int
    last_step: int
    target_step: int


def last_update_s(lines: Sequence[dict[str, Any]]) -> float | None:
    """How long the latest update took (`train_time_s` of the newest metrics line), if one has landed."""
    value = lines[-1].get("train_time_s") if lines else None
    return float(value) if isinstance(value, int | float) else None


class Budget:
    """`seconds` from the run's start (None: no limit)."""

    def __init__(self, seconds: float | None) -> None:
        self.seconds = seconds
        self._said: int | None = None  # the last step a pace note projected

    def ran_out(self, run: _Run, now: float | None = None, *, update_s: float | None = None) -> str | None:
        """Why training stops now, or None while time is left. With `update_s` (how long the last update took),
        training also stops once the time left is shorter than that: an update begun then would land past the
        budget and hold the final round back by as much (one under way still lands)."""
        now = time.time() if now is None else now
        if self.seconds is None:
            return None
        left = run.started_at + self.seconds - now
        if left < 0:
            return f"the {self.seconds / 60:.1f} min budget ran out at step {run.last_step} of {run.target_step}"
        if update_s is not None and left < update_s:
            return (
                f"the {self.seconds / 60:.1f} min budget leaves {left:.0f} s, less than an update takes here "
                f"(~{update_s:.0f} s), at step {run.last_step} of {run.target_step}"
            )
        return None

    def pace_note(self, run: _Run, now: float | None = None) -> str | None:
        """After a step: the step training will stop near at this pace, when that is short of the target and was
        not said already; else None."""
        now = time.time() if now is None else now
        done = run.last_step - run.step_at_launch
        if self.seconds is None or run.first_step_at is None or done < 1 or run.last_step >= run.target_step:
            return None
        if done == 1:  # the first step's time holds validation's too: a pace a little slow, never too fast
            per_step = run.first_step_at - run.started_at
        else:
            per_step = (now - run.first_step_at) / (done - 1)
        left = run.started_at + self.seconds - now
        reach = run.last_step + max(0, int(left // max(per_step, 1e-9)))
        if reach >= run.target_step or reach == self._said:
            return None
        self._said = reach
        return (
            f"at ~{per_step:.0f} s a step, the {self.seconds / 60:.1f} min budget stops training near step {reach} "
            f"of {run.target_step}; the final held-out round follows"
        )
