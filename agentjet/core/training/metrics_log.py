"""Where metric lines go: `<state_dir>/metrics.jsonl` and TensorBoard event files in `<state_dir>/tensorboard/`.

The JSONL file is the record (checkpoints.truncate_metrics drops lines of steps a restart
redoes); the event files carry the same numbers for TensorBoard. Events are written
synchronously (no tensorboardX queue thread) and flushed with each line, so a line on disk has
its scalars on disk too. Each process writes a file of its own that starts with a purge
marker at its first step: TensorBoard then hides what an earlier run logged for the steps
being redone. Not thread-safe: the training loop calls it from one worker at a time.
"""

from __future__ import annotations

import json
import logging
import os
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Protocol

from agentjet.core.training.metrics import tensorboard_scalars

__all__ = ["MetricsLog", "last_metrics"]

log = logging.getLogger(__name__)


class _EventsWriter(Protocol):
    def write_event(self, event: Any) -> None: ...

    def flush(self) -> None: ...

    def close(self) -> None: ...


def last_metrics(path: Path) -> dict[str, Any] | None:
    """The last whole line of a metrics.jsonl (a torn last line from a kill is skipped), or None."""
    if not path.is_file():
        return None
    for line in reversed(path.read_text().splitlines()):
        try:
            value = json.loads(line)
        except ValueError:
            continue
        if isinstance(value, dict) and "step" in value:
            return value
    return None


class MetricsLog:
    """Appends one step's metrics to the JSONL file and to this process's TensorBoard event file."""

    def __init__(self, state_dir: Path) -> None:
        self.jsonl_path = state_dir / "metrics.jsonl"
        self.tensorboard_dir = state_dir / "tensorboard"
        self._events: _EventsWriter | None = None

    def append(self, metrics: Mapping[str, Any]) -> None:
        """The line first (it is the record), then the scalars; a TensorBoard failure is only logged."""
        self.jsonl_path.parent.mkdir(parents=True, exist_ok=True)
        with self.jsonl_path.open("a") as f:
            f.write(json.dumps(metrics) + "\n")
        try:
            self._write_scalars(metrics)
        except Exception:
            log.exception("tensorboard write failed step=%s; metrics.jsonl has the line", metrics.get("step"))

    def _write_scalars(self, metrics: Mapping[str, Any]) -> None:
        from tensorboardX.proto.event_pb2 import Event  # imports torch: only once a step is written
        from tensorboardX.proto.summary_pb2 import Summary

        step = int(metrics["step"])
        events = self._events or self._open(step)
        values = [Summary.Value(tag=tag, simple_value=value) for tag, value in tensorboard_scalars(metrics)]
        wall_time = float(metrics.get("time") or time.time())
        events.write_event(Event(wall_time=wall_time, step=step, summary=Summary(value=values)))
        events.flush()

    def _open(self, first_step: int) -> _EventsWriter:
        """A new event file for this process; its purge marker hides older runs' events from `first_step` on."""
        from tensorboardX.event_file_writer import EventsWriter
        from tensorboardX.proto.event_pb2 import Event, SessionLog

        self.tensorboard_dir.mkdir(parents=True, exist_ok=True)
        # the name's own timestamp has whole seconds: a restart within one must get a later name, as
        # TensorBoard reads the files in name order and a purge marker only hides what came before it
        suffix = f".{time.time_ns()}.{os.getpid()}"
        events: _EventsWriter = EventsWriter(str(self.tensorboard_dir / "events"), filename_suffix=suffix)
        events.write_event(
            Event(wall_time=time.time(), step=first_step, session_log=SessionLog(status=SessionLog.START))
        )
        self._events = events
        return events

    def close(self) -> None:
        if self._events is not None:
            self._events.close()
            self._events = None
