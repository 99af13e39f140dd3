"""`agentjet server repair STATE_DIR`: salvage every intact record of a damaged journal.

The damaged files are moved aside (`journal.damaged-<time>.sqlite`, never deleted), every row
that can still be read off its pages (`journal_pages.py`: every table-leaf page, also those a
damaged b-tree or schema no longer reaches; SQLite's own `.recover` fails even on intact files in
the sqlite3 3.40 Debian ships) is checked (its JSON parses into an `EpisodeRecord`, its digest
matches, its episode id agrees) and written with its original seq into a fresh journal, so the
checkpoints' consumed seqs keep their meaning: nothing salvaged is trained twice. Seqs are dense
(AUTOINCREMENT, no deletes), so every missing seq below the highest one known is a lost record;
the next new episode gets a seq above every one known, lost ones included.
"""

from __future__ import annotations

import json
import logging
import time
from dataclasses import dataclass
from pathlib import Path

from agentjet.core.episodes.journal import Journal, record_digest
from agentjet.core.episodes.journal_pages import leaf_rows
from agentjet.core.errors import ConfigError, JournalCorrupted
from agentjet.core.training.checkpoints import latest_checkpoint
from agentjet.core.types import EpisodeRecord

__all__ = ["RepairReport", "repair_journal"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class RepairReport:
    journal: Path
    damaged_copy: Path | None  # None: the journal was intact and is untouched
    salvaged: int
    lost_seqs: tuple[int, ...]
    highest_seq: int
    quarantined: int
    method: str

    @property
    def lost(self) -> int:
        return len(self.lost_seqs)

    def as_json(self) -> dict[str, object]:
        return {
            "journal": str(self.journal),
            "damaged_copy": str(self.damaged_copy) if self.damaged_copy else None,
            "salvaged": self.salvaged,
            "lost": self.lost,
            "lost_seqs": list(self.lost_seqs),
            "highest_seq": self.highest_seq,
            "quarantined": self.quarantined,
            "method": self.method,
        }

    def describe(self) -> str:
        if self.damaged_copy is None:
            return f"journal {self.journal} is intact ({self.salvaged} records); nothing to repair"
        lost = ", ".join(str(s) for s in self.lost_seqs[:20]) + (" ..." if self.lost > 20 else "")
        tail = f"; lost seqs: {lost}" if self.lost else ""
        return (
            f"salvaged {self.salvaged} of {self.salvaged + self.lost} records ({self.lost} lost) into {self.journal} "
            f"by {self.method}; the damaged file is kept as {self.damaged_copy}{tail}"
        )


@dataclass(frozen=True)
class _Row:
    seq: int
    episode_id: str
    record: str
    digest: str | None


def repair_journal(state_dir: Path) -> RepairReport:
    """Rebuild `<state_dir>/journal.sqlite` from what can be read of it (see the module docstring)."""
    path = state_dir / "journal.sqlite"
    if not path.is_file():
        raise ConfigError(f"no journal at {path}: is {state_dir} a server's --state-dir?")
    try:
        journal = Journal(path)
        try:
            count = journal.verify()
        finally:
            journal.close()
        return RepairReport(path, None, count, (), count, 0, "verify")
    except JournalCorrupted as exc:
        log.warning("journal damaged, repairing: %s", exc)
    damaged = _move_aside(path)
    rows, quarantine, highest = _salvage(damaged)
    kept = _valid(rows)
    highest = max([highest, *(r.seq for r in kept)], default=0)
    fresh = Journal(path)
    try:
        fresh.import_rows((r.seq, r.record) for r in kept)
        for reason, seqs in quarantine.items():
            fresh.quarantine(seqs, reason, at=time.time())
        fresh.reserve_seqs_through(max(highest, _highest_consumed(state_dir)))
    finally:
        fresh.close()
    salvaged = {r.seq for r in kept}
    lost = tuple(s for s in range(1, highest + 1) if s not in salvaged)
    quarantined = sum(len(v) for v in quarantine.values())
    return RepairReport(path, damaged, len(kept), lost, highest, quarantined, "page scan")


def _highest_consumed(state_dir: Path) -> int:
    """The highest seq the newest checkpoint consumed: new episodes must never reuse a consumed seq."""
    checkpoint = latest_checkpoint(state_dir / "checkpoints")
    return max(checkpoint.consumed, default=0) if checkpoint is not None else 0


def _move_aside(path: Path) -> Path:
    """journal.sqlite (+ -wal, -shm) -> journal.damaged-<time>.sqlite (+ its own -wal, -shm)."""
    damaged = path.with_name(f"journal.damaged-{time.strftime('%Y%m%d-%H%M%S')}.sqlite")
    for suffix in ("", "-wal", "-shm"):
        source = path.with_name(path.name + suffix)
        if source.exists():
            source.rename(damaged.with_name(damaged.name + suffix))
    return damaged


def _salvage(damaged: Path) -> tuple[list[_Row], dict[str, list[int]], int]:
    """(episode rows, quarantine reason -> seqs, highest seq in sqlite_sequence) read off the pages."""
    rows: list[_Row] = []
    quarantine: dict[str, list[int]] = {}
    highest = 0
    for row in leaf_rows(damaged):
        values = row.values
        if len(values) in (8, 9) and values[0] is None and isinstance(values[1], str) and isinstance(values[7], str):
            digest = values[8] if len(values) == 9 and isinstance(values[8], str) else None
            rows.append(_Row(row.rowid, values[1], values[7], digest))
        elif len(values) == 3 and values[0] is None and isinstance(values[1], str):
            quarantine.setdefault(values[1], []).append(row.rowid)
        elif len(values) == 2 and values[0] == "episodes" and isinstance(values[1], int):
            highest = max(highest, values[1])
    return rows, {reason: sorted(set(seqs)) for reason, seqs in quarantine.items()}, highest


def _valid(rows: list[_Row]) -> list[_Row]:
    """Rows whose record is intact: digest (when stored), JSON, EpisodeRecord, id; one per seq and id."""
    kept: dict[int, _Row] = {}
    ids: set[str] = set()
    for row in sorted(rows, key=lambda r: r.seq):
        if row.seq in kept or row.episode_id in ids:
            continue
        if row.digest is not None and record_digest(row.record) != row.digest:
            continue
        try:
            record = EpisodeRecord.from_dict(json.loads(row.record))
        except (ValueError, KeyError, TypeError):
            continue
        if record.episode_id != row.episode_id:
            continue
        kept[row.seq] = row
        ids.add(row.episode_id)
    return list(kept.values())
