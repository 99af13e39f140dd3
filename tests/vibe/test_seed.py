"""`agentjet vibe --seed N`: the items a run trains and is measured on are drawn with N, so a second run of one
sentence is a second sample (other deals, puzzles, lists), and one seed gives the same files again."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from agentjet.cli.main import app
from agentjet.vibe.errors import PlanRefused
from agentjet.vibe.generate.contract import DATA_FILES
from agentjet.vibe.generate.generator import generate
from agentjet.vibe.nodes import _launch_options
from agentjet.vibe.plan.planner import plan
from agentjet.vibe.workspace import Workspace

runner = CliRunner()

SENTENCES = {
    "werewolves": "train a 7B to play werewolves",
    "countdown": "RL a model on countdown",
    "arithmetic": "teach the model arithmetic",
    "tool_use": "train a model to use tools",
    "word": "teach a model to answer with one word",
}


def _items(tmp_path: Path, family: str, seed: int, name: str) -> dict[str, list[dict[str, Any]]]:
    spec = plan(SENTENCES[family], llm=None, gpu=False, seed=seed)
    ws = Workspace(tmp_path / name).init()
    generate(spec, ws, llm=None)
    return {split: [json.loads(line) for line in ws.read(path).splitlines()] for split, path in DATA_FILES.items()}


@pytest.mark.parametrize("family", sorted(SENTENCES))
def test_another_seed_draws_other_items_and_the_same_seed_the_same(tmp_path: Path, family: str) -> None:
    first, again, other = (_items(tmp_path, family, seed, name) for seed, name in ((0, "a"), (0, "b"), (7, "c")))
    assert first == again
    for split in ("train", "eval"):
        assert len(other[split]) == len(first[split])
        assert {row["seed"] for row in other[split]} != {row["seed"] for row in first[split]}, split
    assert not {r["task_id"] for r in other["train"]} & {r["task_id"] for r in other["eval"]}


def test_the_seed_reaches_the_spec_the_clients_and_the_assumptions() -> None:
    default = plan("train a 7B to play werewolves", llm=None, gpu=False)
    seeded = plan("train a 7B to play werewolves", llm=None, gpu=False, seed=3, eval_items=8)
    assert default.dataset.seed == 0 and not any("--seed" in a for a in default.assumptions)
    assert seeded.dataset.seed == 3 and seeded.dataset.eval_items == 8  # one flag does not undo the other
    assert "--seed 3: the train and held-out items are drawn with seed 3" in seeded.assumptions
    assert _launch_options(seeded).seed == 3 and _launch_options(default).seed == 0
    assert seeded.train == default.train and seeded.budget == default.budget


@pytest.mark.parametrize("seed", [-1, 2**31])
def test_a_seed_out_of_range_is_refused(seed: int) -> None:
    with pytest.raises(PlanRefused, match=f"seed {seed} cannot be planned"):
        plan("countdown", llm=None, gpu=False, seed=seed)


def test_the_cli_plans_the_seed_and_refuses_it_on_a_resume(tmp_path: Path) -> None:
    result = runner.invoke(app, ["vibe", "countdown", "--seed", "11", "--dry-run", "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["dataset"]["seed"] == 11
    bad = runner.invoke(app, ["vibe", "countdown", "--seed", "-2", "--workdir", str(tmp_path)])
    assert bad.exit_code == 2 and "--seed" in bad.output and "Traceback" not in bad.output
    for extra in (["--seed", "0"], ["--seed", "4", "--train", "optim.lr=1e-4"]):
        resumed = runner.invoke(app, ["vibe", "--resume", "x", *extra, "--workdir", str(tmp_path)])
        assert resumed.exit_code == 2 and "go" in resumed.output and "with a new run" in resumed.output
    assert not list(tmp_path.iterdir())  # nothing written
