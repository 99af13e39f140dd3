"""`agentjet bench learn-check` end to end on the tiny model: JSON figures, metrics and the PNG."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentjet.bench.learn_check import first_word_reward
from agentjet.cli.main import app


@pytest.mark.parametrize(
    "reply, reward",
    [("Banana", 1.0), ("banana.", 1.0), ("  'Banana' is a fruit", 1.0), ("Sure! Banana", 0.0), ("", 0.0)],
)
def test_reward_is_the_first_word(reply: str, reward: float) -> None:
    assert first_word_reward(reply, "banana") == reward


def test_learn_check_on_tiny_writes_the_curve_and_the_figures(tmp_path: Path, tiny_model: Path) -> None:
    out = tmp_path / "out"
    result = CliRunner().invoke(
        app, ["bench", "learn-check", "--model", "tiny", "--steps", "2", "--json", "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    figures = json.loads(result.stdout)
    assert {"steps", "reward_first3_mean", "reward_last3_mean", "rise", "seconds", "png"} <= figures.keys()
    assert figures["steps"] == 2 and figures["seconds"] > 0
    png = Path(figures["png"])
    assert png == out / "learning_curve.png" and png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    metrics = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    assert [m["step"] for m in metrics] == [1, 2] and all(m["episodes"] == 16 for m in metrics)
    assert figures["rewards"] == [round(m["reward_mean"], 4) for m in metrics]
    assert figures["rise"] == pytest.approx(figures["reward_last3_mean"] - figures["reward_first3_mean"], abs=1e-3)
    assert json.loads((out / "learn_check.json").read_text()) == figures
