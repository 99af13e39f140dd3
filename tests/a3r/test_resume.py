"""Resume: after `kill -9` of the campaign process, or a crash between `tell` and the commit, nothing
is lost or run twice, the git log has one commit per trial, and the export holds every trial."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import optuna
import pytest
from optuna.distributions import CategoricalDistribution, FloatDistribution
from optuna.trial import TrialState

from agentjet.a3r.errors import CampaignError
from agentjet.a3r.repo import CampaignRepo
from agentjet.a3r.session.campaign import EngineOptions, resume_campaign, start_campaign
from agentjet.a3r.session.lock import is_alive, read_heartbeat
from agentjet.a3r.session.resume import reconcile_study
from agentjet.a3r.trial.records import is_void
from tests.a3r.campaign_helpers import load_study, synthetic_plan, synthetic_text, trial_commits, wait_until

SYNTH = EngineOptions(synthetic_members=True, heartbeat_s=0.1, pool_heartbeat_s=0.05)
PROCESS = Path(__file__).with_name("campaign_process.py")
DISTS = {"lr": FloatDistribution(1e-5, 1e-2, log=True), "lora_rank": CategoricalDistribution([4, 8, 16, 32])}


def _running_mid_trial(repo_dir: Path) -> bool:
    beat = read_heartbeat(repo_dir / "runtime") or {}
    return any(r.get("step", 0) >= 1 for r in beat.get("running", [])) and bool(trial_commits(repo_dir))


def test_kill_9_mid_trial_then_resume_loses_nothing_and_runs_nothing_twice(tmp_path: Path) -> None:
    plan_file = tmp_path / "plan.md"
    plan_file.write_text(synthetic_text(name="killed", trials=6, steps=10, step_s=0.2, servers=2, confirm=1))
    repo_dir = tmp_path / "campaign"
    process = subprocess.Popen(
        [sys.executable, str(PROCESS), "start", str(plan_file), str(repo_dir)],
        cwd=Path(__file__).resolve().parents[2], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip
    try:
        assert wait_until(lambda: is_alive(repo_dir / "runtime"), timeout_s=120), process.stderr
        with pytest.raises(CampaignError, match="already running"):  # the live process holds the lock
            resume_campaign(repo_dir, options=SYNTH)
        assert wait_until(lambda: _running_mid_trial(repo_dir), timeout_s=120), process.stderr
        os.kill(process.pid, signal.SIGKILL)
        process.wait(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
    assert not is_alive(repo_dir / "runtime")  # the kernel dropped the lock with the process
    before = load_study(repo_dir).trials
    interrupted = {t.number: t for t in before if t.state is TrialState.RUNNING}
    finished_before = {t.number for t in before if t.state.is_finished()}
    assert interrupted and finished_before

    result = resume_campaign(repo_dir, options=SYNTH)

    assert result.finished
    trials = load_study(repo_dir).trials
    assert not any(t.state in (TrialState.RUNNING, TrialState.WAITING) for t in trials)
    by_number = {t.number: t for t in trials}
    for number, old in interrupted.items():
        void = by_number[number]
        assert void.state is TrialState.FAIL and void.user_attrs["retried"] is True
        assert "campaign process died" in void.user_attrs["fail_reason"]
        assert void.user_attrs["seed"] == old.user_attrs.get("seed", number)  # asked ahead: not tagged yet
        reruns = [t for t in trials if t.user_attrs.get("retry_of") == number]
        assert len(reruns) == 1, f"trial {number} re-ran {len(reruns)} times"
        assert reruns[0].state in (TrialState.COMPLETE, TrialState.PRUNED)
        assert reruns[0].params == old.params and reruns[0].user_attrs["seed"] == void.user_attrs["seed"]
    for number in finished_before:  # finished trials keep their state and never run again
        assert by_number[number].state is next(t.state for t in before if t.number == number)
        assert not any(t.user_attrs.get("retry_of") == number for t in trials)
    runs = Counter((json.dumps(t.params, sort_keys=True), t.user_attrs["seed"]) for t in trials if not is_void(t))
    assert max(runs.values()) == 1  # no params+seed ran to an end twice
    assert sum(t.user_attrs["kind"] == "search" and not is_void(t) for t in trials) == 6
    commits = trial_commits(repo_dir)
    assert len(commits) == len(set(commits)) and sorted(commits) == sorted(by_number)  # one commit each
    export = json.loads((repo_dir / "study.json").read_text())
    assert sorted(r["number"] for r in export["trials"]) == sorted(by_number)
    decisions = (repo_dir / "decisions.md").read_text()
    assert "campaign resumed (session 2)" in decisions and "campaign finished" in decisions
    for number in interrupted:
        assert f"trial {number} was running when the campaign process died" in decisions


def test_a_crash_between_tell_and_commit_is_committed_on_resume_not_rerun(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo_dir = tmp_path / "c"
    original = CampaignRepo.record_trial
    crashed: list[int] = []

    def record_or_crash(self: CampaignRepo, trial: Any, *args: Any, **kwargs: Any) -> str | None:
        if trial.number == 2 and not crashed:
            crashed.append(trial.number)
            raise OSError("disk full (simulated)")
        return original(self, trial, *args, **kwargs)

    monkeypatch.setattr(CampaignRepo, "record_trial", record_or_crash)
    with pytest.raises(CampaignError, match="disk full"):
        start_campaign(synthetic_plan(trials=4, servers=1, confirm=0), repo_dir, options=SYNTH)
    told = load_study(repo_dir).trials[2]
    assert told.state is TrialState.COMPLETE and 2 not in trial_commits(repo_dir)

    assert resume_campaign(repo_dir, options=SYNTH).finished
    trials = load_study(repo_dir).trials
    assert trials[2].state is TrialState.COMPLETE and trials[2].value == told.value
    assert not any(t.user_attrs.get("retry_of") == 2 for t in trials)
    commits = trial_commits(repo_dir)
    assert commits.count(2) == 1 and sorted(commits) == [t.number for t in trials]
    assert "trials [2] had ended without a commit: committed now" in (repo_dir / "decisions.md").read_text()
    assert resume_campaign(repo_dir, options=SYNTH).finished  # a finished campaign: nothing runs, nothing commits
    assert trial_commits(repo_dir) == commits


def _study_with(states: list[str]) -> optuna.Study:
    study = optuna.create_study(direction="maximize")
    for index, state in enumerate(states):
        trial = study.ask(DISTS)
        for key, value in {"kind": "search", "seed": index, "attempt": 0, "repo_id": "r"}.items():
            trial.set_user_attr(key, value)
        if state == "complete":
            study.tell(trial, 0.1 * index)
        elif state == "void-unqueued":  # died between tell(FAIL) and enqueue_trial
            trial.set_user_attr("retried", True)
            trial.set_user_attr("fail_reason", "server lost")
            study.tell(trial, state=TrialState.FAIL)
        elif state == "last-attempt":
            trial.set_user_attr("attempt", 2)
    return study


def test_reconcile_requeues_each_void_trial_once_and_respects_max_attempts() -> None:
    study = _study_with(["complete", "running", "void-unqueued", "last-attempt"])
    options: dict[str, Any] = {"repo_id": "r", "local_storage": True, "max_attempts": 3, "confirm": 0, "base_seed": 0}
    notes = reconcile_study(study, **options)
    assert len(notes) == 3
    assert reconcile_study(study, **options) == []  # idempotent
    trials = study.get_trials()
    assert [t.state for t in trials[:4]] == [TrialState.COMPLETE, TrialState.FAIL, TrialState.FAIL, TrialState.FAIL]
    queued = [t for t in trials if t.state is TrialState.WAITING]
    assert sorted(t.user_attrs["retry_of"] for t in queued) == [1, 2]
    assert all(t.user_attrs["attempt"] == 1 and t.user_attrs["seed"] == t.user_attrs["retry_of"] for t in queued)
    assert trials[3].user_attrs["retried"] is False  # its third run failed: the failure stands


def test_reconcile_leaves_other_repos_running_trials_on_a_shared_study() -> None:
    study = _study_with(["running"])
    notes = reconcile_study(study, repo_id="another", local_storage=False, max_attempts=3, confirm=0, base_seed=0)
    assert notes == [] and study.get_trials()[0].state is TrialState.RUNNING


def test_reconcile_queues_missing_confirmation_runs_and_their_baseline_pairs() -> None:
    study = _study_with(["complete", "complete"])
    study.set_user_attr("confirm_of", 1)
    study.set_user_attr("baseline_runs", True)
    study.enqueue_trial(study.trials[1].params, user_attrs={"kind": "confirm", "confirm_index": 0, "confirm_of": 1})
    notes = reconcile_study(study, repo_id="r", local_storage=True, max_attempts=3, confirm=2, base_seed=0)
    queued = "[('baseline', 0), ('confirm', 1), ('baseline', 1)]"
    assert notes == [f"confirmation runs {queued} of trial 1 were decided but never queued: queued now"]
    assert reconcile_study(study, repo_id="r", local_storage=True, max_attempts=3, confirm=2, base_seed=0) == []
    runs = [t for t in study.get_trials() if t.user_attrs.get("kind") in ("confirm", "baseline")]
    assert sorted((t.user_attrs["kind"], t.user_attrs["confirm_index"]) for t in runs) == [
        ("baseline", 0), ("baseline", 1), ("confirm", 0), ("confirm", 1),
    ]  # fmt: skip
    baseline = [t for t in runs if t.user_attrs["kind"] == "baseline"]
    assert all(t.params == {} and t.user_attrs["seed"] == 100_000 + t.user_attrs["confirm_index"] for t in baseline)
