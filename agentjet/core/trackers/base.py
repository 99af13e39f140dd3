"""The `Tracker` seam: one step's scalars in, nothing out; how its run is named and found again.

A restarted server continues its trackers' runs rather than starting new ones: the run ids live
in `<state_dir>/trackers.json`, written atomically when a run is first made.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

__all__ = ["RUN_IDS_FILE", "Scalars", "Tracker", "remember_run_id", "saved_run_id"]

RUN_IDS_FILE = "trackers.json"
Scalars = Sequence[tuple[str, float]]  # (tag, value): `reward/reward_mean`, `train/loss`, ...


class Tracker(Protocol):
    """Receives each training step's scalars.

    Called from one thread at a time (the training loop's worker), never concurrently. `log`
    may raise whatever its library raises: the caller logs it and goes on. `close` ends the
    run and is idempotent.
    """

    name: str

    def log(self, step: int, scalars: Scalars, wall_time: float) -> None: ...

    def close(self) -> None: ...


def saved_run_id(state_dir: Path, tracker: str) -> str | None:
    """The run id `tracker` used in this state dir before, or None."""
    try:
        ids = json.loads((state_dir / RUN_IDS_FILE).read_text())
    except (OSError, ValueError):
        return None
    value = ids.get(tracker) if isinstance(ids, dict) else None
    return value if isinstance(value, str) else None


def remember_run_id(state_dir: Path, tracker: str, run_id: str) -> None:
    """Add `tracker`'s run id to the state dir's file (temp file + rename: never half-written)."""
    path = state_dir / RUN_IDS_FILE
    try:
        ids = json.loads(path.read_text())
    except (OSError, ValueError):
        ids = {}
    ids = {**(ids if isinstance(ids, dict) else {}), tracker: run_id}
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(ids, indent=2) + "\n")
    os.replace(tmp, path)
