"""`study_mutex`: two workers doing "is it queued yet? no -> queue it" on one shared study queue it
once, on every storage a shared study can live in (PostgreSQL, a SQLite file, an Optuna journal).

Each worker is a thread with its own storage object (its own connections or file handles), which is
what separate processes have: advisory locks belong to a connection and `flock` to an open file."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable
from pathlib import Path

import optuna
import pytest
from optuna.storages import BaseStorage, RDBStorage
from optuna.storages.journal import JournalFileBackend, JournalStorage
from optuna.trial import TrialState

from agentjet.a3r.plan.campaign_plan import search_space_distributions
from agentjet.a3r.repo import CampaignRepo, CampaignSettings
from agentjet.a3r.session.campaign import Campaign, EngineOptions
from agentjet.a3r.session.scheduler import Scheduler
from agentjet.a3r.session.study_mutex import study_mutex
from tests.a3r.campaign_helpers import synthetic_plan
from tests.postgres import PostgresServer

StorageFactory = Callable[[], tuple[BaseStorage, Path | None]]
STUDY = "shared"


def _factory(kind: str, tmp_path: Path, request: pytest.FixtureRequest) -> StorageFactory:
    if kind == "postgresql":
        server: PostgresServer = request.getfixturevalue("postgres")
        url = server.create_database(f"mutex_{int(time.time() * 1000) % 10**9}")
        return lambda: (RDBStorage(url), None)
    if kind == "sqlite":
        url = f"sqlite:///{tmp_path / 'study.db'}"
        return lambda: (RDBStorage(url), None)
    path = tmp_path / "study.journal"
    return lambda: (JournalStorage(JournalFileBackend(str(path))), path)


def _queue_once(make: StorageFactory, ready: threading.Barrier, *, locked: bool) -> None:
    storage, file = make()
    study = optuna.load_study(study_name=STUDY, storage=storage)
    ready.wait()
    lock = study_mutex(storage, STUDY, file=file) if locked else contextlib.nullcontext()
    with lock:
        queued = any(t.user_attrs.get("kind") == "confirm" for t in study.get_trials(deepcopy=False))
        time.sleep(0.3)  # the window between the check and the write, widened
        if not queued:
            study.enqueue_trial({}, user_attrs={"kind": "confirm"})


def _race(make: StorageFactory, *, locked: bool, workers: int = 3) -> int:
    storage, _ = make()
    optuna.create_study(study_name=STUDY, storage=storage, load_if_exists=True)
    ready = threading.Barrier(workers)
    threads = [
        threading.Thread(target=_queue_once, args=(make, ready), kwargs={"locked": locked}) for _ in range(workers)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert not any(t.is_alive() for t in threads), "a worker never got the lock"
    trials = optuna.load_study(study_name=STUDY, storage=storage).get_trials(deepcopy=False)
    return sum(t.user_attrs.get("kind") == "confirm" for t in trials)


@pytest.mark.parametrize("kind", ["postgresql", "sqlite", "journal"])
def test_check_then_queue_under_the_mutex_queues_once(
    kind: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    assert _race(_factory(kind, tmp_path, request), locked=True) == 1


def test_without_the_mutex_the_same_race_queues_twice(tmp_path: Path, request: pytest.FixtureRequest) -> None:
    """The race is real (so the test above could fail): unlocked, every worker queues its own."""
    assert _race(_factory("sqlite", tmp_path, request), locked=False) == 3


def test_the_lock_is_released_when_the_body_raises(tmp_path: Path, request: pytest.FixtureRequest) -> None:
    make = _factory("journal", tmp_path, request)
    storage, file = make()
    with pytest.raises(RuntimeError), study_mutex(storage, STUDY, file=file):
        raise RuntimeError("boom")
    entered = threading.Event()

    def again() -> None:
        other, other_file = make()
        with study_mutex(other, STUDY, file=other_file):
            entered.set()

    thread = threading.Thread(target=again)
    thread.start()
    thread.join(timeout=10)
    assert entered.is_set()


def _url(kind: str, tmp_path: Path, request: pytest.FixtureRequest) -> str:
    if kind == "postgresql":
        server: PostgresServer = request.getfixturevalue("postgres")
        return server.create_database(f"engines_{int(time.time() * 1000) % 10**9}")
    return f"sqlite:///{tmp_path / 'shared.db'}"


@pytest.mark.parametrize("kind", ["postgresql", "sqlite"])
def test_two_workers_ending_their_search_at_once_queue_one_confirmation(
    kind: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    url = _url(kind, tmp_path, request)
    plan = synthetic_plan(name="ends-together", trials=2, confirm=2, storage=url)
    study = optuna.create_study(study_name=plan.name, storage=url, direction=plan.objective.direction)
    for number in range(2):  # the search both workers see as finished
        trial = study.ask(search_space_distributions(plan))
        trial.set_user_attr("kind", "search")
        trial.set_user_attr("seed", number)
        study.tell(trial, 0.2 + number * 0.3)
    schedulers = []
    for name in ("one", "two"):
        CampaignRepo.create(tmp_path / name, plan, CampaignSettings(study=plan.name, storage=url))
        campaign = Campaign(CampaignRepo(tmp_path / name), options=EngineOptions(synthetic_members=True))
        schedulers.append(campaign._open())
    ready, began = threading.Barrier(2), []

    def end_search(scheduler: Scheduler) -> None:
        ready.wait()
        began.append(scheduler._begin_confirmation())

    threads = [threading.Thread(target=end_search, args=(s,)) for s in schedulers]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert began == [True, True]
    queued = [t for t in study.get_trials(deepcopy=False) if t.state is TrialState.WAITING]
    keys = sorted((t.user_attrs["kind"], t.user_attrs["confirm_index"]) for t in queued)
    assert keys == [("baseline", 0), ("baseline", 1), ("confirm", 0), ("confirm", 1)]
    assert {t.user_attrs["confirm_of"] for t in queued} == {1} and study.user_attrs["confirm_of"] == 1
