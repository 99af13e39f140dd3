"""The nightly history store: every suite run of every commit, its raw samples and the metric declarations
it measured under, in one SQL database (SQLAlchemy Core).

Raw samples are kept, not summaries, so detection can be re-run with other thresholds and a dashboard can
show distributions. One SQLite file serves a single machine (several nightly processes may write to it at
once: WAL mode, a busy timeout and `BEGIN IMMEDIATE` serialise the writers); PostgreSQL serves a fleet.
Notes (why a reference curve was re-recorded, why a regression was accepted) live next to the runs.
"""

from __future__ import annotations

import dataclasses
import json
import re
import sqlite3
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Any

from sqlalchemy import (
    Column,
    Double,
    Engine,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    PrimaryKeyConstraint,
    Select,
    Table,
    Text,
    create_engine,
    event,
    func,
    select,
)
from sqlalchemy.engine import URL, make_url
from sqlalchemy.exc import ArgumentError, SQLAlchemyError
from sqlalchemy.pool import StaticPool

from agentjet.nightly.metrics import Metric, RunRecord

__all__ = ["History", "Note"]

_SQLITE_BUSY_TIMEOUT_S = 60.0  # a writer waits this long for another process's transaction to finish
_URL_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]*://")

_meta = MetaData()
_runs = Table(
    "nightly_runs",
    _meta,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("commit", Text, nullable=False),
    Column("commit_order", Integer, nullable=False),
    Column("subject", Text, nullable=False),
    Column("date", Text, nullable=False),
    Column("machine", Text, nullable=False),
    Column("machine_info", Text, nullable=False),  # JSON
    Column("packages", Text, nullable=False),  # JSON
    Column("suite", Text, nullable=False),
    Column("status", Text, nullable=False),
    Column("error", Text, nullable=True),
    Column("details", Text, nullable=False),  # JSON
    Index("ix_nightly_runs_machine_suite", "machine", "suite"),
    Index("ix_nightly_runs_commit_order", "commit_order"),
)
_samples = Table(
    "nightly_samples",
    _meta,
    Column("run_id", Integer, ForeignKey("nightly_runs.id", ondelete="CASCADE"), nullable=False),
    Column("metric", Text, nullable=False),
    Column("idx", Integer, nullable=False),
    Column("value", Double, nullable=False),
    PrimaryKeyConstraint("run_id", "metric", "idx", name="pk_nightly_samples"),
    Index("ix_nightly_samples_run_id", "run_id"),
)
_decls = Table(
    "nightly_metric_decls",
    _meta,
    Column("run_id", Integer, ForeignKey("nightly_runs.id", ondelete="CASCADE"), nullable=False),
    Column("name", Text, nullable=False),
    Column("decl", Text, nullable=False),  # JSON of Metric.to_dict()
    PrimaryKeyConstraint("run_id", "name", name="pk_nightly_metric_decls"),
    Index("ix_nightly_metric_decls_name", "name"),
)
_notes = Table(
    "nightly_notes",
    _meta,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("kind", Text, nullable=False),
    Column("text", Text, nullable=False),
    Column("commit", Text, nullable=True),
    Column("date", Text, nullable=False),
    Index("ix_nightly_notes_kind", "kind"),
)


@dataclass(frozen=True)
class Note:
    """A human remark kept with the history, e.g. kind="rerecord" and why a reference curve was re-recorded."""

    kind: str
    text: str
    commit: str | None
    date: str


def _resolve_url(url: str | Path) -> URL:
    """A path or URL -> the SQLAlchemy URL to open (plain PostgreSQL gets the psycopg 3 driver)."""
    if isinstance(url, Path) or not _URL_SCHEME.match(url):
        path = Path(url).expanduser().resolve()
        return URL.create("sqlite", database=str(path))
    try:
        parsed = make_url(url)
    except ArgumentError as exc:
        raise ValueError(f"cannot parse history URL {_masked(url)!r}: {exc}") from None
    backend = parsed.get_backend_name()
    if backend == "sqlite" and parsed.get_driver_name() == "pysqlite":
        return parsed
    if backend in ("postgresql", "postgres"):
        return parsed.set(drivername="postgresql+psycopg")
    raise ValueError(
        f"unsupported history URL {parsed.render_as_string(hide_password=True)!r}: "
        "use sqlite:///PATH, postgresql://USER@HOST/DB or a file path"
    )


def _masked(url: str) -> str:
    """`url` with any password replaced, for error messages about URLs that did not parse."""
    return re.sub(r"(://[^:/@]*:)[^@]*@", r"\1***@", url)


def _sqlite_engine(url: URL) -> Engine:
    """SQLite that tolerates several writing processes: WAL, a busy timeout, and transactions that take the
    write lock up front (a deferred transaction that upgrades its lock fails at once instead of waiting)."""
    database = url.database or ""
    in_memory = database in ("", ":memory:")
    if not in_memory:
        Path(database).parent.mkdir(parents=True, exist_ok=True)
    kwargs: dict[str, Any] = {"connect_args": {"timeout": _SQLITE_BUSY_TIMEOUT_S, "check_same_thread": False}}
    if in_memory:
        kwargs["poolclass"] = StaticPool  # one connection, or every checkout would see a fresh empty database
    engine = create_engine(url, **kwargs)

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: sqlite3.Connection, _record: object) -> None:
        dbapi_connection.isolation_level = None  # let SQLAlchemy's BEGIN below be the only one
        if not in_memory:
            dbapi_connection.execute("PRAGMA journal_mode=WAL")
        dbapi_connection.execute("PRAGMA foreign_keys=ON")

    @event.listens_for(engine, "begin")
    def _on_begin(connection: Any) -> None:
        connection.exec_driver_sql("BEGIN IMMEDIATE")

    return engine


def _dumps(value: Mapping[str, Any]) -> str:
    return json.dumps(dict(value), sort_keys=True)


class History:
    """The nightly runs of one database. Open with a file path, `sqlite:///PATH` or a PostgreSQL URL;
    tables are created when missing, so a fresh path is a fresh history."""

    def __init__(self, url: str | Path) -> None:
        self._url = _resolve_url(url)
        if self._url.get_backend_name() == "sqlite":
            self._engine = _sqlite_engine(self._url)
        else:
            self._engine = create_engine(self._url, pool_pre_ping=True)
        self._create_tables()

    def _create_tables(self) -> None:
        """Create missing tables; a second process creating them at the same moment is not an error."""
        try:
            _meta.create_all(self._engine)
        except SQLAlchemyError:
            _meta.create_all(self._engine)  # the other creator has finished: now every table exists

    @property
    def url(self) -> str:
        """The database URL with any password masked (safe to log and show)."""
        return self._url.render_as_string(hide_password=True)

    def __repr__(self) -> str:
        return f"History({self.url!r})"

    __str__ = __repr__

    # ---- writing ------------------------------------------------------------------------------------

    def append(self, run: RunRecord) -> RunRecord:
        """Store one run with its samples and metric declarations atomically; returns it with `run_id` set."""
        row = {
            "commit": run.commit,
            "commit_order": run.commit_order,
            "subject": run.subject,
            "date": run.date,
            "machine": run.machine,
            "machine_info": _dumps(run.machine_info),
            "packages": _dumps(run.packages),
            "suite": run.suite,
            "status": run.status,
            "error": run.error,
            "details": _dumps(run.details),
        }
        with self._engine.begin() as conn:
            key = conn.execute(_runs.insert().values(**row)).inserted_primary_key
            if key is None:  # cannot happen for a single-row insert; keeps the type checker honest
                raise RuntimeError("the database did not report the new run's id")
            run_id = int(key[0])
            samples = [
                {"run_id": run_id, "metric": name, "idx": i, "value": float(value)}
                for name, values in run.samples.items()
                for i, value in enumerate(values)
            ]
            if samples:
                conn.execute(_samples.insert(), samples)
            decls = [
                {"run_id": run_id, "name": name, "decl": _dumps(metric.to_dict())}
                for name, metric in run.metrics.items()
            ]
            if decls:
                conn.execute(_decls.insert(), decls)
        return dataclasses.replace(run, run_id=run_id)

    def add_note(self, kind: str, text: str, *, commit: str | None = None, date: str | None = None) -> None:
        """Keep a human remark (e.g. why a reference was re-recorded); `date` defaults to now, UTC ISO-8601."""
        when = date if date is not None else datetime.now(UTC).isoformat(timespec="seconds")
        with self._engine.begin() as conn:
            conn.execute(_notes.insert().values(kind=kind, text=text, commit=commit, date=when))

    # ---- reading ------------------------------------------------------------------------------------

    def runs(
        self,
        *,
        machine: str | None = None,
        suite: str | None = None,
        commits: Sequence[str] | None = None,
        status: str | None = None,
    ) -> list[RunRecord]:
        """The matching runs in history order (commit_order, then run_id), samples and metrics filled in."""
        query: Select[Any] = select(_runs)
        if machine is not None:
            query = query.where(_runs.c.machine == machine)
        if suite is not None:
            query = query.where(_runs.c.suite == suite)
        if commits is not None:
            query = query.where(_runs.c.commit.in_(list(commits)))
        if status is not None:
            query = query.where(_runs.c.status == status)
        ids = query.with_only_columns(_runs.c.id).scalar_subquery()
        with self._engine.begin() as conn:
            rows = conn.execute(query.order_by(_runs.c.commit_order, _runs.c.id)).mappings().all()
            sample_rows = conn.execute(
                select(_samples).where(_samples.c.run_id.in_(ids)).order_by(_samples.c.run_id, _samples.c.idx)
            ).all()
            decl_rows = conn.execute(select(_decls).where(_decls.c.run_id.in_(ids))).all()
        samples: dict[int, dict[str, list[float]]] = {}
        for s in sample_rows:
            samples.setdefault(s.run_id, {}).setdefault(s.metric, []).append(float(s.value))
        metrics: dict[int, dict[str, Metric]] = {}
        for d in decl_rows:
            metrics.setdefault(d.run_id, {})[d.name] = Metric.from_dict(json.loads(d.decl))
        return [
            RunRecord(
                commit=r["commit"],
                commit_order=r["commit_order"],
                subject=r["subject"],
                date=r["date"],
                machine=r["machine"],
                machine_info=json.loads(r["machine_info"]),
                packages=json.loads(r["packages"]),
                suite=r["suite"],
                status=r["status"],
                error=r["error"],
                samples=samples.get(r["id"], {}),
                metrics=metrics.get(r["id"], {}),
                details=json.loads(r["details"]),
                run_id=r["id"],
            )
            for r in rows
        ]

    def notes(self, kind: str | None = None) -> list[Note]:
        """The notes (of one kind, if given), oldest first."""
        query = select(_notes).order_by(_notes.c.date, _notes.c.id)
        if kind is not None:
            query = query.where(_notes.c.kind == kind)
        with self._engine.begin() as conn:
            rows = conn.execute(query).all()
        return [Note(kind=r.kind, text=r.text, commit=r.commit, date=r.date) for r in rows]

    def metrics(self) -> dict[str, Metric]:
        """The newest declaration (latest stored run) of every metric ever measured, by name."""
        newest = select(_decls.c.name, func.max(_decls.c.run_id).label("run_id")).group_by(_decls.c.name).subquery()
        query = (
            select(_decls.c.name, _decls.c.decl)
            .join(newest, (_decls.c.name == newest.c.name) & (_decls.c.run_id == newest.c.run_id))
            .order_by(_decls.c.name)
        )
        with self._engine.begin() as conn:
            rows = conn.execute(query).all()
        return {r.name: Metric.from_dict(json.loads(r.decl)) for r in rows}

    def machines(self) -> list[str]:
        """Every machine fingerprint with at least one run, sorted."""
        with self._engine.begin() as conn:
            return list(conn.execute(select(_runs.c.machine).distinct().order_by(_runs.c.machine)).scalars())

    # ---- lifetime -----------------------------------------------------------------------------------

    def close(self) -> None:
        """Release the connection pool (the data is already committed)."""
        self._engine.dispose()

    def __enter__(self) -> History:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()
