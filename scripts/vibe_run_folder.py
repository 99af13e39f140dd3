"""A vibe run's folder as the replay scripts read it: its files, or one line saying which are missing.

Shared by `replay_update.py` and `replay_round.py` (run from the checkout: `scripts/` is on their path).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

__all__ = ["require", "step_episode_seqs"]


def require(run: Path, *relative: str) -> list[Path]:
    """`run / r` for each of `relative`; exits with one line naming the missing ones."""
    paths = [run / r for r in relative]
    missing = [str(path) for path in paths if not path.is_file()]
    if missing:
        sys.exit(f"{run} is not a vibe run's folder: no {', '.join(missing)}")
    return paths


def step_episode_seqs(metrics: Path, step: int) -> set[int]:
    """The journal sequence numbers of the episodes step `step` trained on (`metrics.jsonl`); exits if none."""
    line = next((m for m in map(json.loads, metrics.read_text().splitlines()) if m.get("step") == step), None)
    if line is None or "episode_seqs" not in line:
        sys.exit(f"step {step} is not in {metrics} (or names no episodes: a run older than episode_seqs)")
    return set(line["episode_seqs"])
