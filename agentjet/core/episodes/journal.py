"""The durable journal of closed episodes: SQLite in WAL mode with synchronous=FULL.

`append` returns only after the record is fsynced, so an episode whose `end` returned
survives `kill -9`. Each record gets a monotonically increasing `seq`: the trainer's
"journal position" is the last seq it has consumed. Each row also stores the SHA-256 of its
record, so damage that SQLite's own checks cannot see (bytes changed inside a record) is found
by `verify`, which the server runs before it starts: a damaged journal stops the start with
`JournalCorrupted` naming `agentjet server repair` (`journal_repair.py`), never a server that
serves but silently cannot train. Episodes refused for training are kept in `quarantine` with
the reason, so a restart never pools them again. A full disk is `StorageFull` (retryable).
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import sqlite3
import threading
from collections.abc import Iterable, Iterator
from pathlib import Path

from agentjet.core.errors import JournalCorrupted, StorageFull
from agentjet.core.types import EpisodeRecord, EpisodeStatus

__all__ = ["Journal", "record_digest"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS episodes (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    episode_id TEXT NOT NULL UNIQUE,
    task_id TEXT NOT NULL,
    kind TEXT NOT NULL,
    status TEXT NOT NULL,
    reward REAL,
    closed_at REAL NOT NULL,
    record TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS episodes_status ON episodes(status, kind);
CREATE TABLE IF NOT EXISTS quarantine (
    seq INTEGER PRIMARY KEY,
    reason TEXT NOT NULL,
    at REAL NOT NULL
);
"""
_FULL_CODES = {"SQLITE_FULL"}


def record_digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def _advice(path: Path) -> str:
    return f"stop the server and run `agentjet server repair {path.parent}` to salvage every intact episode"


def _is_disk_full(exc: BaseException) -> bool:
    if isinstance(exc, sqlite3.Error) and getattr(exc, "sqlite_errorname", "") in _FULL_CODES:
        return True
    return isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT)


class Journal:
    """Append-only store of `EpisodeRecord`s. Thread-safe; callers run it via asyncio.to_thread."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._lock = threading.Lock()
        if not path.exists():  # every prompt and completion lands here: owner-only from the first byte
            os.close(os.open(path, os.O_WRONLY | os.O_CREAT, 0o600))
        try:
            self._db = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=FULL")  # fsync the WAL on every commit
            self._db.executescript(_SCHEMA)
            columns = {row[1] for row in self._db.execute("PRAGMA table_info(episodes)")}
            if "digest" not in columns:  # journals written before digests: their rows stay NULL
                self._db.execute("ALTER TABLE episodes ADD COLUMN digest TEXT")
        except sqlite3.DatabaseError as exc:
            raise JournalCorrupted(f"journal {path} cannot be opened ({exc}): {_advice(path)}") from exc
        for name in (path.name, f"{path.name}-wal", f"{path.name}-shm"):  # also journals of older versions
            if (path.parent / name).exists():
                os.chmod(path.parent / name, 0o600)

    def append(self, record: EpisodeRecord) -> int:
        """Durably store one closed episode and return its seq; a second append of the same id fails.

        StorageFull when the disk is full: nothing was written, the same append may be retried."""
        text = json.dumps(record.to_dict(), separators=(",", ":"))
        row = (
            record.episode_id,
            record.task_id,
            str(record.kind),
            str(record.status),
            record.reward,
            record.closed_at,
            text,
            record_digest(text),
        )
        try:
            with self._lock:
                cur = self._db.execute(
                    "INSERT INTO episodes(episode_id, task_id, kind, status, reward, closed_at, record, digest)"
                    " VALUES (?,?,?,?,?,?,?,?)",
                    row,
                )
                return int(cur.lastrowid or 0)
        except (sqlite3.Error, OSError) as exc:
            if _is_disk_full(exc):
                raise StorageFull(f"the disk holding {self.path} is full; free space and retry") from exc
            raise

    def import_rows(self, rows: Iterable[tuple[int, str]]) -> int:
        """Write salvaged `(seq, record JSON)` rows with their original seqs (repair only); returns the count."""
        values = []
        for seq, text in rows:
            r = EpisodeRecord.from_dict(json.loads(text))
            values.append(
                (
                    seq,
                    r.episode_id,
                    r.task_id,
                    str(r.kind),
                    str(r.status),
                    r.reward,
                    r.closed_at,
                    text,
                    record_digest(text),
                )
            )
        with self._lock:
            self._db.execute("BEGIN")
            self._db.executemany(
                "INSERT INTO episodes(seq, episode_id, task_id, kind, status, reward, closed_at, record, digest)"
                " VALUES (?,?,?,?,?,?,?,?,?)",
                values,
            )
            self._db.execute("COMMIT")
        return len(values)

    def reserve_seqs_through(self, seq: int) -> None:
        """The next append gets a seq above `seq` (repair: seqs of lost records are never handed out again)."""
        with self._lock:
            current = self._db.execute("SELECT seq FROM sqlite_sequence WHERE name='episodes'").fetchone()
            if current is None:
                self._db.execute("INSERT INTO sqlite_sequence(name, seq) VALUES ('episodes', ?)", (seq,))
            elif int(current[0]) < seq:
                self._db.execute("UPDATE sqlite_sequence SET seq=? WHERE name='episodes'", (seq,))

    def get(self, episode_id: str) -> EpisodeRecord | None:
        with self._lock:
            row = self._db.execute("SELECT seq, record FROM episodes WHERE episode_id=?", (episode_id,)).fetchone()
        return self._parse(int(row[0]), row[1]) if row else None

    def read_from(self, after_seq: int, *, status: EpisodeStatus | None = None) -> Iterator[tuple[int, EpisodeRecord]]:
        """Records with seq > after_seq in order (optionally one status): the trainer's feed."""
        query = "SELECT seq, record FROM episodes WHERE seq > ?"
        args: tuple[object, ...] = (after_seq,)
        if status is not None:
            query += " AND status = ?"
            args += (str(status),)
        try:
            with self._lock:
                rows = self._db.execute(query + " ORDER BY seq", args).fetchall()
        except sqlite3.DatabaseError as exc:
            raise JournalCorrupted(f"journal {self.path} cannot be read ({exc}): {_advice(self.path)}") from exc
        for seq, blob in rows:
            yield int(seq), self._parse(int(seq), blob)

    def newest(
        self, *, before_seq: int | None = None, limit: int = 50, **equal: str | None
    ) -> list[tuple[int, EpisodeRecord]]:
        """Up to `limit` records newest first, below `before_seq`, whose `kind`/`status`/`task_id`
        columns equal the given values (None: any): the episode browser's page."""
        query = "SELECT seq, record FROM episodes WHERE seq < ?"
        args: list[object] = [before_seq if before_seq is not None else 2**62]
        for column in ("kind", "status", "task_id"):
            if (value := equal.pop(column, None)) is not None:
                query += f" AND {column} = ?"
                args.append(value)
        if equal:
            raise TypeError(f"unknown journal columns {sorted(equal)}")
        try:
            with self._lock:
                rows = self._db.execute(query + " ORDER BY seq DESC LIMIT ?", (*args, limit)).fetchall()
        except sqlite3.DatabaseError as exc:
            raise JournalCorrupted(f"journal {self.path} cannot be read ({exc}): {_advice(self.path)}") from exc
        return [(int(seq), self._parse(int(seq), blob)) for seq, blob in rows]

    def _parse(self, seq: int, blob: str) -> EpisodeRecord:
        try:
            return EpisodeRecord.from_dict(json.loads(blob))
        except (ValueError, KeyError, TypeError) as exc:
            raise JournalCorrupted(
                f"journal {self.path}: record seq={seq} is unreadable: {_advice(self.path)}"
            ) from exc

    def counts(self) -> dict[str, int]:
        with self._lock:
            rows = self._db.execute("SELECT status, COUNT(*) FROM episodes GROUP BY status").fetchall()
        return {str(status): int(n) for status, n in rows}

    def verify(self) -> int:
        """Check the file and every record (SQLite's quick_check, then each digest and parse); returns
        the record count, or raises JournalCorrupted saying what is damaged and how to repair it."""
        try:
            with self._lock:
                problems = [row[0] for row in self._db.execute("PRAGMA quick_check")]
                if problems != ["ok"]:
                    found = f"{problems[0]}; {len(problems)} problem(s)"
                    raise JournalCorrupted(f"journal {self.path} is damaged ({found}): {_advice(self.path)}")
                rows = self._db.execute("SELECT seq, record, digest FROM episodes ORDER BY seq")
                count = 0
                for seq, blob, digest in rows:
                    if digest is not None and record_digest(blob) != digest:
                        raise JournalCorrupted(
                            f"journal {self.path}: record seq={seq} does not match its digest: {_advice(self.path)}"
                        )
                    self._parse(int(seq), blob)
                    count += 1
        except sqlite3.DatabaseError as exc:
            raise JournalCorrupted(f"journal {self.path} cannot be read ({exc}): {_advice(self.path)}") from exc
        return count

    # ---- quarantine: episodes refused for training, and why --------------------------------
    def quarantine(self, seqs: Iterable[int], reason: str, *, at: float) -> None:
        rows = [(int(seq), reason, at) for seq in seqs]
        try:
            with self._lock:
                self._db.executemany("INSERT OR REPLACE INTO quarantine(seq, reason, at) VALUES (?,?,?)", rows)
        except (sqlite3.Error, OSError) as exc:
            if _is_disk_full(exc):
                raise StorageFull(f"the disk holding {self.path} is full; free space and retry") from exc
            raise

    def quarantined(self) -> dict[int, str]:
        with self._lock:
            rows = self._db.execute("SELECT seq, reason FROM quarantine ORDER BY seq").fetchall()
        return {int(seq): str(reason) for seq, reason in rows}

    def close(self) -> None:
        with self._lock:
            self._db.close()
