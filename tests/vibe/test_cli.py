"""`agentjet vibe`: flags, exit codes, refusals that write nothing, runs through the CLI (scripted and real nodes)."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import git
import pytest
from typer.testing import CliRunner

from agentjet.cli.main import app
from agentjet.vibe.graph import ENV_NODES
from agentjet.vibe.runs import list_runs
from tests.vibe.fake_nodes import calls

runner = CliRunner()


def test_a_sentence_the_planner_cannot_map_is_refused_and_nothing_is_written(tmp_path: Path) -> None:
    workdir = tmp_path / "runs"
    result = runner.invoke(app, ["vibe", "write me a poem about autumn leaves", "--workdir", str(workdir)])
    assert result.exit_code == 2
    assert "refused:" in result.output
    assert "--llm" in result.output and "werewolves" in result.output  # how to configure an LLM; the families
    assert not workdir.exists()


def test_refusal_in_an_existing_workdir_leaves_it_as_it_was(tmp_path: Path) -> None:
    workdir = tmp_path / "runs"
    workdir.mkdir()
    (workdir / "notes.txt").write_text("mine")
    result = runner.invoke(app, ["vibe", "write me a poem about autumn leaves", "--workdir", str(workdir)])
    assert result.exit_code == 2
    assert [p.name for p in workdir.iterdir()] == ["notes.txt"]


@pytest.mark.parametrize("args", [[], ["train a 7B to play werewolves", "--resume", "x-1"]])
def test_text_or_resume_exactly_one(args: list[str], tmp_path: Path) -> None:
    result = runner.invoke(app, ["vibe", *args, "--workdir", str(tmp_path)])
    assert result.exit_code == 2
    assert "give either TEXT" in result.output


def test_resume_of_an_unknown_run_exits_2(tmp_path: Path) -> None:
    result = runner.invoke(app, ["vibe", "--resume", "nope-1", "--workdir", str(tmp_path)])
    assert result.exit_code == 2
    assert "no vibe run 'nope-1'" in result.output


def test_a_bad_llm_setting_is_an_error_before_anything_runs(tmp_path: Path) -> None:
    workdir = tmp_path / "runs"
    args = ["vibe", "train a 7B to play werewolves", "--llm", "not a model", "--workdir", str(workdir)]
    result = runner.invoke(app, args)
    assert result.exit_code == 2
    assert "error: --llm 'not a model' has spaces" in result.output
    assert not workdir.exists()


_BAD_MODEL = "error: unknown model 'smolm'; known: smollm2-135m"
_NO_FOLDER = "error: model folder /no/such/model does not exist"


@pytest.mark.parametrize(
    ("args", "error"),
    [
        (["train a 7B to play werewolves", "--model", "smolm"], _BAD_MODEL),
        (["train a 7B to play werewolves", "--model", "smolm", "--dry-run"], _BAD_MODEL),
        (["train a 7B to play werewolves", "--model", "/no/such/model"], _NO_FOLDER),
        (["train a 7B to play werewolves", "--model", "/no/such/model", "--dry-run"], _NO_FOLDER),
        (["   "], 'error: say what to train, e.g. agentjet vibe "train a 7B to play werewolves"'),
        (["   ", "--dry-run"], 'error: say what to train, e.g. agentjet vibe "train a 7B to play werewolves"'),
        (["train a 7B to play werewolves", "--budget", "inf"], "error: --budget must be a finite number of minutes"),
        (["train a 7B to play werewolves", "--model", ""], "error: --model is empty"),
        (["countdown", "--train", "collect.strategy=episodes", "--train", "collect.episodes=4"],
         "error: the training settings do not fit the countdown recipe: collect.episodes=4 must be >= "
         "grpo.group_size=8"),
        (["--resume", "no-such-run"], "error: no vibe run 'no-such-run'"),
        (["write me a poem"], "refused: cannot plan 'write me a poem'"),  # refused before a run id is shown
    ],
)
def test_a_request_no_run_can_start_from_is_one_line_and_writes_nothing(
    args: list[str], error: str, tmp_path: Path
) -> None:
    workdir = tmp_path / "runs"
    result = runner.invoke(app, ["vibe", *args, "--workdir", str(workdir)])
    assert result.exit_code == 2
    assert result.output.startswith(error), result.output  # no run line before it
    assert len(result.output.strip().splitlines()) == 1
    assert not workdir.exists()


def test_an_unreachable_llm_fails_the_plan_and_writes_nothing(tmp_path: Path) -> None:
    with socket.socket() as sock:  # a loopback port nobody listens on
        sock.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{sock.getsockname()[1]}/v1"
    workdir = tmp_path / "runs"
    result = runner.invoke(app, ["vibe", "train a 7B to play werewolves", "--llm", url, "--workdir", str(workdir)])
    assert result.exit_code == 1
    assert "understand:" in result.output
    assert not workdir.exists()


def test_a_run_through_the_cli_prints_where_the_report_is(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV_NODES, "tests.vibe.fake_nodes:NODES")
    workdir = tmp_path / "runs"
    result = runner.invoke(app, ["vibe", "train a word game", "--workdir", str(workdir), "--steps", "5"])
    assert result.exit_code == 0, result.output
    (run_id,) = list_runs(workdir)
    assert f"run {run_id}: done" in result.output
    assert f"report:    {workdir.resolve() / run_id / 'report.md'}" in result.output
    assert "step 3: train reward 1.000" in result.output
    assert calls(workdir)[-1] == "report"


def test_a_failed_run_exits_1(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import tests.vibe.fake_nodes as fake_nodes

    monkeypatch.setattr(fake_nodes, "NODES", fake_nodes.make_nodes(fake_nodes.FakeScript(fail={"validate": 9})))
    monkeypatch.setenv(ENV_NODES, "tests.vibe.fake_nodes:NODES")
    workdir = tmp_path / "runs"
    result = runner.invoke(app, ["vibe", "train a word game", "--workdir", str(workdir), "--max-repairs", "1"])
    assert result.exit_code == 1
    assert "validate failed after 1 repair round(s)" in result.output
    (run_id,) = list_runs(workdir)
    assert json.loads((workdir / run_id / "run.json").read_text())["status"] == "failed"


def _tiny_cli_run(
    tmp_path: Path, sentence: str, *flags: str
) -> tuple[subprocess.CompletedProcess[str], Path, dict[str, Any]]:
    """`agentjet vibe SENTENCE --model tiny FLAGS` as a user runs it (bwrap sandbox): the run, workspace, run.json."""
    from tests.sandbox.conftest import sandbox_for

    sandbox_for("bwrap")
    workdir = tmp_path / "runs"
    argv = [sys.executable, "-m", "agentjet.cli.main", "vibe", sentence, "--model", "tiny", *flags]
    done = subprocess.run(
        [*argv, "--workdir", str(workdir)], cwd=tmp_path, capture_output=True, text=True, timeout=3000
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    (run_id,) = list_runs(workdir)
    workspace = workdir / run_id
    return done, workspace, json.loads((workspace / "run.json").read_text())


@pytest.mark.slow
@pytest.mark.bwrap
def test_a_no_llm_run_on_tiny_ends_with_report_and_run_json(tmp_path: Path) -> None:
    """The whole graph with the real nodes: planner, template, sandboxed validation and red team, training, report."""
    done, workspace, summary = _tiny_cli_run(
        tmp_path, "train a model to say the word hello", "--steps", "2", "--eval-items", "4"
    )
    assert (summary["status"], summary["repairs"]) == ("done", 0) and summary["steps"] >= 2
    assert 0 < summary["time_to_first_step_s"] <= summary["total_s"]
    assert (summary["family"], summary["model"], summary["validation_ok"], summary["red_team_verdict"]) == (
        "word", "tiny", True, "robust"
    )  # fmt: skip
    assert "train a model to say the word hello" in (workspace / "report.md").read_text()
    subjects = [str(c.summary) for c in git.Repo(workspace).iter_commits()]
    assert subjects[0] == "report: done"
    assert any(s.startswith("generate(template word)") for s in subjects)
    assert "step 2: train reward" in done.stdout
    outcome = summary["outcome"]  # the base and the final policy on the same 4 held-out words
    assert (outcome["before"]["step"], outcome["before"]["episodes"], outcome["after"]["episodes"]) == (0, 4, 4)
    assert outcome["after"]["step"] == summary["steps"]  # the final round measured the policy the run ended with
    assert summary["verdict"] in ("improved", "no change detectable", "worse")
    assert f"held-out:  {summary['outcome_line']}" in done.stdout
    assert "## Did the agent get better?" in (workspace / "report.md").read_text()


@pytest.mark.slow
@pytest.mark.bwrap
def test_a_run_with_separate_models_trains_and_measures_a_server_per_side(tmp_path: Path) -> None:
    """Werewolves with a model per side, on tiny: two servers, one sandboxed client, each side measured."""
    done, workspace, summary = _tiny_cli_run(
        tmp_path, "train both sides of werewolves with separate models", "--steps", "1", "--eval-items", "2"
    )
    assert summary["status"] == "done" and summary["steps"] >= 1
    assert sorted(summary["policy_outcomes"]) == ["village", "wolves"]
    for side in ("wolves", "village"):
        outcome = summary["policy_outcomes"][side]["outcome"]
        assert (outcome["before"]["episodes"], outcome["after"]["episodes"]) == (2, 2), side
    assert (workspace / "state" / "policies" / "village" / "journal.sqlite").is_file()  # the village's own server
    report = (workspace / "report.md").read_text()
    assert (
        "### Policy `wolves` (werewolf)" in report and "### Policy `village` (villager, seer, witch, hunter)" in report
    )
    assert "held-out:  wolves: win rate" in done.stdout and "; village: win rate" in done.stdout


# --- --dry-run: the spec it would run, and nothing written ------------------------------------------------


def _listing(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


def test_dry_run_prints_the_spec_and_writes_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "notes.txt").write_text("mine")
    monkeypatch.chdir(tmp_path)
    before = _listing(tmp_path)
    result = runner.invoke(app, ["vibe", "teach the villagers to find the wolves for 4 steps", "--dry-run"])
    assert result.exit_code == 0, result.output
    assert "nothing was written" in result.output
    for line in ("family         werewolves", "trained roles  villager, seer, witch, hunter", "budget         4 steps"):
        assert line in result.output
    assert "policies       one shared policy: policy (villager, seer, witch, hunter)" in result.output
    assert "model          smollm2-135m" in result.output and "assumptions:" in result.output
    assert _listing(tmp_path) == before  # no workspace, no run DB, no state dir


def test_dry_run_json_is_the_spec_with_one_server_per_separate_policy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, ["vibe", "train both sides of werewolves with separate models", "--dry-run", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["family"] == "werewolves" and data["planner"] == "deterministic"
    assert [p["name"] for p in data["policies"]] == ["wolves", "village"]
    assert set(data["params"]["servers"].values()) == {"wolves", "village"}  # each trained role to its policy
    assert "launch_refusal" not in data
    assert data["budget"] == {"steps": 8, "minutes": None} and data["assumptions"]  # werewolves: its recipe's budget
    text = runner.invoke(app, ["vibe", "train both sides of werewolves with separate models", "--dry-run"])
    assert "policies       2 separate policies, one server each: wolves (werewolf); village (" in text.output
    assert _listing(tmp_path) == []


def test_a_sentence_asking_for_just_the_plan_is_refused_as_a_run_and_printed_with_dry_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    sentence = "please don't train anything, just show me the plan for werewolves"
    refused = runner.invoke(app, ["vibe", sentence])
    assert refused.exit_code == 2 and "add --dry-run to print the plan" in refused.output
    assert "Traceback" not in refused.output and _listing(tmp_path) == []
    printed = runner.invoke(app, ["vibe", sentence, "--dry-run"])
    assert printed.exit_code == 0 and "family         werewolves" in printed.output
    assert _listing(tmp_path) == []


def test_dry_run_of_a_refused_sentence_exits_2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, ["vibe", "write me a poem", "--dry-run"])
    assert result.exit_code == 2 and "refused:" in result.output
    assert _listing(tmp_path) == []


def test_json_needs_dry_run(tmp_path: Path) -> None:
    result = runner.invoke(app, ["vibe", "countdown", "--json", "--workdir", str(tmp_path / "runs")])
    assert result.exit_code == 2 and "--json goes with --dry-run" in result.output
    assert not (tmp_path / "runs").exists()


@pytest.mark.parametrize("kind", ["file", "model"])
def test_a_file_given_as_workdir_or_model_is_one_line(kind: str, tmp_path: Path) -> None:
    a_file = tmp_path / "notes.txt"
    a_file.write_text("mine")
    args = ["--workdir", str(a_file)] if kind == "file" else ["--model", str(a_file), "--workdir", str(tmp_path / "r")]
    result = runner.invoke(app, ["vibe", "train a 7B to play werewolves", *args])
    assert result.exit_code == 2
    assert len(result.output.strip().splitlines()) == 1, result.output
    assert f"{a_file} is a file" in result.output
    assert a_file.read_text() == "mine" and sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"]


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["vibe", "countdown", "--steps", "0", "--dry-run"], "error: Invalid value for '--steps'"),
        (["vibe", "countdown", "--stepz", "3"], "error: No such option: --stepz"),
        (["no-such-command"], "error: No such command 'no-such-command'"),
    ],
)
def test_the_command_says_a_usage_mistake_in_one_line(args: list[str], said: str, tmp_path: Path) -> None:
    """`agentjet` itself (`main`, not the Typer app a CliRunner calls): Click's boxed usage text becomes one line."""
    result = subprocess.run(
        [sys.executable, "-m", "agentjet", *args], capture_output=True, text=True, timeout=60, cwd=tmp_path
    )
    assert result.returncode == 2
    assert result.stdout == "" and result.stderr.startswith(said), result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and "--help)" in result.stderr
