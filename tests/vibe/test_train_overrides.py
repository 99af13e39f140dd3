"""`agentjet vibe --train KEY=VALUE`: dotted TrainConfig overrides, checked at once, kept in the spec."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from agentjet.cli.main import app
from agentjet.core import ConfigError
from agentjet.vibe.plan.planner import plan
from agentjet.vibe.plan.train_overrides import describe_overrides, parse_train_overrides
from agentjet.vibe.run.recipe import train_config_for

runner = CliRunner()


@pytest.mark.parametrize(
    ("pairs", "expected"),
    [
        (["collect.tasks=1"], {"collect": {"tasks": 1}}),
        (["optim.lr=1e-4", "optim.weight_decay=0.01"], {"optim": {"lr": 1e-4, "weight_decay": 0.01}}),
        (["grpo.group_size=4", "collect.tasks=3"], {"grpo": {"group_size": 4}, "collect": {"tasks": 3}}),
        (["collect.tasks=2", "collect.tasks=5"], {"collect": {"tasks": 5}}),  # the last one wins
        (['lora.target_modules=["q_proj"]'], {"lora": {"target_modules": ["q_proj"]}}),
        ([], {}),
    ],
)
def test_dotted_pairs_become_nested_overrides(pairs: list[str], expected: dict[str, Any]) -> None:
    assert parse_train_overrides(pairs) == expected
    assert parse_train_overrides(describe_overrides(expected)) == expected  # the spec text reads back


@pytest.mark.parametrize(
    ("pairs", "message"),
    [
        (["collect.taskz=1"], "collect.taskz: Extra inputs are not permitted"),
        (["optim.lr=fast"], "optim.lr:"),
        (["grpo.group_size=1"], "grpo.group_size: Input should be greater than or equal to 2"),
        (["lr"], "must look like section.field=value"),
        (["=3"], "must look like section.field=value"),
        (["optim..lr=1"], "must look like section.field=value"),
        (["grpo=3"], "grpo:"),
    ],
)
def test_a_bad_override_is_one_clear_error(pairs: list[str], message: str) -> None:
    with pytest.raises(ConfigError, match="--train") as caught:
        parse_train_overrides(pairs)
    assert message in str(caught.value) and "\n" not in str(caught.value)


def test_overrides_win_over_the_recipe_and_keep_the_rest_of_it() -> None:
    spec = plan("train a 7B to play werewolves", llm=None, gpu=False, train={"collect": {"tasks": 2}})
    recipe = plan("train a 7B to play werewolves", llm=None, gpu=False).train
    assert spec.train["collect"]["tasks"] == 2 and recipe["collect"]["tasks"] == 1
    assert spec.train["optim"] == recipe["optim"] and spec.train["grpo"] == recipe["grpo"]
    assert train_config_for(spec.train).collect.tasks == 2
    assert any("--train" in a and "collect.tasks=2" in a for a in spec.assumptions)


def test_the_cli_shows_the_override_in_the_dry_run_and_refuses_a_bad_one(tmp_path: Path) -> None:
    result = runner.invoke(
        app, ["vibe", "teach the model arithmetic", "--train", "optim.lr=1e-4", "--dry-run", "--json",
              "--workdir", str(tmp_path)],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["train"]["optim"]["lr"] == 1e-4
    bad_args = ["vibe", "teach the model arithmetic", "--train", "optim.lrr=1", "--workdir", str(tmp_path)]
    bad = runner.invoke(app, bad_args)
    assert bad.exit_code == 2 and "--train: optim.lrr" in bad.output and "Traceback" not in bad.output
    assert not list(tmp_path.iterdir())  # nothing written
    resumed = runner.invoke(app, ["vibe", "--resume", "x", "--train", "collect.tasks=1", "--workdir", str(tmp_path)])
    assert resumed.exit_code == 2 and "new run" in resumed.output
