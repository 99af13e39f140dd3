"""`agentjet campaign ...`: dry runs, clear refusals, status/report/stop on real repos, and the example end to end."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import git
import pytest
from typer.testing import CliRunner

from agentjet.a3r.plan.campaign_plan import parse_plan
from agentjet.a3r.plan.examples import EXAMPLES_DIR
from agentjet.a3r.session.campaign import EngineOptions, start_campaign
from agentjet.a3r.session.lock import CampaignLock, is_alive, read_heartbeat
from agentjet.cli.main import app
from tests.vibe.fake_llm import serve_fake_llm

ROOT = Path(__file__).resolve().parents[2]
QUICK_TINY = EXAMPLES_DIR / "quick-tiny.md"
SYNTHETIC = """---
name: synth-cli
task: {family: synthetic, params: {step_s: STEP}}
search_space:
  lr: {low: 1.0e-4, high: 1.0e-2, log: true}
  lora_rank: {choices: [8, 16]}
sampler: {name: random, seed: 0}
pruner: none
budget: {trials: TRIALS, steps_per_trial: 2, eval_every: 1, eval_items: 1}
pool: local:2
seeds: {confirm: 2}
---

# Synthetic CLI campaign

1. Which learning rate is best?
"""
runner = CliRunner()


def _synthetic(trials: int, step_s: float) -> str:
    return SYNTHETIC.replace("TRIALS", str(trials)).replace("STEP", str(step_s))


def _fast_options() -> EngineOptions:
    return EngineOptions(synthetic_members=True, heartbeat_s=0.2, pool_heartbeat_s=0.2)


@pytest.fixture
def finished_repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A finished synthetic campaign (6 trials + 2 re-runs) in campaigns/runs/ under a fresh cwd."""
    monkeypatch.chdir(tmp_path)
    repo = tmp_path / "campaigns" / "runs" / "synth-cli-1"
    start_campaign(parse_plan(_synthetic(6, 0.0)), repo, options=_fast_options())
    return repo


def test_dry_run_shows_the_setup_and_first_trials_and_starts_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, ["campaign", "start", str(QUICK_TINY), "--dry-run", "--pool", "local:3"])
    assert result.exit_code == 0, result.output
    assert "plan quick-tiny (stage 1): maximize eval_reward" in result.output
    assert "pool: local:3 (3 server(s))" in result.output
    assert len(re.findall(r"^  \d: lr=\S+, lora_rank=[24] on tiny", result.output, re.M)) == 3
    assert "nothing was started" in result.output
    assert list(tmp_path.iterdir()) == []


def test_a_prose_plan_needs_llm_and_then_goes_through_it(tmp_path: Path) -> None:
    plan = tmp_path / "idea.md"
    plan.write_text("# Does the learning rate matter?\n\nCompare learning rates on arithmetic with tiny.\n")
    refused = runner.invoke(app, ["campaign", "start", str(plan), "--dry-run"])
    assert refused.exit_code == 2 and f"{plan}:1:" in refused.output and "AGENTJET_CAMPAIGN_LLM" in refused.output
    front = {"task": "arithmetic", "model": "tiny", "search_space": {"lr": {"low": 1e-4, "high": 1e-2, "log": True}}}
    with serve_fake_llm([json.dumps(front)]) as fake:
        result = runner.invoke(app, ["campaign", "start", str(plan), "--dry-run", "--llm", fake.url])
    assert result.exit_code == 0, result.output
    assert "plan idea (stage 1)" in result.output and "search space: lr [0.0001, 0.01] log" in result.output
    assert len(fake.requests) == 1


def test_a_bad_plan_is_refused_with_its_line_and_key(tmp_path: Path) -> None:
    plan = tmp_path / "bad.md"
    plan.write_text("---\nname: bad\ntask: {family: arithmetic}\nbudjet: {trials: 3}\n---\n")
    result = runner.invoke(app, ["campaign", "start", str(plan), "--repo", str(tmp_path / "r")])
    assert result.exit_code == 2
    assert f"{plan}:4: budjet: unknown key 'budjet' (did you mean 'budget'?)" in result.output
    assert not (tmp_path / "r").exists()


def test_a_bad_pool_and_a_missing_repo_are_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    bad_pool = runner.invoke(app, ["campaign", "start", str(QUICK_TINY), "--pool", "ftp://x", "--dry-run"])
    assert bad_pool.exit_code == 2 and "--pool ftp://x" in bad_pool.output
    for command in ("status", "resume", "stop", "report"):
        result = runner.invoke(app, ["campaign", command])
        assert result.exit_code == 2 and "no campaign repo under campaigns/runs/" in result.output
    missing = runner.invoke(app, ["campaign", "report", "--repo", str(tmp_path / "nope")])
    assert missing.exit_code == 2 and "does not exist" in missing.output


def test_status_report_and_refusals_on_a_finished_campaign(finished_repo: Path) -> None:
    status = runner.invoke(app, ["campaign", "status", "--once"])  # the newest repo under campaigns/runs
    assert status.exit_code == 0, status.output
    assert "campaign synth-cli: not running (last phase: stopped)" in status.output
    trials = json.loads((finished_repo / "study.json").read_text())["trials"]
    table = [line.split() for line in status.output.splitlines() if re.match(r"^\d+\s", line)]
    assert [row[0] for row in table] == [str(t["number"]) for t in trials] and len(trials) >= 8
    assert all("COMPLETE" in row for row in table) and sum("confirm" in row for row in table) == 2

    report = runner.invoke(app, ["campaign", "report", "--repo", str(finished_repo)])
    assert report.exit_code == 0, report.output
    assert f"{len(trials)} trials, from study" in report.output and "commit: " in report.output
    assert "report.md" in git.Repo(finished_repo).git.ls_files().splitlines()
    again = runner.invoke(app, ["campaign", "report", "--repo", str(finished_repo)])
    assert "unchanged since the last report" in again.output

    stop = runner.invoke(app, ["campaign", "stop", "--repo", str(finished_repo)])
    assert stop.exit_code == 1 and "no campaign process is running" in stop.output
    plan = str(finished_repo / "plan.md")
    again_start = runner.invoke(app, ["campaign", "start", plan, "--repo", str(finished_repo)])
    assert again_start.exit_code == 2 and "exists and is not empty: resume it" in again_start.output


def test_a_second_process_on_a_live_repo_is_refused(finished_repo: Path) -> None:
    lock = CampaignLock(finished_repo / "runtime")
    lock.acquire()
    lock.beat({"phase": "search"})
    try:
        result = runner.invoke(app, ["campaign", "resume", "--repo", str(finished_repo)])
    finally:
        lock.release()
    assert result.exit_code == 2
    assert "a campaign process is already running" in result.output and f"pid {os.getpid()}" in result.output


def test_stop_drains_a_running_campaign(tmp_path: Path) -> None:
    plan = tmp_path / "synth.md"
    plan.write_text(_synthetic(200, 0.3))
    repo = tmp_path / "repo"
    script = (
        "import sys; from pathlib import Path\n"
        "from agentjet.a3r.session.campaign import EngineOptions, start_campaign\n"
        "from agentjet.a3r.plan.campaign_plan import load_plan\n"
        "start_campaign(load_plan(sys.argv[1]), Path(sys.argv[2]),\n"
        "               options=EngineOptions(synthetic_members=True, heartbeat_s=0.2, pool_heartbeat_s=0.2))\n"
    )
    process = subprocess.Popen([sys.executable, "-c", script, str(plan), str(repo)], cwd=tmp_path)
    try:
        deadline = time.monotonic() + 120
        while not (read_heartbeat(repo / "runtime") or {}).get("running"):
            assert process.poll() is None and time.monotonic() < deadline, "the campaign never ran a trial"
            time.sleep(0.1)
        result = runner.invoke(app, ["campaign", "stop", "--repo", str(repo), "--timeout", "120"])
        assert result.exit_code == 0, result.output
        assert "stopped; go on with: agentjet campaign resume" in result.output
        assert process.wait(timeout=30) == 0
    finally:
        if process.poll() is None:
            process.kill()
    assert not is_alive(repo / "runtime")
    states = {t["state"] for t in json.loads((repo / "study.json").read_text())["trials"]}
    assert states == {"COMPLETE"}  # drained: running trials finished, nothing left RUNNING
    assert "stopped by request (drain)" in (repo / "decisions.md").read_text()


@pytest.mark.heavy  # about 45 s: CI runs it in make test-heavy
def test_the_quick_tiny_example_runs_end_to_end_and_commits_its_report(tmp_path: Path) -> None:
    """THE end-to-end: the CLI, `local:2` real servers with `tiny`, a git repo whose report covers every trial."""
    repo = tmp_path / "repo"
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTJET_") or k == "AGENTJET_CACHE_DIR"}
    command = [sys.executable, "-m", "agentjet.cli.main", "campaign", "start", str(QUICK_TINY), "--repo", str(repo)]
    done = subprocess.run(
        [*command, "--pool", "local:2"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr[-3000:]
    trials = json.loads((repo / "study.json").read_text())["trials"]
    assert f"campaign quick-tiny: finished ({len(trials)} complete)" in done.stdout
    assert f"report: {repo.resolve() / 'report.md'}" in done.stdout

    kinds = [t["kind"] for t in trials]
    assert (
        kinds[:3] == ["search"] * 3 and kinds.count("confirm") == 1 and set(kinds) <= {"search", "confirm", "baseline"}
    )
    report = (repo / "report.md").read_text()
    for trial in trials:
        assert f"\n| {trial['number']} | " in report
        assert trial["server"] in ("local-0", "local-1")
    assert "## Research questions" in report and "## Every trial" in report
    assert re.search(r"\*\*(Finding|Not confirmed)\*\*", report)

    git_repo = git.Repo(repo)
    assert not git_repo.is_dirty(untracked_files=True)
    files = set(git_repo.git.ls_files().splitlines())
    assert {"plan.md", "study.json", "decisions.md", "report.md", "figures/curves.png"} <= files
    assert {f"trials/{t['number']}/metrics.jsonl" for t in trials} <= files
    messages = [c.message for c in git_repo.iter_commits()]
    trailers = [m for msg in messages for m in re.findall(r"^A3R-Trial: (\d+)$", msg, re.M)]
    assert sorted(trailers) == [str(t["number"]) for t in trials]  # one commit per trial, none twice
    assert messages[0].startswith(f"report: {len(trials)} trials")
