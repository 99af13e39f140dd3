"""`agentjet server repair STATE_DIR`: salvage every intact record of a damaged journal.

The damaged files are moved aside (`journal.damaged-<time>.sqlite`, never deleted), every row
that can still be read is checked (its JSON parses into an `EpisodeRecord`, its digest matches,
its episode id agrees) and written with its original seq into a fresh journal, so checkpoints'
consumed seqs keep their meaning: nothing salvaged is trained twice. SQLite's own `.recover`
(the `sqlite3` command) reads every page, also those a damaged b-tree no longer reaches; without
it, rows are read by seq ranges, narrowing to single rows around the damage. Seqs are dense
(AUTOINCREMENT, no deletes), so every missing seq below the highest one known is a lost record.
"""

from __future__ import annotations

import json
import logging
import shutil
import sqlite3
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from agentjet.core.checkpoints import latest_checkpoint
from agentjet.core.errors import ConfigError, JournalCorrupted
from agentjet.core.journal import Journal, record_digest
from agentjet.core.types import EpisodeRecord

__all__ = ["RepairReport", "repair_journal"]

log = logging.getLogger(__name__)

_CHUNK = 512
_RECOVER_TIMEOUT_S = 600.0


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
    rows, quarantine, highest, method = _salvage(damaged)
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
    return RepairReport(path, damaged, len(kept), lost, highest, quarantined, method)


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


def _salvage(damaged: Path) -> tuple[list[_Row], dict[str, list[int]], int, str]:
    """(rows, quarantine reason -> seqs, highest seq known, method) read from the damaged file."""
    if shutil.which("sqlite3"):
        try:
            return (*_recovered(damaged), "sqlite3 .recover")
        except (subprocess.SubprocessError, sqlite3.Error, OSError) as exc:
            log.warning("sqlite3 .recover failed (%s); reading rows directly", exc)
    return (*_scanned(damaged), "row scan")


def _recovered(damaged: Path) -> tuple[list[_Row], dict[str, list[int]], int]:
    """Run `sqlite3 DAMAGED .recover` and load its SQL into a scratch database to read back."""
    with tempfile.TemporaryDirectory(prefix="agentjet-repair-") as scratch:
        copy = Path(scratch) / "damaged.sqlite"  # .recover must never write next to the original
        for suffix in ("", "-wal", "-shm"):
            source = damaged.with_name(damaged.name + suffix)
            if source.exists():
                shutil.copy2(source, copy.with_name(copy.name + suffix))
        sql = subprocess.run(
            ["sqlite3", str(copy), ".recover"], capture_output=True, text=True, timeout=_RECOVER_TIMEOUT_S, check=True
        ).stdout
        out = sqlite3.connect(Path(scratch) / "recovered.sqlite")
        try:
            out.executescript(sql)
            return _read_tables(out)
        finally:
            out.close()


def _read_tables(db: sqlite3.Connection) -> tuple[list[_Row], dict[str, list[int]], int]:
    tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    columns = {row[1] for row in db.execute("PRAGMA table_info(episodes)")} if "episodes" in tables else set()
    digest = "digest" if "digest" in columns else "NULL"
    rows = (
        [
            _Row(int(seq), str(eid), str(record), d)
            for seq, eid, record, d in db.execute(f"SELECT seq, episode_id, record, {digest} FROM episodes")
            if seq is not None and record is not None
        ]
        if columns
        else []
    )
    quarantine: dict[str, list[int]] = {}
    if "quarantine" in tables:
        for seq, reason in db.execute("SELECT seq, reason FROM quarantine"):
            if isinstance(seq, int) and isinstance(reason, str):
                quarantine.setdefault(reason, []).append(seq)
    highest = 0
    if "sqlite_sequence" in tables:
        found = db.execute("SELECT max(seq) FROM sqlite_sequence WHERE name='episodes'").fetchone()
        highest = int(found[0]) if found and isinstance(found[0], int) else 0
    return rows, quarantine, highest


def _scanned(damaged: Path) -> tuple[list[_Row], dict[str, list[int]], int]:
    """Without the sqlite3 command: rows by seq range, narrowing to one row where a range fails."""
    db = sqlite3.connect(f"file:{damaged}?mode=ro", uri=True)
    try:
        highest = _highest(db)
        rows = list(_scan(db, highest))
        quarantine: dict[str, list[int]] = {}
        try:
            for seq, reason in db.execute("SELECT seq, reason FROM quarantine"):
                quarantine.setdefault(str(reason), []).append(int(seq))
        except sqlite3.DatabaseError:
            log.warning("quarantine table unreadable; its reasons are lost (the episodes stay in the journal)")
        return rows, quarantine, highest
    finally:
        db.close()


def _highest(db: sqlite3.Connection) -> int:
    for query in ("SELECT seq FROM sqlite_sequence WHERE name='episodes'", "SELECT max(seq) FROM episodes"):
        try:
            found = db.execute(query).fetchone()
            if found and isinstance(found[0], int):
                return int(found[0])
        except sqlite3.DatabaseError:
            continue
    return 0


def _scan(db: sqlite3.Connection, highest: int) -> Iterator[_Row]:
    has_digest = True
    start, empty_chunks = 1, 0
    while start <= highest or (highest == 0 and empty_chunks < 8):
        end = start + _CHUNK - 1
        try:
            chunk = _range(db, start, end, has_digest)
        except sqlite3.OperationalError:
            has_digest = False  # a journal from before digests
            continue
        except sqlite3.DatabaseError:
            chunk = [row for seq in range(start, end + 1) for row in _one(db, seq, has_digest)]
        empty_chunks = 0 if chunk else empty_chunks + 1
        yield from chunk
        start = end + 1


def _range(db: sqlite3.Connection, start: int, end: int, has_digest: bool) -> list[_Row]:
    digest = "digest" if has_digest else "NULL"
    query = f"SELECT seq, episode_id, record, {digest} FROM episodes WHERE seq BETWEEN ? AND ? ORDER BY seq"
    return [_Row(int(s), str(e), str(r), d) for s, e, r, d in db.execute(query, (start, end)).fetchall()]


def _one(db: sqlite3.Connection, seq: int, has_digest: bool) -> list[_Row]:
    try:
        return _range(db, seq, seq, has_digest)
    except sqlite3.DatabaseError:
        return []


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
