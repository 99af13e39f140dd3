"""`agentjet bench learn` end to end with `tiny`: base eval, train steps, final eval, JSON and PNG."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agentjet.bench.learn import LearnSettings, describe_eval, run_learn_bench
from agentjet.tasks.play.rounds import EvalResult, answer_counts


def test_learn_bench_evaluates_trains_and_reports(tmp_path: Path) -> None:
    settings = LearnSettings(
        task="arithmetic",
        params={"difficulty": 1, "max_tokens": 8},
        model="tiny",
        steps=2,
        eval_items=4,
        eval_every=1,
        tasks_per_step=1,
        group_size=2,
    )
    result = run_learn_bench(settings, tmp_path, progress=lambda _: None)
    for key in ("base_accuracy", "final_accuracy", "minutes", "ci95_low", "ci95_high", "png"):
        assert key in result
    assert result["steps"] == 2 and len(result["train_rewards"]) == 2
    assert [e[0] for e in result["evals"]] == [0, 1, 2]  # base, every step, no duplicate final
    assert result["eval_episodes"] == 4 and result["errors"] == 0
    assert "eval_invalid_share" not in result  # arithmetic does not count invalid answers
    assert result["ci95_low"] <= result["accuracy_change"] <= result["ci95_high"]
    assert Path(result["png"]).stat().st_size > 1000
    assert json.loads((tmp_path / "learn.json").read_text()) == result
    lines = (tmp_path / "metrics.jsonl").read_text().splitlines()
    assert [json.loads(line)["step"] for line in lines] == [1, 2]
    assert all(json.loads(line)["episodes"] == 2 for line in lines)  # eval episodes are never trained


TWO_SERVER_TASK = """
from agentjet.tasks.base import Outcome, TaskItem


class Pair:
    name = "pair"
    servers = ("left", "right")

    def items(self, split, *, count, seed):
        return [TaskItem(f"{split}-{i}", seed + i, {}) for i in range(count)]

    def run(self, item, llms):
        return Outcome({"left": 1.0, "right": 0.0})


TASK = Pair()
"""


def test_learn_bench_refuses_multi_server_families(tmp_path: Path) -> None:
    task = tmp_path / "pair_task.py"
    task.write_text(TWO_SERVER_TASK)
    with pytest.raises(ValueError, match="one policy server"):
        run_learn_bench(LearnSettings(task=str(task), model="tiny"), tmp_path / "out")


def test_invalid_answers_are_counted_only_where_the_family_counts_them() -> None:
    counted = {"invalid": {"policy": 3, "village": 9}, "actions": {"policy": 12, "village": 20}}
    assert answer_counts(counted) == (3, 12)
    assert answer_counts({"won": {"policy": True}}) == (0, 0)
    assert answer_counts({"invalid": 3, "actions": 12}) == (0, 0)  # not per server: not ours to read
    werewolves = EvalResult(step=0, solved=24, episodes=96, reward_mean=0.25, invalid=120, actions=480)
    assert werewolves.invalid_share == 0.25
    assert describe_eval(werewolves) == "24/96 solved, mean reward 0.250, 25% of 480 answers invalid"
    arithmetic = EvalResult(step=0, solved=3, episodes=4, reward_mean=0.75)
    assert arithmetic.invalid_share is None
    assert describe_eval(arithmetic) == "3/4 solved, mean reward 0.750"
