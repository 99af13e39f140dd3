"""The run's report: report.md sections and tables, run.json's keys, curves.png from metrics lines, a commit."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentjet.vibe.plan.spec import SuccessMetric, TaskSpec
from agentjet.vibe.report.writer import ReportInput, run_summary, write_report
from agentjet.vibe.run.outcome import EvalEpisode, measure_outcome
from tests.vibe.launch_helpers import make_workspace

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _spec() -> dict[str, Any]:
    spec = TaskSpec(
        name="werewolves-wolves",
        sentence="train a 7B to play werewolves",
        family="werewolves",
        params={"trained_roles": ["werewolf"]},
        requested_model="7B",
        model="smollm2-135m",
        model_note="no GPU here: training the embedded smollm2-135m instead of a 7B",
        environment="the 9-player werewolves game",
        actors=["3 werewolves", "seer", "witch", "hunter", "3 villagers"],
        trained_roles=["werewolf"],
        reward="1 when the wolves win, 0 when they lose, -0.1 for invalid answers",
        success_metric=SuccessMetric(description="eval win rate of the wolves"),
        assumptions=["the sentence named no role: the wolves are trained", "7B has no GPU here"],
    )
    return spec.model_dump(mode="json")


def _metrics(steps: int) -> list[dict[str, Any]]:
    return [
        {
            "step": s,
            "reward_mean": 0.1 * s,
            "group_reward_std": 0.3,
            "loss": 0.5 / s,
            "eval_reward_mean": 0.05 * s if s % 2 == 0 else None,
        }
        for s in range(1, steps + 1)
    ]


def _finished_run() -> ReportInput:
    return ReportInput(
        sentence="train a 7B to play werewolves",
        status="done",
        started_at=1000.0,
        finished_at=1300.5,
        run_id="train-a-7b-20261130-0001",
        spec=_spec(),
        validation={
            "ok": True,
            "backend": "bwrap",
            "checks": [
                {"name": "tests", "ok": True, "summary": "4 tests passed", "log_tail": ""},
                {"name": "dry episodes", "ok": True, "summary": "4 | 4 episodes ended", "log_tail": ""},
            ],
        },
        red_team={
            "verdict": "sound",
            "reason": "no degenerate policy beat the reference",
            "margin": 0.05,
            "reference": {
                "name": "reference",
                "description": "scripted players",
                "mean": 0.6,
                "episodes": 8,
                "errors": 0,
            },
            "policies": [{"name": "empty", "description": "empty answers", "mean": -0.1, "episodes": 8, "errors": 0}],
        },
        repairs=[{"node": "validate", "attempt": 1, "error": "reward.py: ZeroDivisionError", "summary": "guarded"}],
        training={
            "status": "completed",
            "reason": "reached step 6",
            "steps": 6,
            "time_to_first_step_s": 41.237,
            "metrics": _metrics(6),
            "sandbox": "bwrap",
            "server": {"model": "smollm2-135m", "url": "http://127.0.0.1:1234", "how": "started"},
            "actions": [
                {
                    "step": 3,
                    "trouble": "client_exited",
                    "detail": "exit 3",
                    "kind": "regenerate_client",
                    "why": "regenerate",
                }
            ],
            "hot_swaps": [{"generation": 2, "client": "client.py", "latency_s": 1.9}],
            "outcome": measure_outcome(
                [EvalEpisode(f"b{i}", "ended", float(i < 3), 0) for i in range(16)],
                [EvalEpisode(f"a{i}", "ended", float(i < 14), 6) for i in range(16)],
                launch_step=0,
                final_step=None,
                success_reward=0.5,
                rate_name="win rate",
            ).to_dict(),  # fmt: skip
        },
        timings={"understand": {"elapsed_s": 0.2}, "launch_and_watch": {"elapsed_s": 250.0}},
    )


@pytest.mark.parametrize(
    ("total_s", "shown"), [(719.6, "12 min 0 s"), (719.4, "11 min 59 s"), (125.0, "2 min 5 s"), (119.96, "120.0 s")]
)
def test_a_run_s_total_time_reads_as_minutes_and_whole_seconds(tmp_path: Path, total_s: float, shown: str) -> None:
    run = _finished_run()
    run.finished_at = run.started_at + total_s
    text = write_report(make_workspace(tmp_path / "ws"), run)["report.md"].read_text()
    assert f"total: **{shown}**" in text


def test_the_last_eval_reward_is_the_last_held_out_round_s_else_the_metrics(tmp_path: Path) -> None:
    """A step's metrics line counts the eval episodes that ended in its window (in a vibe run, the base's round
    beside training); the final round ends after the last step, so the outcome's last round is the one to say."""
    run = _finished_run()
    assert run_summary(run)["last_eval_reward"] == pytest.approx(0.875)
    assert run.training is not None
    run.training = {k: v for k, v in run.training.items() if k != "outcome"}  # no held-out rounds: the metrics
    assert run_summary(run)["last_eval_reward"] == pytest.approx(0.3)


def test_a_finished_run_gets_report_json_and_curves(tmp_path: Path) -> None:
    workspace = make_workspace(tmp_path / "ws")
    files = write_report(workspace, _finished_run())
    assert set(files) == {"report.md", "run.json", "curves.png"}
    summary = json.loads(files["run.json"].read_text())
    assert summary["status"] == "done" and summary["steps"] == 6 and summary["repairs"] == 1
    assert summary["time_to_first_step_s"] == 41.24 and summary["total_s"] == 300.5
    assert summary["first_train_reward"] == 0.1
    assert summary["last_eval_reward"] == pytest.approx(0.875)  # the final held-out round's (14 of 16 rewards 1)
    assert summary["model_note"].startswith("no GPU here") and summary["red_team_verdict"] == "sound"
    assert files["curves.png"].read_bytes().startswith(PNG_MAGIC)
    text = files["report.md"].read_text()
    for heading in (
        "## What was asked",
        "### Assumptions",
        "## What was generated",
        "## Validation",
        "## Red team of the reward",
        "## Repairs",
        "## Training",
        "## Time per node",
    ):
        assert heading in text
    assert "no GPU here: training the embedded smollm2-135m instead of a 7B" in text
    assert "the sentence named no role" in text and "(asked for: 7B)" in text
    assert "| `reward.py` |" in text and "| `data/train.jsonl` |" in text and "state/" not in text
    assert "4 \\| 4 episodes ended" in text  # a pipe inside a cell does not break the table
    assert "| empty | empty answers | -0.100 | 8 | 0 |" in text
    assert "![reward and eval curves](curves.png)" in text and "41.2 s" in text and "5 min 0 s" in text
    assert summary["verdict"] == "improved" and (summary["before"], summary["after"]) == (0.1875, 0.875)
    assert summary["change_ci95"][0] > 0 and summary["outcome"]["curve"][-1]["step"] == 6
    assert text.index("## Did the agent get better?") < text.index("## What was asked")  # the answer comes first
    assert "Held-out result: **win rate 3/16 (18.8%) -> 14/16 (87.5%), +68.8 points (95% CI +" in text
    assert "| 2 | `client.py` | 1.9 s |" in text
    assert workspace.history()[0][1] == "report: done"
    assert not workspace.repo.is_dirty(untracked_files=True)


def test_a_run_that_never_trained_still_gets_a_report(tmp_path: Path) -> None:
    workspace = make_workspace(tmp_path / "ws")
    data = ReportInput(
        sentence="train a 7B to play werewolves",
        status="failed",
        started_at=0.0,
        finished_at=12.0,
        message="validate failed after 3 repairs",
        spec=_spec(),
        validation={
            "ok": False,
            "backend": "bwrap",
            "checks": [{"name": "tests", "ok": False, "summary": "1 test failed", "log_tail": "AssertionError"}],
        },
    )
    files = write_report(workspace, data)
    assert "curves.png" not in files and not (workspace.path / "curves.png").exists()
    summary = run_summary(data)
    assert summary["time_to_first_step_s"] is None and summary["steps"] == 0 and summary["repairs"] == 0
    text = files["report.md"].read_text()
    assert "**Status: failed**: validate failed after 3 repairs" in text
    assert "| tests | FAILED | 1 test failed |" in text and "Training did not start." in text
    assert "not reached" in text
