"""Work the decode loop runs on its own thread between decode steps: a queue of paused jobs.

A job is a generator that yields between its stages (a training step on a CPU yields after each
micro-batch, `step/stages.py`). The decode loop advances the oldest job by one stage per turn,
with autograd on, so one OpenMP team does the job and the decoding and calls in flight keep
getting tokens. Worker-thread only, like the loop that owns it.
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Generator
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any

import torch

from agentjet.core.errors import BackendError

__all__ = ["Job", "JobQueue"]

log = logging.getLogger(__name__)


@dataclass
class Job:
    stages: Generator[None, None, Any]  # yields between stages, returns the result
    done: Future[Any]


class JobQueue:
    """Jobs in arrival order; `advance` runs one stage of the oldest and settles its future when it ends."""

    def __init__(self) -> None:
        self._jobs: deque[Job] = deque()

    def __bool__(self) -> bool:
        return bool(self._jobs)

    def add(self, job: Job, *, accepting: bool) -> None:
        """Queue `job`, unless its caller cancelled it first or the loop is stopping (`accepting` False)."""
        if not job.done.set_running_or_notify_cancel():
            job.stages.close()  # cancelled before it started: never run
        elif accepting:
            self._jobs.append(job)
        else:
            job.stages.close()
            job.done.set_exception(BackendError("backend closed before the job ran"))

    def advance(self) -> None:
        """One stage of the oldest job, grad mode on (the loop runs in inference mode)."""
        job = self._jobs[0]
        try:
            with torch.inference_mode(False):
                next(job.stages)
        except StopIteration as finished:
            self._jobs.popleft()
            job.done.set_result(finished.value)
        except Exception as exc:  # the job's own error (a refused step, ...): its caller's to handle, as raised
            self._jobs.popleft()
            log.debug("job failed: %r", exc)
            job.done.set_exception(exc)

    def close_all(self, error: BackendError | None) -> None:
        """End every job at its pause: its `finally` blocks run (a training step's weights stay as they were)."""
        while self._jobs:
            job = self._jobs.popleft()
            job.stages.close()
            job.done.set_exception(error or BackendError("backend closed before the job finished"))
