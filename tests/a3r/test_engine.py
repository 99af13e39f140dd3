"""The campaign engine on synthetic trials: states, commits, decisions, confirmation, lost servers, stops."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import git
import pytest
import yaml
from optuna.trial import TrialState
from typer.testing import CliRunner

from agentjet.a3r.errors import CampaignError
from agentjet.a3r.plan.campaign_plan import parse_plan
from agentjet.a3r.pool.members import SyntheticMember
from agentjet.a3r.pool.servers import ServerPool
from agentjet.a3r.repo import CampaignRepo, CampaignSettings
from agentjet.a3r.session.campaign import Campaign, EngineOptions, resume_campaign, start_campaign
from agentjet.a3r.session.lock import is_alive, request_stop
from agentjet.a3r.session.timing import CampaignResult
from agentjet.a3r.session.trial_worker import RunningTrial
from agentjet.cli.main import app
from tests.a3r.campaign_helpers import (
    commit_subjects,
    load_study,
    synthetic_plan,
    synthetic_text,
    trial_commits,
    wait_until,
)

SYNTH = EngineOptions(synthetic_members=True, heartbeat_s=0.1, pool_heartbeat_s=0.05)


def test_a_synthetic_campaign_runs_searches_confirms_and_commits_every_trial(tmp_path: Path) -> None:
    repo_dir = tmp_path / "campaign"
    result = start_campaign(synthetic_plan(trials=6, confirm=2), repo_dir, options=SYNTH)

    assert result.finished and result.stopped is None
    trials = load_study(repo_dir).trials
    search = [t for t in trials if t.user_attrs["kind"] == "search"]
    confirm = [t for t in trials if t.user_attrs["kind"] == "confirm"]
    baseline = [t for t in trials if t.user_attrs["kind"] == "baseline"]
    assert len(search) == 6 and len(confirm) == 2 and len(baseline) == 2
    assert all(t.state is TrialState.COMPLETE for t in trials)
    best = max(search, key=lambda t: t.value or 0.0)
    assert result.best is not None and result.best["number"] == best.number
    assert {t.user_attrs["confirm_of"] for t in confirm + baseline} == {best.number}
    assert all(t.params == best.params for t in confirm) and all(t.params == {} for t in baseline)
    seeds = [t.user_attrs["seed"] for t in search + confirm]
    assert len(set(seeds)) == len(seeds)  # confirmation seeds are fresh
    pairs = {t.user_attrs["confirm_index"]: t.user_attrs["seed"] for t in confirm}
    assert {t.user_attrs["confirm_index"]: t.user_attrs["seed"] for t in baseline} == pairs  # paired by seed
    base = yaml.safe_load((repo_dir / "trials" / str(baseline[0].number) / "config.yaml").read_text())
    assert base["params"] == {} and base["train"]["optim"]["lr"] == synthetic_plan().train.optim.lr

    assert sorted(trial_commits(repo_dir)) == [t.number for t in trials]  # one commit per trial
    subjects = commit_subjects(repo_dir)
    assert subjects[-1] == "campaign synth: plan"
    assert any(s.startswith(f"trial {confirm[0].number} (confirm 1 for trial {best.number}): lr=") for s in subjects)
    paired = f"trial {baseline[0].number} (baseline 1 for trial {best.number}): (base config) -> "
    assert any(s.startswith(paired) for s in subjects)
    repository = git.Repo(repo_dir)
    assert not repository.is_dirty(untracked_files=True)  # everything written is committed or ignored
    tracked = set(repository.git.ls_files().splitlines())
    files = ("config.yaml", "metrics.jsonl", "curve.png", "result.json")
    for t in trials:
        assert {f"trials/{t.number}/{name}" for name in files} <= tracked
    config = yaml.safe_load((repo_dir / "trials" / str(best.number) / "config.yaml").read_text())
    assert config["params"] == best.params and config["train"]["optim"]["lr"] == best.params["lr"]
    assert config["train"]["lora"]["rank"] == best.params["lora_rank"]
    export = json.loads((repo_dir / "study.json").read_text())
    assert [r["number"] for r in export["trials"]] == [t.number for t in trials]
    assert export["best"]["number"] == best.number
    decisions = (repo_dir / "decisions.md").read_text()
    titles = ("campaign started: study synth", f"search finished: confirm trial {best.number}", "campaign finished")
    assert all(title in decisions for title in titles)
    assert "runtime/" in (repo_dir / ".gitignore").read_text() and (repo_dir / "runtime" / "study.db").is_file()
    assert not is_alive(repo_dir / "runtime")


def test_the_pruner_prunes_search_trials_never_confirmations(tmp_path: Path) -> None:
    pruner = "{name: median, warmup_steps: 1, startup_trials: 2}"
    plan = synthetic_plan(trials=10, steps=4, servers=2, confirm=2, pruner=pruner)
    start_campaign(plan, tmp_path / "c", options=SYNTH)
    trials = load_study(tmp_path / "c").trials
    pruned = [t for t in trials if t.state is TrialState.PRUNED]
    assert pruned and all(t.user_attrs["kind"] == "search" for t in pruned)
    assert all(max(t.intermediate_values) < 4 for t in pruned)
    assert any("-> pruned at step" in s for s in commit_subjects(tmp_path / "c"))


def test_a_server_lost_mid_trial_fails_the_trial_and_reruns_its_params_on_another(tmp_path: Path) -> None:
    repo_dir = tmp_path / "c"
    with ServerPool.synthetic(2, heartbeat_s=0.05, auto_restart=False) as pool:
        victim = pool.member("synthetic-0")
        assert isinstance(victim, SyntheticMember)

        def kill_during_a_trial() -> None:
            assert wait_until(lambda: victim.busy, timeout_s=30)
            victim.kill("killed by the test")

        killer = threading.Thread(target=kill_during_a_trial)
        killer.start()
        result = start_campaign(synthetic_plan(trials=4, steps=5, step_s=0.1, confirm=0), repo_dir, pool=pool)
        killer.join()
    assert result.finished
    trials = load_study(repo_dir).trials
    failed = [t for t in trials if t.state is TrialState.FAIL]
    assert len(failed) == 1
    lost = failed[0]
    assert lost.user_attrs["server"] == "synthetic-0" and lost.user_attrs["retried"] is True
    assert "server synthetic-0 was lost: killed by the test" in lost.user_attrs["fail_reason"]
    reruns = [t for t in trials if t.user_attrs.get("retry_of") == lost.number]
    assert len(reruns) == 1
    rerun = reruns[0]
    assert rerun.state is TrialState.COMPLETE and rerun.params == lost.params
    assert rerun.user_attrs["seed"] == lost.user_attrs["seed"] and rerun.user_attrs["attempt"] == 1
    assert rerun.user_attrs["server"] == "synthetic-1"
    assert sum(t.state is TrialState.COMPLETE for t in trials) == 4  # the void trial does not use the budget
    assert sorted(trial_commits(repo_dir)) == [t.number for t in trials]
    assert f"trial {lost.number} is void: server synthetic-0 was lost" in (repo_dir / "decisions.md").read_text()


def test_a_second_session_is_refused_while_one_runs_and_stop_drains(tmp_path: Path) -> None:
    repo_dir = tmp_path / "c"
    plan = synthetic_plan(trials=16, steps=5, step_s=0.05, confirm=1)
    done: list[object] = []
    runner = threading.Thread(target=lambda: done.append(start_campaign(plan, repo_dir, options=SYNTH)))
    runner.start()
    assert wait_until(lambda: (repo_dir / "trials" / "2").is_dir(), timeout_s=60)
    assert is_alive(repo_dir / "runtime")
    with pytest.raises(CampaignError, match="already running"):
        resume_campaign(repo_dir, options=SYNTH)
    request_stop(repo_dir / "runtime")
    runner.join(timeout=60)
    result = done[0]
    assert isinstance(result, CampaignResult) and result.stopped == "drain" and not result.finished
    study = load_study(repo_dir)
    assert not any(t.state in (TrialState.RUNNING, TrialState.WAITING) for t in study.trials)
    assert len(study.trials) < 16
    assert "stopped by request (drain)" in (repo_dir / "decisions.md").read_text()

    resumed = resume_campaign(repo_dir, options=SYNTH)
    assert resumed.finished
    trials = load_study(repo_dir).trials
    assert sum(t.user_attrs["kind"] == "search" for t in trials) == 16
    assert sorted(trial_commits(repo_dir)) == [t.number for t in trials]


def test_stop_now_voids_running_trials_and_resume_runs_each_once(tmp_path: Path) -> None:
    repo_dir = tmp_path / "c"
    campaign_thread_result: list[object] = []
    plan = synthetic_plan(trials=4, steps=20, step_s=0.05, confirm=0)
    CampaignRepo.create(repo_dir, plan, CampaignSettings(study=plan.name))
    campaign = Campaign(CampaignRepo(repo_dir), options=SYNTH)
    runner = threading.Thread(target=lambda: campaign_thread_result.append(campaign.run()))
    runner.start()
    study_path = repo_dir / "runtime" / "study.db"

    def running() -> dict[int, RunningTrial]:  # the scheduler comes with the study
        return campaign.scheduler._running if campaign.scheduler is not None else {}

    assert wait_until(lambda: study_path.is_file() and len(running()) == 2, timeout_s=60)
    assert wait_until(lambda: all(r.step >= 1 for r in list(running().values())), timeout_s=30)
    campaign.stop(now=True)
    runner.join(timeout=60)
    trials = load_study(repo_dir).trials
    void = [t for t in trials if t.state is TrialState.FAIL]  # the two running, and up to two asked ahead
    assert 2 <= len(void) <= 4 and all("stop --now" in t.user_attrs["fail_reason"] for t in void)
    assert sum("interrupted" in t.user_attrs["fail_reason"] for t in void) == 2
    assert sum(t.state is TrialState.WAITING for t in trials) == len(void)
    assert not any(t.state is TrialState.RUNNING for t in trials)

    assert resume_campaign(repo_dir, options=SYNTH).finished
    trials = load_study(repo_dir).trials
    for t in void:
        reruns = [r for r in trials if r.user_attrs.get("retry_of") == t.number]
        assert len(reruns) == 1 and reruns[0].state is TrialState.COMPLETE and reruns[0].params == t.params
    assert sum(t.state is TrialState.COMPLETE for t in trials) == 4
    assert sorted(trial_commits(repo_dir)) == [t.number for t in trials]


def test_grid_campaign_stops_at_the_grid_size_and_journal_storage_works(tmp_path: Path) -> None:
    text = synthetic_text(trials=50, sampler="grid", confirm=0, storage="journal").replace(
        "lr: {low: 1.0e-5, high: 1.0e-2, log: true}", "lr: {choices: [0.0001, 0.001]}"
    )
    result = start_campaign(parse_plan(text), tmp_path / "c", options=SYNTH)
    assert result.finished and (tmp_path / "c" / "runtime" / "study.journal").is_file()
    trials = load_study(tmp_path / "c").trials
    assert len(trials) == 8 and all(t.state is TrialState.COMPLETE for t in trials)
    assert len({(t.params["lr"], t.params["lora_rank"]) for t in trials}) == 8  # every grid point once


def test_the_wall_clock_budget_stops_new_search_trials(tmp_path: Path) -> None:
    plan = synthetic_plan(trials=None, wall_clock="2s", steps=4, step_s=0.1, confirm=1)
    result = start_campaign(plan, tmp_path / "c", options=SYNTH)
    assert result.finished
    trials = load_study(tmp_path / "c").trials
    assert 2 <= sum(t.user_attrs["kind"] == "search" for t in trials) <= 12
    assert sum(t.user_attrs["kind"] == "confirm" for t in trials) == 1
    assert sum(t.user_attrs["kind"] == "baseline" for t in trials) == 1
    assert "wall clock budget 2s reached" in (tmp_path / "c" / "decisions.md").read_text()


def test_trials_failing_on_their_own_count_and_are_not_rerun(tmp_path: Path) -> None:
    text = synthetic_text(trials=3, confirm=2).replace("noise: 0.02", "noise: 0.02, bogus: 1")
    result = start_campaign(parse_plan(text), tmp_path / "c", options=SYNTH)
    assert result.finished
    trials = load_study(tmp_path / "c").trials
    assert len(trials) == 3 and all(t.state is TrialState.FAIL for t in trials)
    assert all("unknown synthetic task params ['bogus']" in t.user_attrs["fail_reason"] for t in trials)
    assert not any(t.user_attrs.get("retried") for t in trials)
    decisions = (tmp_path / "c" / "decisions.md").read_text()
    assert "search finished with no completed trial: nothing to confirm" in decisions


def test_a_pool_with_no_server_left_ends_the_session_with_a_clear_error(tmp_path: Path) -> None:
    options = EngineOptions(pool_wait_s=0.5, heartbeat_s=0.1)
    with ServerPool.synthetic(1, heartbeat_s=0.05, auto_restart=False) as pool:
        member = pool.member("synthetic-0")
        assert isinstance(member, SyntheticMember)
        member.kill("gone for good")
        with pytest.raises(CampaignError, match="no pool server has been up"):
            start_campaign(synthetic_plan(trials=2, confirm=0), tmp_path / "c", options=options, pool=pool)
    assert not is_alive(tmp_path / "c" / "runtime")


def test_campaign_bench_quick_mode_reports_overhead_and_utilization() -> None:
    reply = CliRunner().invoke(app, ["bench", "campaign", "--quick", "--json"])
    assert reply.exit_code == 0, reply.output
    result = json.loads(reply.stdout)
    assert result["trials"] >= 8 and result["servers"] == 4 and result["members"] == "synthetic"
    assert 0 < result["utilization"] <= 1.0 and result["overhead_per_trial_s"] > 0
    assert result["wall_s"] > 0 and result["states"]["COMPLETE"] >= 1
    assert result["meets_target"] == (result["utilization"] >= 0.9)


def test_a_study_behind_an_rdb_url_lives_outside_the_repo(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'elsewhere' / 'studies.db'}"  # any SQLAlchemy URL, e.g. PostgreSQL
    (tmp_path / "elsewhere").mkdir()
    plan = synthetic_plan(name="remote-study", trials=3, confirm=1, storage=url)
    assert start_campaign(plan, tmp_path / "c", options=SYNTH).finished
    assert not (tmp_path / "c" / "runtime" / "study.db").exists()
    repo = CampaignRepo(tmp_path / "c")
    assert repo.settings.storage == url
    trials = load_study(tmp_path / "c").trials
    assert len(trials) == 5 and all(t.user_attrs["repo_id"] == repo.repo_id for t in trials)
    assert sorted(trial_commits(tmp_path / "c")) == [t.number for t in trials]
    with pytest.raises(CampaignError, match="cannot open the study storage"):
        bad = synthetic_plan(name="nowhere", storage="nosuchdb://user@host/db")
        start_campaign(bad, tmp_path / "d", options=SYNTH)


def test_a_stop_asked_before_the_study_opens_holds_when_it_does(tmp_path: Path) -> None:
    plan = synthetic_plan(trials=8, steps=3, step_s=0.01, confirm=1)
    settings = CampaignSettings(study=plan.name, storage=plan.storage, pool=None)
    campaign = Campaign(CampaignRepo.create(tmp_path / "c", plan, settings, None), options=SYNTH)
    campaign.stop()  # e.g. a signal handler, before run() has made its scheduler
    result = campaign.run()
    assert result.stopped == "drain" and not result.finished
    assert len(load_study(tmp_path / "c").trials) == 0
