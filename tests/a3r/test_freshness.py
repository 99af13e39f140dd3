"""The freshness proof: a server that reports a step or pooled episodes is restarted (local) or refused (remote),
a trial's first step must be the server's step 1, and a local server never starts on an old state dir."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import psutil
import pytest

from agentjet.a3r.errors import StaleServer
from agentjet.a3r.plan.campaign_plan import parse_plan, trial_setup
from agentjet.a3r.pool.freshness import check_first_step, ensure_fresh, stale_reason
from agentjet.a3r.pool.local_server import LocalMember
from agentjet.a3r.pool.members import PoolMember
from agentjet.a3r.pool.servers import ServerPool
from agentjet.a3r.trial.runner import run_trial
from agentjet.core import TrainConfig
from tests.a3r.test_trial import TINY_PLAN

UNTOUCHED: dict[str, Any] = {
    "state": "rolling", "step": 0, "episodes": {"in_flight": 0, "finished": 0, "aborted": 0, "reclaimed": 0},
    "pool": {"pooled_episodes": 0}, "latest_metrics": None,
}  # fmt: skip
TRAINED = {**UNTOUCHED, "step": 3, "latest_metrics": {"step": 3}}


class _Client:
    def __init__(self, member: _FakeMember) -> None:
        self.member = member

    def __enter__(self) -> _Client:
        return self

    def __exit__(self, *exc_info: object) -> None:
        return None

    def status(self) -> dict[str, Any]:
        return self.member.status


class _FakeMember(PoolMember):
    """A member whose server answers `status`; a restart gives it `after_restart`."""

    def __init__(self, status: dict[str, Any], *, restartable: bool, after_restart: dict[str, Any] = UNTOUCHED):
        super().__init__("fake-0", "http://fake", "t" * 36, "tiny")
        self.status, self.restartable, self.after_restart = status, restartable, after_restart
        self.restarted: list[tuple[str | None, TrainConfig | None]] = []

    def client(self, *, retries: int = 2, timeout_s: float = 60.0) -> Any:
        return _Client(self)

    def restart(self, *, model: str | None = None, config: TrainConfig | None = None) -> None:
        self.restarted.append((model, config))
        self.status = self.after_restart


def test_stale_reason_names_every_sign_of_an_earlier_run() -> None:
    assert stale_reason(UNTOUCHED) is None
    assert stale_reason(TRAINED) == "step 3, a metrics line of step 3"
    pooled = {**UNTOUCHED, "episodes": {"finished": 4}, "pool": {"pooled_episodes": 4}}
    assert stale_reason(pooled) == "episodes 4 finished, 4 pooled episodes"  # restored from an old journal
    assert stale_reason({**UNTOUCHED, "step": None}) == "step None"  # a reply without a step proves nothing


def test_a_stale_restartable_member_is_restarted_once_on_an_empty_state_dir() -> None:
    config = TrainConfig()
    member = _FakeMember(TRAINED, restartable=True)
    ensure_fresh(member, "tiny", config)
    assert member.restarted == [("tiny", config)] and not member.fresh
    ensure_fresh(member, "tiny", config)  # untouched now: no second restart
    assert len(member.restarted) == 1


def test_a_member_still_stale_after_its_restart_or_one_that_cannot_restart_is_refused() -> None:
    stuck = _FakeMember(TRAINED, restartable=True, after_restart=TRAINED)
    with pytest.raises(StaleServer, match="step 3.*even after a restart"):
        ensure_fresh(stuck, "tiny", TrainConfig())
    remote = _FakeMember(TRAINED, restartable=False)
    with pytest.raises(StaleServer, match="fresh --state-dir") as refused:
        ensure_fresh(remote, "tiny", TrainConfig())
    assert remote.restarted == [] and refused.value.server == "fake-0"
    ensure_fresh(_FakeMember(UNTOUCHED, restartable=False), "tiny", TrainConfig())  # an untouched one is used


def test_the_first_step_of_a_trial_must_be_the_servers_step_1() -> None:
    check_first_step("s", {**UNTOUCHED, "step": 1, "latest_metrics": {"step": 1}})
    with pytest.raises(StaleServer, match="at step 4 .*step 4.*not 1"):
        check_first_step("s", {**UNTOUCHED, "step": 4, "latest_metrics": {"step": 4}})
    with pytest.raises(StaleServer, match="not 1"):
        check_first_step("s", {**UNTOUCHED, "step": 1, "latest_metrics": None})


def test_a_local_member_starts_on_an_empty_state_dir_and_stops_a_leftover_server_first(tmp_path: Path) -> None:
    home = tmp_path / "local-0"
    state = home / "state"
    state.mkdir(parents=True)
    (state / "journal.sqlite").write_text("an earlier session's journal")
    leftover = subprocess.Popen(  # stands in for a killed campaign's server, still running on state/
        [sys.executable, "-c", "import time; time.sleep(120)", "--state-dir", str(state)], start_new_session=True
    )
    (home / "server.pid").write_text(f"{leftover.pid}\n")
    # a leftover of an earlier process runs its own command line long since; until exec, a fresh child's
    # /proc cmdline is still pytest's, and a pid naming no server of this dir is rightly left alone
    deadline = time.monotonic() + 30
    while str(state) not in " ".join(psutil.Process(leftover.pid).cmdline()):
        assert time.monotonic() < deadline, "the stand-in leftover never started"
        time.sleep(0.01)
    member = LocalMember("local-0", home, model="tiny")
    try:
        member.spawn()
        assert leftover.poll() is not None  # stopped (and reaped) before its dir was deleted
        assert not (state / "journal.sqlite").exists() and member.fresh
        assert (home / "server.pid").read_text().strip() == str(member.pid)
    finally:
        member.stop()
        if leftover.poll() is None:
            leftover.kill()


def test_a_pid_file_naming_another_process_is_left_alone(tmp_path: Path) -> None:
    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"], start_new_session=True)
    home = tmp_path / "local-0"
    home.mkdir()
    (home / "server.pid").write_text(f"{other.pid}\n")  # a reused pid: not a server of this state dir
    member = LocalMember("local-0", home, model="tiny")
    try:
        member.spawn()
        assert other.poll() is None and psutil.pid_exists(other.pid)
    finally:
        member.stop()
        other.kill()
        other.wait()


def test_a_trial_on_a_member_wrongly_flagged_fresh_restarts_it_and_trains_from_step_1(
    tiny_pool: ServerPool, tmp_path: Path
) -> None:
    plan = parse_plan(TINY_PLAN)
    setup = trial_setup(plan, {"lr": 1e-3, "lora_rank": 2})
    options: dict[str, Any] = {"task": plan.task, "steps": 2, "eval_every": 2, "eval_items": 1, "seed": 0}
    with tiny_pool.lease(timeout=60) as member:
        run_trial(member, setup, **options)
        assert member.client().status()["step"] >= 1
        pid = member.pid
        member.fresh = True  # the bookkeeping lies: the server has trained
        result = run_trial(member, setup, **options, out_dir=tmp_path)
        assert member.pid != pid  # restarted on an empty state dir, not configured as it was
    lines = [json.loads(line) for line in (tmp_path / "metrics.jsonl").read_text().splitlines()]
    assert result.steps_done == 2 and [s for s, _ in result.curve] == [2]
    assert [line["step"] for line in lines] == [1, 2] and [line["server"]["step"] for line in lines] == [1, 2]
