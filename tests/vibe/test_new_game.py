"""A new game through `agentjet vibe --llm`: tic-tac-toe, which no built-in family covers.

The game's files (`tests.vibe.new_game`) hold up on the host: legal play earns reward, degenerate
replies earn none, and the first version's bug is real. The red team's verdict no longer lets a
noisy reference hide a reward that pays an empty reply every time. Then the scripted LLM conversation
(`tests.vibe.new_game_run`) drives the real graph in the docker sandbox: the planner's `generated`
spec, the LLM-written workspace, validation, a red team that catches the bug, one repair, validation
and the red team again, and (slow test) training on `tiny` to the report.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from types import ModuleType
from typing import Any

import git
import pytest

from agentjet.sandbox import Sandbox
from agentjet.tasks.folder_data import load_beside
from agentjet.vibe.check.degenerate import DEGENERATE
from agentjet.vibe.check.redteam import PolicyResult, judge, red_team
from agentjet.vibe.check.validate import ValidateOptions, validate
from agentjet.vibe.context import NodeFailed, VibeContext
from agentjet.vibe.generate.contract import CONTRACT
from agentjet.vibe.plan.spec import TaskSpec
from agentjet.vibe.state import VibeState
from agentjet.vibe.workspace import Workspace
from tests.sandbox.conftest import sandbox_for
from tests.tasks.swarm_helpers import journal
from tests.vibe.new_game import (
    BUGGY_REWARD,
    FIXED_REWARD,
    FIXED_TESTS,
    REWARD_PAYS_FORFEIT,
    TIC_TAC_TOE,
    TRAIN_ITEMS,
)
from tests.vibe.new_game_run import PLAN, REPAIR_SUMMARY, SENTENCE, ScriptedRun, describe, scripted_run
from tests.vibe.redteam_helpers import chatml

FIXED = {**TIC_TAC_TOE, "reward.py": FIXED_REWARD, "tests/test_task.py": FIXED_TESTS}
THROUGH_REPAIR = ["understand", "generate", "validate", "red_team", "repair", "validate", "red_team"]


def _folder(root: Path, files: Mapping[str, str]) -> Path:
    """The game's files with their data made by its dataset.py (our own test code: it may run here)."""
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text)
    subprocess.run([sys.executable, "dataset.py"], cwd=root, check=True, capture_output=True)
    return root


def _policy_means(client: ModuleType, tokenizer: Any, games: int) -> dict[str, tuple[float | None, int]]:
    """Each red-team policy's mean game reward (and how many games raised), its replies cut at the
    client's max_tokens as a server would cut them."""

    def served(policy: Callable[[str], str]) -> Callable[[str], str]:
        def ask(text: str) -> str:
            ids = tokenizer(policy(chatml(("user", text))), add_special_tokens=False)["input_ids"]
            return str(tokenizer.decode(ids[: client.MAX_TOKENS]))

        return ask

    means: dict[str, tuple[float | None, int]] = {}
    for name, (_, policy) in DEGENERATE.items():
        rewards, raised = [], 0
        for seed in range(games):
            try:
                rewards.append(client.reward.score({}, client.play_game("XO"[seed % 2], seed, served(policy))))
            except ValueError:
                raised += 1
        means[name] = (statistics.mean(rewards) if rewards else None, raised)
    return means


# ---- the game on the host -------------------------------------------------------------------------------


def test_legal_play_earns_reward_and_degenerate_replies_earn_nothing(tmp_path: Path, tiny_tokenizer: Any) -> None:
    client = load_beside(_folder(tmp_path / "fixed", FIXED), "client")
    means = _policy_means(client, tiny_tokenizer, games=150)
    legal, raised = means.pop("random_legal")
    assert raised == 0 and legal is not None and legal > 0.4, legal  # a random legal X wins most games
    assert means == {name: (0.0, 0) for name in means}, means  # nothing, echo, hedging, listing: forfeits
    game = client.play_game("O", 3, lambda text: text.rsplit("Options: ", 1)[1].split(" | ")[-1])
    assert game["result"] in ("win", "draw", "loss") and game["board"].count("O") >= 1  # O opened


def test_the_first_version_raises_on_hedging_yet_passes_its_own_tests(tmp_path: Path, tiny_tokenizer: Any) -> None:
    first = _folder(tmp_path / "first", TIC_TAC_TOE)
    fixed = _folder(tmp_path / "fixed", FIXED)
    for root in (first, fixed):
        done = subprocess.run([sys.executable, "tests/test_task.py"], cwd=root, capture_output=True, text=True)
        assert done.returncode == 0 and done.stdout.splitlines()[-1] == "7 passed, 0 failed", done.stdout
    means = _policy_means(load_beside(first, "client"), tiny_tokenizer, games=20)
    assert {name for name, (_, raised) in means.items() if raised == 20} == {
        "many_answers", "every_candidate", "long_answer"
    }  # fmt: skip
    copy = tmp_path / "fixed-tests-on-the-first-reward"
    _folder(copy, {**FIXED, "reward.py": BUGGY_REWARD})
    done = subprocess.run([sys.executable, "tests/test_task.py"], cwd=copy, capture_output=True, text=True)
    assert done.returncode == 1 and "FAIL test_read_move_takes_one_legal_move" in done.stdout  # the repair's test


# ---- the red team's verdict on a game reward --------------------------------------------------------------


def _result(name: str, rewards: list[float]) -> PolicyResult:
    return PolicyResult(name, name, sum(rewards) / len(rewards), len(rewards), 0, rewards)


def test_a_reward_paying_an_empty_reply_every_time_is_hackable_even_against_a_noisy_reference() -> None:
    """Two standard errors of 4 won-or-lost games are 0.58: no mean in [0, 1] could beat 0.5 by that."""
    noisy = _result("reference", [1.0, 0.0, 1.0, 0.0])
    for kind in ("floor", "werewolves"):
        verdict, reason, winners = judge(noisy, [_result("empty", [1.0] * 4)], margin=0.05, reference_kind=kind)
        assert (verdict, winners) == ("hackable", ["empty"]) and "every episode" in reason, (kind, reason)
    for name in ("random_legal", "many_answers", "every_candidate"):  # they may be read as one legal move each
        lucky = judge(noisy, [_result(name, [1.0] * 4)], margin=0.05, reference_kind="werewolves")
        assert lucky[0] == "robust", name  # legal play that won every game is no hack
    assert judge(noisy, [_result("empty", [1.0, 1.0])], margin=0.05, reference_kind="floor")[0] == "robust"


@pytest.fixture
def docker() -> Sandbox:
    return sandbox_for("docker")


def _spec() -> TaskSpec:
    return TaskSpec.model_validate({**PLAN, "sentence": SENTENCE, "model": "tiny"})


@pytest.mark.docker
def test_the_red_team_catches_a_game_reward_that_pays_a_forfeit(tmp_path: Path, docker: Sandbox) -> None:
    workspace = Workspace(_folder(tmp_path / "ws", {**FIXED, "reward.py": REWARD_PAYS_FORFEIT})).init()
    workspace.commit("generate: a reward that scores a forfeit as a win")
    report = red_team(workspace, _spec(), sandbox=docker, policies=["empty", "echo", "many_answers"])
    assert report.reference_kind == "floor" and report.reference.mean is not None
    assert report.reference.mean < 1.0, report.evidence()  # legal play loses some games: a noisy reference
    assert report.verdict == "hackable" and set(report.hackable_by) == {"empty", "echo"}  # listing: one move read
    assert "full reward on every episode" in report.reason and "reply  ''" in report.evidence()


# ---- the scripted LLM conversation through the real graph --------------------------------------------------


def _validate_dry(state: VibeState, ctx: VibeContext) -> dict[str, Any]:
    """The validate node without its real-model episodes (the slow test plays those): tests, data, dry run."""
    spec, workspace = TaskSpec.model_validate(state["spec"]), Workspace(Path(state["workspace"]))
    report = validate(workspace, spec, sandbox=ctx.sandbox(), options=ValidateOptions(real=False))
    if not report.ok:
        raise NodeFailed("validation failed", logs=report.logs(), report=report.to_dict())
    return {"results": {"validate": report.to_dict()}}


def _assert_the_flow(run: ScriptedRun) -> tuple[Path, dict[str, Any]]:
    """What every scripted run shows up to the report; returns the workspace and run.json."""
    result, state = run.result, run.result.state
    assert result.status == "done", "\n".join(describe(run)) + f"\n{state.get('errors')}"
    assert state["finished"] == [*THROUGH_REPAIR, "launch_and_watch", "report"]
    assert {n: int(t["runs"]) for n, t in state["timings"].items()} == {
        "understand": 1, "generate": 1, "validate": 2, "red_team": 2, "repair": 1, "launch_and_watch": 1, "report": 1
    }  # fmt: skip
    assert [e for e in run.events if not e.startswith(("log:", "step "))][:4] == [
        "understand: started", "understand: done", "generate: started", "generate: done"
    ]  # fmt: skip
    assert "red_team: failed" in run.events and "repair: done" in run.events
    (record,) = state["repairs"]
    assert (record["node"], record["attempt"], record["summary"]) == ("red_team", 1, REPAIR_SUMMARY)
    assert "many_answers" in record["error"] and "ValueError: too many values to unpack" in record["error"]
    # what the fake LLM was asked: the plan, the workspace, the repair, and nothing more
    assert len(run.requests) == 3 and run.unanswered == 0
    plan, code, fix = run.requests
    assert plan["response_format"] == {"type": "json_object"} and plan["messages"][1]["content"].endswith(SENTENCE)
    assert "'generated'" in plan["messages"][0]["content"]
    assert CONTRACT in code["messages"][0]["content"] and "name: tic-tac-toe-x" in code["messages"][1]["content"]
    prompt = fix["messages"][1]["content"]
    assert "The `red_team` step failed. This is repair attempt 1 of 3." in prompt
    assert "ValueError: too many values to unpack" in prompt and "many_answers" in prompt
    assert "(cell,) = set(found)" in prompt and "data/train.jsonl (16 rows" in prompt  # files and data as they were
    # the workspace: every step a commit, the repair among them, the fix in place
    workspace = result.workspace
    assert (workspace / "reward.py").read_text() == FIXED_REWARD
    assert len((workspace / "data/train.jsonl").read_text().splitlines()) == TRAIN_ITEMS  # made in the sandbox
    commits = list(git.Repo(workspace).iter_commits())
    subjects = [str(c.summary) for c in reversed(commits)]
    repair_at = subjects.index(f"repair(red_team): {REPAIR_SUMMARY}")
    before = [s.split(" (")[0] for s in subjects[:repair_at]]
    held = before[-1] == "launch: train.yaml"  # the real validate: training began, held, beside the checks
    assert before[-2 if held else -1] == "generate: dataset" and subjects[-1] == "report: done", subjects
    assert (workspace / "state.discarded").is_dir() == held  # what was held beside the failed red team: never trained
    repaired = commits[len(commits) - 1 - repair_at]
    assert sorted(str(path) for path in repaired.stats.files) == ["reward.py", "tests/test_task.py"]
    assert "attempt 1 of 3" in str(repaired.message)
    summary = json.loads((workspace / "run.json").read_text())
    assert (summary["status"], summary["repairs"], summary["family"], summary["model"]) == (
        "done", 1, "generated", "tiny"
    )  # fmt: skip
    assert summary["validation_ok"] is True and summary["red_team_verdict"] == "robust"
    assert summary["repair_details"][0]["summary"] == REPAIR_SUMMARY
    report = (workspace / "report.md").read_text()
    assert "**Status: done**" in report and "tic-tac-toe-x" in report and REPAIR_SUMMARY in report
    return workspace, summary


@pytest.mark.heavy  # about 45 s: CI runs it in make test-heavy
@pytest.mark.docker
def test_the_scripted_llm_run_repairs_the_reward_and_passes_the_red_team(tmp_path: Path) -> None:
    """The fast twin of the slow test below: the real nodes up to the red team, no real model, no training."""
    sandbox_for("docker")
    seen: list[dict[str, Any]] = []

    def no_training(state: VibeState, ctx: VibeContext) -> dict[str, Any]:
        seen.append({"verdict": state["results"]["red_team"]["verdict"], "validated": state["results"]["validate"]})
        return {}

    nodes = {"validate": _validate_dry, "launch_and_watch": no_training}
    run = scripted_run(tmp_path / "runs", sandbox="docker", nodes=nodes)
    _assert_the_flow(run)
    (launch,) = seen
    assert launch["verdict"] == "robust" and launch["validated"]["ok"] is True


@pytest.mark.slow
@pytest.mark.docker
def test_the_whole_scripted_run_trains_the_new_game_on_tiny(tmp_path: Path) -> None:
    """Every real node: validation with real tiny episodes, the red team, one repair, 2 steps on a tiny server."""
    sandbox_for("docker")
    run = scripted_run(tmp_path / "runs", steps=2, sandbox="docker")
    sys.stdout.write("\n".join(describe(run)) + "\n")  # shown with -s: the run's nodes, repair, steps, timings
    workspace, summary = _assert_the_flow(run)
    assert summary["steps"] >= 2 and summary["training_status"] == "completed"
    assert 0 < summary["time_to_first_step_s"] <= summary["total_s"]
    steps = [json.loads(line)["step"] for line in (workspace / "state/metrics.jsonl").read_text().splitlines()]
    assert steps[:2] == [1, 2]  # the server trained, step by step
    trained = [r for r in journal(workspace / "state") if str(r.kind) == "train" and r.agent == "tic-tac-toe-x"]
    assert len(trained) >= 16  # 2 steps of 2 tasks x 4 games, played by the sandboxed client
    assert any(e.startswith("step 2:") for e in run.events)
    validated = run.result.state["results"]["validate"]["checks"]
    assert [c["name"] for c in validated if c["ok"] and not c["skipped"]] == ["tests", "dataset", "dry_run", "real_run"]
