"""A lock over one study shared by campaign workers in several processes (or on several machines).

Optuna's storage makes each single write atomic, but not a read-then-write: "are the confirmation
runs queued yet? no -> queue them" done by two workers at once queues them twice, and both run.
Every such check-then-act on the shared study (queueing the confirmation runs, a resumed worker
repairing its half-queued state) runs inside `study_mutex`:

- PostgreSQL: a transaction-scoped advisory lock (`pg_advisory_xact_lock`) keyed by the study
  name, held on its own connection; the server drops it if the worker dies, even by `kill -9`;
- MySQL: `GET_LOCK` on its own connection (dropped with the connection);
- a study in a file (SQLite, an Optuna journal): an exclusive `flock` on `<file>.agentjet-lock`; the kernel
  drops it when the process dies. Workers sharing such a file are on one machine by construction.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import logging
from collections.abc import Iterator
from pathlib import Path

import sqlalchemy
from optuna.storages import BaseStorage, RDBStorage

__all__ = ["study_mutex"]

log = logging.getLogger(__name__)
_MYSQL_WAIT_S = 600


def _lock_key(study_name: str) -> int:
    """A stable signed 64-bit key for the study (advisory locks are keyed by integers)."""
    digest = hashlib.sha256(f"agentjet-a3r-study:{study_name}".encode()).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


@contextlib.contextmanager
def _file_lock(path: Path) -> Iterator[None]:
    with path.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


@contextlib.contextmanager
def _database_lock(engine: sqlalchemy.Engine, study_name: str) -> Iterator[None]:
    dialect = engine.dialect.name
    if dialect == "postgresql":
        with engine.begin() as connection:  # the lock ends with this transaction
            connection.execute(sqlalchemy.text("SELECT pg_advisory_xact_lock(:key)"), {"key": _lock_key(study_name)})
            yield
        return
    if dialect in ("mysql", "mariadb"):
        name = f"agentjet-{_lock_key(study_name):x}"
        with engine.connect() as connection:
            got = connection.execute(
                sqlalchemy.text("SELECT GET_LOCK(:name, :wait)"), {"name": name, "wait": _MYSQL_WAIT_S}
            ).scalar()
            if got != 1:
                raise TimeoutError(f"could not lock study {study_name!r} within {_MYSQL_WAIT_S} s")
            try:
                yield
            finally:
                connection.execute(sqlalchemy.text("SELECT RELEASE_LOCK(:name)"), {"name": name})
        return
    log.warning("no cross-process lock for a %s study; workers sharing it may race", dialect)
    yield


def _sqlite_file(engine: sqlalchemy.Engine) -> Path | None:
    database = engine.url.database
    return Path(database) if database and database != ":memory:" else None


@contextlib.contextmanager
def study_mutex(storage: BaseStorage, study_name: str, *, file: Path | None = None) -> Iterator[None]:
    """Hold the study's cross-process lock for the `with` body. `file`: the study's file, when the
    storage keeps it in one that this module cannot read off the storage (a journal)."""
    if isinstance(storage, RDBStorage) and storage.engine.dialect.name != "sqlite":
        with _database_lock(storage.engine, study_name):
            yield
        return
    if file is None and isinstance(storage, RDBStorage):
        file = _sqlite_file(storage.engine)
    if file is None:
        yield  # an in-memory study lives in one process: the caller's thread lock suffices
        return
    with _file_lock(file.with_name(file.name + ".agentjet-lock")):  # `.lock`: Optuna journal's own
        yield
