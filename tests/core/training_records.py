"""Read a training server's state dir back: its metric lines and the journal's ended train episodes.

The crash/resume tests judge "every completed episode trained exactly once" from these alone.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agentjet.core.episodes.journal import Journal
from agentjet.core.types import EpisodeKind, EpisodeRecord, EpisodeStatus

__all__ = ["ended_train_episodes", "metric_lines", "trained_seqs"]


def metric_lines(state: Path) -> list[dict[str, Any]]:
    """Every line of `<state>/metrics.jsonl`, parsed (a torn line fails the test)."""
    return [json.loads(line) for line in (state / "metrics.jsonl").read_text().splitlines()]


def trained_seqs(lines: list[dict[str, Any]]) -> list[int]:
    """The journal seqs the lines say were consumed (trained or skipped), repeats kept."""
    return [seq for m in lines for seq in (*m["episode_seqs"], *m["skipped_seqs"])]


def ended_train_episodes(state: Path) -> dict[int, EpisodeRecord]:
    """Journal seq -> record of every train episode that ended (eval and aborted ones are never trained)."""
    journal = Journal(state / "journal.sqlite")
    try:
        ended = journal.read_from(0, status=EpisodeStatus.ENDED)
        return {seq: record for seq, record in ended if record.kind is EpisodeKind.TRAIN}
    finally:
        journal.close()
