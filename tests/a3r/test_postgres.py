"""A study on a real PostgreSQL server: two campaign workers (own repos, own pools) share it, one is
killed with `kill -9` mid-trial and resumed, and no trial is lost, run twice or committed twice."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import optuna
from optuna.trial import FrozenTrial, TrialState

from agentjet.a3r.repo import CampaignRepo
from agentjet.a3r.session.lock import is_alive, read_heartbeat
from agentjet.a3r.trial.records import is_void
from tests.a3r.campaign_helpers import synthetic_text, trial_commits, wait_until
from tests.postgres import PostgresServer

PROCESS = Path(__file__).with_name("campaign_process.py")
ROOT = Path(__file__).resolve().parents[2]


def _worker(*args: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, str(PROCESS), *args], cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )


def _mid_trial(repo_dir: Path) -> bool:
    beat = read_heartbeat(repo_dir / "runtime") or {}
    return any(r.get("step", 0) >= 1 for r in beat.get("running", []))


def _finish(process: subprocess.Popen[bytes], timeout_s: float = 300) -> None:
    try:
        _, err = process.communicate(timeout=timeout_s)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 0, err.decode(errors="replace")[-3000:]


def _shared_trials(url: str, repo_dir: Path) -> list[FrozenTrial]:
    name = CampaignRepo(repo_dir).settings.study
    return optuna.load_study(study_name=name, storage=url).trials


def _assert_shared_study_is_consistent(url: str, repos: dict[str, Path], search_budget: int) -> list[FrozenTrial]:
    trials = _shared_trials(url, next(iter(repos.values())))
    assert not any(t.state in (TrialState.RUNNING, TrialState.WAITING) for t in trials)
    owners = Counter(t.user_attrs["repo_id"] for t in trials)
    assert set(owners) == set(repos), owners  # every trial was claimed by one of the workers, and each worked
    for repo_id, repo_dir in repos.items():  # each worker committed exactly its own trials, once each
        commits = trial_commits(repo_dir)
        assert len(commits) == len(set(commits))
        assert sorted(commits) == sorted(t.number for t in trials if t.user_attrs["repo_id"] == repo_id)
        assert "campaign finished" in (repo_dir / "decisions.md").read_text()
    searches = sum(t.user_attrs["kind"] == "search" and not is_void(t) for t in trials)
    assert search_budget <= searches <= search_budget + 2  # each worker checks the budget, then asks
    runs = Counter((json.dumps(t.params, sort_keys=True), t.user_attrs["seed"]) for t in trials if not is_void(t))
    assert max(runs.values()) == 1  # no params+seed ran to an end twice
    confirms = [t for t in trials if t.user_attrs["kind"] == "confirm" and not is_void(t)]  # a killed one re-ran
    assert confirms and all(t.state is TrialState.COMPLETE for t in confirms)
    return trials


def test_two_workers_share_one_postgresql_study(tmp_path: Path, postgres: PostgresServer) -> None:
    url = postgres.create_database("two_workers")
    plan = tmp_path / "plan.md"
    plan.write_text(synthetic_text(name="shared", trials=10, steps=20, step_s=0.2, servers=2, confirm=1, storage=url))
    first_dir, second_dir = tmp_path / "first", tmp_path / "second"
    first = _worker("start", str(plan), str(first_dir))
    assert wait_until(lambda: _mid_trial(first_dir), timeout_s=120), "the first worker never started a trial"
    second = _worker("start", str(plan), str(second_dir))  # joins while the first is mid-campaign
    _finish(first)
    _finish(second)

    repos = {CampaignRepo(d).repo_id: d for d in (first_dir, second_dir)}
    assert not (first_dir / "runtime" / "study.db").exists()  # the study lives in PostgreSQL, not the repo
    assert "campaign started: study shared" in (first_dir / "decisions.md").read_text()
    assert "campaign started: joined study shared" in (second_dir / "decisions.md").read_text()
    _assert_shared_study_is_consistent(url, repos, search_budget=10)


def test_a_worker_killed_mid_trial_resumes_its_own_trials_on_the_shared_study(
    tmp_path: Path, postgres: PostgresServer
) -> None:
    url = postgres.create_database("killed_worker")
    plan = tmp_path / "plan.md"
    plan.write_text(synthetic_text(name="killed", trials=10, steps=20, step_s=0.2, servers=2, confirm=1, storage=url))
    victim_dir, survivor_dir = tmp_path / "victim", tmp_path / "survivor"
    victim = _worker("start", str(plan), str(victim_dir))
    try:
        assert wait_until(lambda: _mid_trial(victim_dir), timeout_s=120), "the victim never started a trial"
        survivor = _worker("start", str(plan), str(survivor_dir))
        assert wait_until(lambda: _mid_trial(survivor_dir), timeout_s=120), "the survivor never started a trial"
        victim.kill()  # SIGKILL: no cleanup, its trials stay RUNNING in the shared study
        victim.wait(timeout=30)
    finally:
        if victim.poll() is None:
            victim.kill()
    assert not is_alive(victim_dir / "runtime")
    victim_id = CampaignRepo(victim_dir).repo_id
    interrupted = [
        t.number
        for t in _shared_trials(url, victim_dir)
        if t.state is TrialState.RUNNING and t.user_attrs.get("repo_id") == victim_id
    ]
    assert interrupted, "the victim had no trial running when it was killed"

    _finish(_worker("resume", str(victim_dir)))  # repairs only its own trials; the survivor keeps going
    _finish(survivor)

    repos = {victim_id: victim_dir, CampaignRepo(survivor_dir).repo_id: survivor_dir}
    trials = _assert_shared_study_is_consistent(url, repos, search_budget=10)
    by_number = {t.number: t for t in trials}
    for number in interrupted:
        assert by_number[number].state is TrialState.FAIL and by_number[number].user_attrs["retried"] is True
        assert len([t for t in trials if t.user_attrs.get("retry_of") == number]) == 1
    assert "campaign resumed (session 2)" in (victim_dir / "decisions.md").read_text()
