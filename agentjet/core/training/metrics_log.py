"""Where metric lines go: `<state_dir>/metrics.jsonl`, then each tracker of `TrainConfig.report_to`.

The JSONL file is the record (checkpoints.truncate_metrics drops lines of steps a restart
redoes); the trackers (`agentjet/core/trackers/`: TensorBoard by default, wandb, MLflow) get the
same numeric values. A tracker is started at the first step that names it and closed when the
config drops it; one that fails to start or to log is logged and skipped, never a failed step,
and a tracker that failed to start is tried again only when its settings change. A lock
serialises `append` and `close`: a server stopping while a step's line is being written ends
the trackers' runs after that line, not in the middle of it.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from agentjet.core.config import TrackerName, TrackersConfig, TrainConfig
from agentjet.core.trackers.base import Tracker
from agentjet.core.trackers.factory import open_tracker
from agentjet.core.training.metrics import tensorboard_scalars

__all__ = ["MetricsLog", "last_metrics"]

log = logging.getLogger(__name__)


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
    """Appends one step's metrics to the JSONL file and hands its scalars to the configured trackers."""

    def __init__(self, state_dir: Path) -> None:
        self.state_dir = state_dir
        self.jsonl_path = state_dir / "metrics.jsonl"
        self._trackers: dict[TrackerName, tuple[TrackersConfig, Tracker]] = {}
        self._failed: dict[TrackerName, TrackersConfig] = {}  # failed to start with these settings
        self._lock = threading.Lock()

    def append(self, metrics: Mapping[str, Any], config: TrainConfig | None = None) -> None:
        """The line first (it is the record), then the scalars to each tracker of `config.report_to`."""
        with self._lock:
            self._append(metrics, config or TrainConfig())

    def _append(self, metrics: Mapping[str, Any], config: TrainConfig) -> None:
        self.jsonl_path.parent.mkdir(parents=True, exist_ok=True)
        with self.jsonl_path.open("a") as f:
            f.write(json.dumps(metrics) + "\n")
        step = int(metrics["step"])
        scalars = tensorboard_scalars(metrics)
        wall_time = float(metrics.get("time") or time.time())
        for name, tracker in self._current(config, step):
            try:
                tracker.log(step, scalars, wall_time)
            except Exception:
                log.exception("tracker %s failed to log step=%d; metrics.jsonl has the line", name, step)

    def _current(self, config: TrainConfig, step: int) -> list[tuple[TrackerName, Tracker]]:
        """The trackers `config` asks for, started or restarted as its settings say; the others closed."""
        for name in [n for n in self._trackers if n not in config.report_to]:
            self._close(name)
        current = []
        for name in config.report_to:
            opened = self._trackers.get(name)
            if opened is not None and opened[0] != config.trackers:
                self._close(name)
                opened = None
            if opened is None and self._failed.get(name) != config.trackers:
                opened = self._open(name, config, step)
            if opened is not None:
                current.append((name, opened[1]))
        return current

    def _open(self, name: TrackerName, config: TrainConfig, step: int) -> tuple[TrackersConfig, Tracker] | None:
        try:
            tracker = open_tracker(name, self.state_dir, config.trackers, config.model_dump(mode="json"))
        except Exception:
            log.exception("tracker %s failed to start at step=%d; metrics.jsonl has every line", name, step)
            self._failed[name] = config.trackers
            return None
        self._failed.pop(name, None)
        log.info("tracker %s started at step=%d", name, step)
        self._trackers[name] = (config.trackers, tracker)
        return self._trackers[name]

    def _close(self, name: TrackerName) -> None:
        _, tracker = self._trackers.pop(name)
        try:
            tracker.close()
        except Exception:
            log.exception("tracker %s failed to close", name)

    def close(self) -> None:
        """End every tracker's run (the server is stopping), after a line being written."""
        with self._lock:
            for name in list(self._trackers):
                self._close(name)
