"""The campaign repo: layout, one commit per trial (by trailer, across repo objects), messages, decisions."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import git
import pytest
import yaml
from optuna.distributions import CategoricalDistribution, FloatDistribution
from optuna.trial import FrozenTrial, TrialState

from agentjet.a3r.errors import CampaignError
from agentjet.a3r.plan.campaign_plan import parse_plan
from agentjet.a3r.repo import CampaignRepo, CampaignSettings, trial_commit_message
from agentjet.a3r.trial.records import study_export
from tests.a3r.campaign_helpers import commit_subjects, synthetic_plan, synthetic_text, trial_commits

DISTS = {"lr": FloatDistribution(1e-5, 1e-2, log=True), "lora_rank": CategoricalDistribution([4, 8, 16, 32])}


def _trial(number: int, state: TrialState = TrialState.COMPLETE, **attrs: Any) -> FrozenTrial:
    now = dt.datetime.now()
    curve = {1: 0.2, 2: 0.4} if state is not TrialState.FAIL else {}
    return FrozenTrial(
        number=number, state=state, value=0.4 if state is not TrialState.FAIL else None,
        datetime_start=now, datetime_complete=now + dt.timedelta(seconds=3),
        params={"lr": 3.1e-4, "lora_rank": 8}, distributions=DISTS,
        user_attrs={"kind": "search", "seed": number, **attrs}, system_attrs={},
        intermediate_values=curve, trial_id=number,
    )  # fmt: skip


def _repo(tmp_path: Path, text: str | None = None) -> CampaignRepo:
    plan = parse_plan(text or synthetic_text())
    return CampaignRepo.create(tmp_path / "repo", plan, CampaignSettings(study=plan.name), text or synthetic_text())


def test_create_commits_the_plan_settings_gitignore_and_decision_log(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    tracked = set(git.Repo(repo.path).git.ls_files().splitlines())
    assert tracked == {"plan.md", "campaign.yaml", ".gitignore", "decisions.md"}
    assert (repo.path / "plan.md").read_text() == synthetic_text()  # kept as written: it reads back the same
    assert repo.load_plan() == synthetic_plan()
    assert yaml.safe_load((repo.path / "campaign.yaml").read_text())["storage"] == "sqlite"
    assert commit_subjects(repo.path) == ["campaign synth: plan"]
    assert len(repo.repo_id) == 32 and repo.committed_trials() == set()
    (repo.runtime_dir / "x").parent.mkdir(parents=True)
    (repo.runtime_dir / "study.db").write_text("db")
    assert not git.Repo(repo.path).is_dirty(untracked_files=True)  # runtime/ is ignored
    with pytest.raises(CampaignError, match="resume it"):
        _repo(tmp_path)
    (tmp_path / "busy").mkdir()
    (tmp_path / "busy" / "notes.txt").write_text("mine")
    with pytest.raises(CampaignError, match="not empty"):
        CampaignRepo.create(tmp_path / "busy", synthetic_plan(), CampaignSettings(study="synth"))
    with pytest.raises(CampaignError, match="not a campaign repo"):
        CampaignRepo(tmp_path / "busy")


def test_a_plan_with_a_relative_client_is_stored_rendered_with_the_absolute_path(tmp_path: Path) -> None:
    (tmp_path / "plans").mkdir()
    client = tmp_path / "plans" / "my_client.py"
    client.write_text("TASK = None\n")
    text = "---\nname: rel\ntask: my_client.py\n---\n\n# Question\n"
    plan = parse_plan(text, base_dir=tmp_path / "plans")
    repo = CampaignRepo.create(tmp_path / "repo", plan, CampaignSettings(study="rel"), text)
    stored = repo.load_plan()
    assert stored.task.client == client.resolve() and stored.body == plan.body


def test_record_trial_commits_its_files_once_with_a_trailer(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    plan = repo.load_plan()
    trial = _trial(3)
    folder = repo.trial_dir(3)
    folder.mkdir(parents=True)
    (folder / "metrics.jsonl").write_text('{"step": 1, "value": 0.2}\n{"step": 2, "value": 0.4}\n')
    export = study_export(plan.name, "maximize", [trial])
    sha = repo.record_trial(trial, plan, export, decision="trial 3 looked fine")

    assert sha is not None and repo.record_trial(trial, plan, export) is None  # never twice
    assert CampaignRepo(repo.path).committed_trials() == {3}  # read back from the git log
    assert trial_commits(repo.path) == [3]
    head = git.Repo(repo.path).head.commit
    assert head.hexsha == sha and head.message.startswith("trial 3: lr=3.10e-04, lora_rank=8 -> 0.4000\n")
    assert set(head.stats.files) == {
        "trials/3/config.yaml", "trials/3/metrics.jsonl", "trials/3/curve.png", "trials/3/result.json",
        "decisions.md", "study.json",
    }  # fmt: skip
    config = yaml.safe_load((folder / "config.yaml").read_text())
    assert config["params"] == {"lr": 3.1e-4, "lora_rank": 8} and config["seed"] == 3
    assert config["train"]["optim"]["lr"] == 3.1e-4 and config["train"]["lora"]["rank"] == 8
    assert config["task"] == {"family": "synthetic", "params": {"step_s": 0.01, "noise": 0.02}}
    result = json.loads((folder / "result.json").read_text())
    assert result["state"] == "COMPLETE" and result["intermediate"] == [[1, 0.2], [2, 0.4]]
    assert (folder / "curve.png").read_bytes()[:4] == b"\x89PNG"
    assert json.loads((repo.path / "study.json").read_text())["trials"][0]["number"] == 3
    assert "UTC: trial 3 looked fine" in repo.decisions()


def test_commit_messages_say_pruned_void_and_confirmation() -> None:
    pruned = trial_commit_message(_trial(4, TrialState.PRUNED))
    assert pruned.startswith("trial 4: lr=3.10e-04, lora_rank=8 -> pruned at step 2 (0.4000)")
    void = _trial(5, TrialState.FAIL, fail_reason="server local-1 was lost: exit 137\nmore", retried=True)
    assert trial_commit_message(void).startswith(
        "trial 5: lr=3.10e-04, lora_rank=8 -> FAIL: server local-1 was lost: exit 137 (params queued to run again)\n"
    )
    confirm = _trial(9, kind="confirm", confirm_of=2, confirm_index=1, retry_of=7)
    message = trial_commit_message(confirm)
    assert message.startswith("trial 9 (confirm 2 for trial 2, re-run of trial 7): ")
    baseline = trial_commit_message(_trial(10, kind="baseline", confirm_of=2, confirm_index=0))
    assert baseline.startswith("trial 10 (baseline 1 for trial 2): lr=")
    assert message.endswith("\n\nA3R-Trial: 9\nA3R-State: COMPLETE\n")


def test_decisions_are_appended_and_committed_as_they_happen(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    repo.add_decision("search finished: confirm trial 2", "params: lr=0.001")
    repo.add_decision("campaign finished", export={"trials": []})
    text = repo.decisions()
    assert text.index("search finished: confirm trial 2") < text.index("campaign finished")
    assert "\nparams: lr=0.001\n" in text
    subjects = commit_subjects(repo.path)[:2]
    assert subjects == ["decision: campaign finished", "decision: search finished: confirm trial 2"]
    assert (repo.path / "study.json").is_file() and not git.Repo(repo.path).is_dirty(untracked_files=True)


def test_commits_work_where_git_has_no_identity(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    empty = tmp_path / "gitconfig"
    empty.write_text("")
    for name in ("GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL", "EMAIL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(empty))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    repo = _repo(tmp_path)
    assert git.Repo(repo.path).head.commit.author.name == "AgentJet campaign"
