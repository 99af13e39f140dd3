"""TensorBoard event files in `<state_dir>/tensorboard/`, one file per process with a purge marker.

Events are written synchronously (no tensorboardX queue thread) and flushed with each step, so a
line in metrics.jsonl has its scalars on disk too. Each process writes a file of its own that
starts with a purge marker at its first step: TensorBoard then hides what an earlier run logged
for the steps being redone after a restart.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any, Protocol

from agentjet.core.trackers.base import Scalars

__all__ = ["TensorBoardTracker"]


class _EventsWriter(Protocol):
    def write_event(self, event: Any) -> None: ...

    def flush(self) -> None: ...

    def close(self) -> None: ...


class TensorBoardTracker:
    name = "tensorboard"

    def __init__(self, state_dir: Path) -> None:
        self.folder = state_dir / "tensorboard"
        self._events: _EventsWriter | None = None

    def log(self, step: int, scalars: Scalars, wall_time: float) -> None:
        from tensorboardX.proto.event_pb2 import Event  # imports torch: only once a step is written
        from tensorboardX.proto.summary_pb2 import Summary

        events = self._events or self._open(step)
        values = [Summary.Value(tag=tag, simple_value=value) for tag, value in scalars]
        events.write_event(Event(wall_time=wall_time, step=step, summary=Summary(value=values)))
        events.flush()

    def _open(self, first_step: int) -> _EventsWriter:
        """A new event file for this process; its purge marker hides older runs' events from `first_step` on."""
        from tensorboardX.event_file_writer import EventsWriter
        from tensorboardX.proto.event_pb2 import Event, SessionLog

        self.folder.mkdir(parents=True, exist_ok=True)
        # the name's own timestamp has whole seconds: a restart within one must get a later name, as
        # TensorBoard reads the files in name order and a purge marker only hides what came before it
        suffix = f".{time.time_ns()}.{os.getpid()}"
        events: _EventsWriter = EventsWriter(str(self.folder / "events"), filename_suffix=suffix)
        events.write_event(
            Event(wall_time=time.time(), step=first_step, session_log=SessionLog(status=SessionLog.START))
        )
        self._events = events
        return events

    def close(self) -> None:
        if self._events is not None:
            self._events.close()
            self._events = None
