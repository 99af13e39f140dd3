"""Where an update runs: between the decode loop's steps on a CPU, in a worker thread elsewhere.

On a CPU the transformers backend's decode loop owns an OpenMP team; an update on a second thread
starts a second one, and libgomp, seeing more of its threads than cores, lets them sleep between
parallel regions: the vibe headline's first update ran 1.4x slower than alone (docs/vibe.md). So
when the trainer and the backend both run on the CPU and the trainer can pause (`step_stages`), the
decode loop runs the step, one micro-batch between two decode steps. A GPU, vLLM (another process),
the data-parallel trainer and the fakes keep the worker thread.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from agentjet.core.episodes.merging import Sample
from agentjet.core.step.step_stats import StepStats
from agentjet.core.step.step_trainer import StepTrainer

__all__ = ["run_step", "shares_decode_thread"]


def shares_decode_thread(trainer: StepTrainer, backend: Any) -> bool:
    """Whether `trainer`'s steps should run on `backend`'s decode loop: both on the CPU, and both able to."""
    if not callable(getattr(trainer, "step_stages", None)) or not callable(getattr(backend, "run_between_steps", None)):
        return False
    return _is_cpu(getattr(trainer, "device", None)) and _is_cpu(getattr(backend, "device", None))


async def run_step(
    trainer: StepTrainer, backend: Any, samples: Sequence[Sample], advantages: Sequence[float]
) -> StepStats:
    """`trainer.step(samples, advantages)`, where it runs fastest without stalling the event loop."""
    if shares_decode_thread(trainer, backend):
        stats: StepStats = await backend.run_between_steps(trainer.step_stages(samples, advantages))  # type: ignore[attr-defined]
        return stats
    return await asyncio.to_thread(trainer.step, samples, advantages)


def _is_cpu(device: Any) -> bool:
    return getattr(device, "type", None) == "cpu"
