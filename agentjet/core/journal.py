"""The durable journal of closed episodes: SQLite in WAL mode with synchronous=FULL.

`append` returns only after the record is fsynced, so an episode whose `end` returned
survives `kill -9`. Each record gets a monotonically increasing `seq`: the trainer's
"journal position" is the last seq it has consumed.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path

from agentjet.core.types import EpisodeRecord, EpisodeStatus

__all__ = ["Journal"]

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
"""


class Journal:
    """Append-only store of `EpisodeRecord`s. Thread-safe; callers run it via asyncio.to_thread."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._lock = threading.Lock()
        self._db = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=FULL")  # fsync the WAL on every commit
        self._db.executescript(_SCHEMA)

    def append(self, record: EpisodeRecord) -> int:
        """Durably store one closed episode and return its seq; a second append of the same id fails."""
        row = (
            record.episode_id,
            record.task_id,
            str(record.kind),
            str(record.status),
            record.reward,
            record.closed_at,
            json.dumps(record.to_dict(), separators=(",", ":")),
        )
        with self._lock:
            cur = self._db.execute(
                "INSERT INTO episodes(episode_id, task_id, kind, status, reward, closed_at, record)"
                " VALUES (?,?,?,?,?,?,?)",
                row,
            )
            return int(cur.lastrowid or 0)

    def get(self, episode_id: str) -> EpisodeRecord | None:
        with self._lock:
            row = self._db.execute("SELECT record FROM episodes WHERE episode_id=?", (episode_id,)).fetchone()
        return EpisodeRecord.from_dict(json.loads(row[0])) if row else None

    def read_from(self, after_seq: int, *, status: EpisodeStatus | None = None) -> Iterator[tuple[int, EpisodeRecord]]:
        """Records with seq > after_seq in order (optionally one status): the trainer's feed."""
        query = "SELECT seq, record FROM episodes WHERE seq > ?"
        args: tuple[object, ...] = (after_seq,)
        if status is not None:
            query += " AND status = ?"
            args += (str(status),)
        with self._lock:
            rows = self._db.execute(query + " ORDER BY seq", args).fetchall()
        for seq, blob in rows:
            yield int(seq), EpisodeRecord.from_dict(json.loads(blob))

    def counts(self) -> dict[str, int]:
        with self._lock:
            rows = self._db.execute("SELECT status, COUNT(*) FROM episodes GROUP BY status").fetchall()
        return {str(status): int(n) for status, n in rows}

    def close(self) -> None:
        with self._lock:
            self._db.close()
