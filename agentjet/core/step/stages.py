"""Work that pauses: a generator whose every `yield` is a point where its thread may run something else.

Why: on a CPU, torch work on two threads runs two OpenMP teams, and libgomp, seeing more of its threads
than cores, lets them sleep between parallel regions (an update ran 1.4x slower beside the decode
loop's team). So on a CPU the decode loop runs a training step itself, one stage (a micro-batch)
between two decode steps (`backends/loop_jobs.py`, `training/step_runner.py`); elsewhere `drive`
runs the stages straight through.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import TypeVar

__all__ = ["Stages", "drive"]

T = TypeVar("T")

Stages = Generator[None, None, T]  # yields between stages, returns the result


def drive(stages: Stages[T]) -> T:
    """Run every stage on this thread, without pausing; the stages' result."""
    while True:
        try:
            next(stages)
        except StopIteration as finished:
            return finished.value  # type: ignore[no-any-return]  # StopIteration.value is Any
