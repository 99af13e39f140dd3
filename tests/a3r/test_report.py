"""The campaign report: report.md and figures written from the live study (or study.json) and committed."""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path

import git
import optuna
import pytest
from optuna.trial import TrialState, create_trial

from agentjet.a3r.plan.campaign_plan import CampaignPlan, parse_plan, search_space_distributions
from agentjet.a3r.repo import CampaignRepo, CampaignSettings
from agentjet.a3r.report.writer import load_records, write_report
from agentjet.a3r.session.study import load_campaign_study, make_storage
from agentjet.a3r.trial.records import study_export

PLAN = """---
name: report-demo
objective: {metric: eval_accuracy, direction: maximize}
task: {family: arithmetic}
search_space:
  lr: {low: 1.0e-5, high: 1.0e-2, log: true}
  lora_rank: {choices: [4, 8]}
seeds: {confirm: 3}
budget: {trials: 10}
---

# Report demo

## Research questions

1. Which learning rate works best?
2. Is the best configuration real across fresh seeds?
"""
PNG = b"\x89PNG\r\n\x1a\n"


@pytest.fixture
def plan() -> CampaignPlan:
    return parse_plan(PLAN)


@pytest.fixture
def repo(tmp_path: Path, plan: CampaignPlan) -> CampaignRepo:
    created: CampaignRepo = CampaignRepo.create(tmp_path / "repo", plan, CampaignSettings(study=plan.name), PLAN)
    return created


def _fill(study: optuna.Study, plan: CampaignPlan) -> None:
    """Eight search trials (one pruned, one void), then three confirmation re-runs of the best."""
    dists = search_space_distributions(plan)
    rng = random.Random(3)
    for i in range(8):
        params = {"lr": 10 ** rng.uniform(-5, -2), "lora_rank": rng.choice([4, 8])}
        value = 0.3 + 0.1 * i
        state, attrs = TrialState.COMPLETE, {"kind": "search", "seed": i, "server": f"local-{i % 2}"}
        if i == 2:
            state = TrialState.PRUNED
        if i == 3:
            state, attrs = TrialState.FAIL, {**attrs, "retried": True, "fail_reason": "server local-1 was lost"}
        study.add_trial(
            create_trial(
                state=state, params=params, distributions=dists, user_attrs=attrs,
                value=value if state is TrialState.COMPLETE else None, intermediate_values={1: value / 2, 2: value},
            )
        )  # fmt: skip
    best = study.best_trial
    for k, value in enumerate([0.97, 0.99, 1.0]):
        attrs = {"kind": "confirm", "confirm_of": best.number, "confirm_index": k, "server": "local-0"}
        study.add_trial(create_trial(params=best.params, distributions=dists, value=value, user_attrs=attrs))


def _committed(repo: CampaignRepo) -> set[str]:
    return set(git.Repo(repo.path).git.ls_files().splitlines())


def test_report_reads_the_live_study_and_commits_report_and_figures(repo: CampaignRepo, plan: CampaignPlan) -> None:
    study = load_campaign_study(plan, make_storage("sqlite", repo.runtime_dir))
    _fill(study, plan)
    result = write_report(repo)
    assert result.source == "study" and result.commit is not None
    text = result.path.read_text()
    for number in range(len(study.trials)):  # every trial has its row in the table
        assert f"\n| {number} | " in text
    assert "FAIL (void, re-run)" in text and "PRUNED" in text and "confirm for 7" in text
    assert "**Finding**" in text and "Which learning rate works best?" in text
    assert set(result.figures) == {"importance", "curves", "effects", "confirmation"}
    for path in result.figures.values():
        assert path.read_bytes().startswith(PNG)
        assert f"](figures/{path.name})" in text
    committed = _committed(repo)
    assert {"report.md", *(f"figures/{p.name}" for p in result.figures.values())} <= committed
    head = git.Repo(repo.path).head.commit
    assert head.hexsha == result.commit and head.message.startswith("report: 11 trials (10 counted), best trial 7")
    assert not git.Repo(repo.path).is_dirty(untracked_files=False)


def test_an_unchanged_report_is_not_committed_again(repo: CampaignRepo, plan: CampaignPlan) -> None:
    study = load_campaign_study(plan, make_storage("sqlite", repo.runtime_dir))
    _fill(study, plan)
    first = write_report(repo)
    commits = len(list(git.Repo(repo.path).iter_commits()))
    again = write_report(repo)
    assert first.commit is not None and again.commit is None
    assert len(list(git.Repo(repo.path).iter_commits())) == commits
    study.add_trial(create_trial(state=TrialState.RUNNING, params={}, distributions={}, user_attrs={"kind": "search"}))
    later = write_report(repo)
    assert later.commit is not None and "had not finished" in later.path.read_text()


def test_a_clone_without_runtime_reports_from_study_json(repo: CampaignRepo, plan: CampaignPlan) -> None:
    study = load_campaign_study(plan, make_storage("sqlite", repo.runtime_dir))
    _fill(study, plan)
    export = study_export(plan.name, "maximize", study.get_trials())
    (repo.path / "study.json").write_text(json.dumps(export))
    shutil.rmtree(repo.runtime_dir)
    records, source = load_records(repo)
    assert source == "study.json" and len(records) == 11
    result = write_report(repo)
    assert result.source == "study.json" and result.analysis.confirmation.verdict == "finding"


def test_a_report_before_any_trial_says_so(repo: CampaignRepo) -> None:
    result = write_report(repo)
    text = result.path.read_text()
    assert "**No result**" in text and "No search trial has completed yet" in text
    assert result.figures == {} and "report.md" in _committed(repo)
