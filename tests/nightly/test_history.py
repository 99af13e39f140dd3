"""The history store: round trips on SQLite and PostgreSQL, filters, notes, URLs, and two writing processes."""

from __future__ import annotations

import multiprocessing
import sqlite3
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from agentjet.nightly.history import History, Note
from agentjet.nightly.metrics import Metric, RunRecord
from tests.postgres import PostgresServer, postgres_server

if TYPE_CHECKING:
    from multiprocessing.synchronize import Barrier

LATENCY = Metric("latency", "ms", "lower", repeats=3, description="p50 of one request")
ACCURACY = Metric("accuracy", "", "higher", repeats=1, test="exact", min_effect=0.01, kind="quality")


def record(commit: str, order: int, *, machine: str = "m1", suite: str = "serve", **extra: object) -> RunRecord:
    fields: dict[str, object] = {
        "subject": f"subject of {commit}",
        "date": "2025-03-01T02:00:00+00:00",
        "machine_info": {"cpu": "Xeon", "cores": 16, "gpu": None},
        "packages": {"torch": "2.5.1", "agentjet": "0.1"},
        "samples": {"latency": [10.5, 10.25, 11.0]},
        "metrics": {"latency": LATENCY},
        "details": {"curve": [1.0, 0.5, 0.25], "note": "ünïcode"},
    }
    fields.update(extra)
    return RunRecord(commit=commit, commit_order=order, machine=machine, suite=suite, **fields)  # type: ignore[arg-type]


@pytest.fixture
def store(tmp_path: Path) -> Iterator[History]:
    with History(tmp_path / "nested" / "dir" / "history.db") as history:
        yield history


def test_runs_round_trip_in_history_order(store: History) -> None:
    later = store.append(record("b" * 40, 12, samples={"latency": [9.0, 8.5, 9.5], "accuracy": [0.75]},
                                metrics={"latency": LATENCY, "accuracy": ACCURACY}))  # fmt: skip
    earlier = store.append(record("a" * 40, 11))
    rerun = store.append(record("b" * 40, 12, samples={"latency": [7.0, 7.0, 7.0]}))
    assert later.run_id is not None and earlier.run_id is not None and rerun.run_id is not None
    assert len({later.run_id, earlier.run_id, rerun.run_id}) == 3
    got = store.runs()
    assert got == [earlier, later, rerun]  # commit_order first, then run id; everything read back equal
    assert got[1].samples == {"latency": [9.0, 8.5, 9.5], "accuracy": [0.75]}  # sample order kept
    assert got[1].metrics["accuracy"] == ACCURACY and got[1].details["note"] == "ünïcode"
    assert got[0].machine_info == {"cpu": "Xeon", "cores": 16, "gpu": None}


def test_an_infra_failure_is_stored_like_any_run(store: History) -> None:
    failed = store.append(record("c" * 40, 3, status="infra_failure", error="pip install failed:\nno space left",
                                 samples={}, metrics={}))  # fmt: skip
    (back,) = store.runs(status="infra_failure")
    assert back == failed and back.error == "pip install failed:\nno space left" and back.samples == {}
    assert store.runs(status="ok") == []


def test_runs_filter_by_machine_suite_commits_and_status(store: History) -> None:
    store.append(record("a", 1, machine="m1", suite="serve"))
    store.append(record("b", 2, machine="m2", suite="serve"))
    store.append(record("c", 3, machine="m1", suite="train"))
    store.append(record("d", 4, machine="m1", suite="serve", status="infra_failure", samples={}))
    assert [r.commit for r in store.runs(machine="m1")] == ["a", "c", "d"]
    assert [r.commit for r in store.runs(suite="serve")] == ["a", "b", "d"]
    assert [r.commit for r in store.runs(machine="m1", suite="serve", status="ok")] == ["a"]
    assert [r.commit for r in store.runs(commits=["d", "b", "zz"])] == ["b", "d"]
    assert store.runs(commits=[]) == []
    assert store.runs(machine="m1", suite="serve", commits=["d"])[0].samples == {}  # filters reach the samples
    assert store.machines() == ["m1", "m2"]


def test_metrics_gives_the_newest_declaration(store: History) -> None:
    assert store.metrics() == {}
    store.append(record("a", 1))
    stricter = Metric("latency", "ms", "lower", repeats=7, min_effect=0.02)
    store.append(record("b", 2, metrics={"latency": stricter, "accuracy": ACCURACY}))
    store.append(record("c", 3, metrics={}))  # a run that declared nothing does not erase declarations
    assert store.metrics() == {"latency": stricter, "accuracy": ACCURACY}


def test_notes_are_kept_oldest_first(store: History) -> None:
    store.add_note("rerecord", "torch 2.5 changes the loss curve", commit="abc", date="2025-02-02T00:00:00+00:00")
    store.add_note("accept", "slower but correct", date="2025-01-01T00:00:00+00:00")
    store.add_note("rerecord", "new tokenizer")
    assert [n.text for n in store.notes()] == ["slower but correct", "torch 2.5 changes the loss curve",
                                               "new tokenizer"]  # fmt: skip
    first, latest = store.notes("rerecord")
    assert first == Note("rerecord", "torch 2.5 changes the loss curve", "abc", "2025-02-02T00:00:00+00:00")
    assert latest.commit is None and datetime.fromisoformat(latest.date).utcoffset() is not None
    assert store.notes("nothing") == []


def test_the_history_persists_across_opens_and_url_forms(tmp_path: Path) -> None:
    path = tmp_path / "h.db"
    with History(str(path)) as first:
        stored = first.append(record("a", 1))
    assert path.is_file()
    with History(f"sqlite:///{path}") as again, History(path) as third:
        assert again.runs() == [stored] == third.runs()
        assert again.url == f"sqlite:///{path}" and str(path) in repr(third)
    with History("sqlite://") as memory:  # in memory: one connection, so the tables stay
        assert memory.append(record("a", 1)).run_id == 1 and len(memory.runs()) == 1


@pytest.mark.parametrize("url", ["mysql://root:hunter2@db/nightly", "http://user:hunter2@example.com/x"])
def test_an_unsupported_url_is_a_one_line_error_without_the_password(url: str) -> None:
    with pytest.raises(ValueError, match="unsupported history URL") as info:
        History(url)
    assert "hunter2" not in str(info.value) and "\n" not in str(info.value)


def _append_many(path: str, writer: int, count: int, start: Barrier) -> None:
    """One of two writing processes: opens the history, waits for the other, then appends `count` runs."""
    with History(path) as history:
        start.wait(60)
        for i in range(count):
            history.append(record(f"w{writer}-{i}", i, samples={"latency": [float(writer), float(i), 1.0]}))


def test_two_processes_appending_at_once_lose_nothing(tmp_path: Path) -> None:
    path = str(tmp_path / "shared.db")
    History(path).close()  # tables exist; the writers race only on rows
    context = multiprocessing.get_context("spawn")
    start = context.Barrier(2)
    workers = [context.Process(target=_append_many, args=(path, w, 30, start)) for w in (1, 2)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(60)
    assert [w.exitcode for w in workers] == [0, 0]
    with History(path) as history:
        runs = history.runs()
    assert len(runs) == 60 and len({r.run_id for r in runs}) == 60
    assert {r.commit for r in runs} == {f"w{w}-{i}" for w in (1, 2) for i in range(30)}
    assert all(r.samples["latency"] == [float(r.commit[1]), float(r.commit_order), 1.0] for r in runs)
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)


@pytest.fixture(scope="module")
def postgres() -> Iterator[PostgresServer]:
    """A throwaway PostgreSQL (skips without one; fails instead with AGENTJET_REQUIRE_POSTGRES=1)."""
    with postgres_server() as server:
        yield server


def test_a_postgresql_round_trip(postgres: PostgresServer) -> None:
    url = postgres.create_database("nightly_history").replace(
        "postgresql+psycopg://agentjet@", "postgresql://agentjet:s3cret@"
    )
    with History(url) as history:  # plain postgresql:// gets the psycopg 3 driver; trust auth ignores the password
        assert history.url.startswith("postgresql+psycopg://agentjet:***@") and "s3cret" not in repr(history)
        stored = history.append(record("a" * 40, 1, samples={"latency": [0.1, 1e-9, 12345.678]}))
        failed = history.append(record("b" * 40, 2, status="infra_failure", error="boom", samples={}))
        history.add_note("rerecord", "why", commit="a" * 40)
        assert history.runs() == [stored, failed]
        assert history.runs(status="infra_failure") == [failed] and history.machines() == ["m1"]
        assert history.metrics() == {"latency": LATENCY}
        assert [n.text for n in history.notes("rerecord")] == ["why"]
    with History(url) as reopened:  # tables already there
        assert len(reopened.runs()) == 2
