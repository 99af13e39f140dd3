"""Checks of this workspace's reward, dataset and client. Plain asserts, no pytest needed:

python3 tests/test_task.py        # prints one line per test; exit status 1 when one fails
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import tempfile
import traceback
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def load(name: str) -> ModuleType:
    path = ROOT / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"vibe_test_{name}", path)
    assert spec is not None and spec.loader is not None, f"cannot load {path}"
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def rows(split: str) -> list[dict[str, Any]]:
    lines = (ROOT / "data" / f"{split}.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines if line.strip()]


reward = load("reward")


def game(winner: str, side: str = "wolves", invalid: int = 0, actions: int = 12) -> dict[str, Any]:
    return {"winner": winner, "side": side, "invalid": invalid, "actions": actions}


def test_reward_is_one_for_a_won_game() -> None:
    data = rows("eval")[0]["data"]
    assert reward.score(data, game("wolves")) == 1.0
    assert reward.score(data, game("village", side="village")) == 1.0


def test_reward_is_zero_for_a_lost_or_drawn_game() -> None:
    data = rows("eval")[0]["data"]
    assert reward.score(data, game("village")) == 0.0
    assert reward.score(data, game("wolves", side="village")) == 0.0
    assert reward.score(data, game("draw")) == 0.0  # the round cap is a loss for everyone


def test_invalid_answers_are_penalised() -> None:
    data = rows("eval")[0]["data"]
    clean_win = reward.score(data, game("wolves"))
    garbage_win = reward.score(data, game("wolves", invalid=12))  # garbage answers, lucky win
    assert garbage_win < clean_win, (garbage_win, clean_win)
    if reward.PENALTY == "episode":
        assert garbage_win < reward.score(data, game("village")), garbage_win  # worse than losing cleanly
        assert reward.score(data, game("wolves", invalid=int(12 * reward.INVALID_TOLERANCE) + 1)) == -0.1
    assert reward.score(data, game("wolves", invalid=0, actions=0)) == 1.0  # no question asked: no penalty


def test_dataset_schema() -> None:
    train, evals = rows("train"), rows("eval")
    assert train and evals, "both splits must have items"
    for row in train + evals:
        assert set(row) == {"task_id", "seed", "data"}, row
        assert isinstance(row["task_id"], str) and isinstance(row["seed"], int)
        assert isinstance(row["data"]["deal"], int), row
    assert not {r["task_id"] for r in train} & {r["task_id"] for r in evals}, "train and eval share items"


def test_dataset_py_reproduces_the_data() -> None:
    dataset = load("dataset")
    with tempfile.TemporaryDirectory() as out:
        subprocess.run([sys.executable, str(ROOT / "dataset.py"), "--out", out], check=True)
        for split, count in (("train", dataset.TRAIN_ITEMS), ("eval", dataset.EVAL_ITEMS)):
            made = (Path(out) / f"{split}.jsonl").read_text()
            assert made == (ROOT / "data" / f"{split}.jsonl").read_text(), f"data/{split}.jsonl is stale"
            assert len(made.splitlines()) == count


def test_client_loads_and_reads_the_data() -> None:
    task = load("client").make_task()
    assert task.servers and task.name
    items = task.items("eval", count=3, seed=0)
    assert [i.task_id for i in items] == [r["task_id"] for r in rows("eval")[:3]]
    assert len(task.items("train", count=len(rows("train")) + 2, seed=1)) == len(rows("train")) + 2  # cycles


def main() -> int:
    tests: list[tuple[str, Callable[[], None]]] = [
        (name, fn) for name, fn in globals().items() if name.startswith("test_") and callable(fn)
    ]
    failed = 0
    for name, fn in tests:
        try:
            fn()
        except Exception:
            failed += 1
            print(f"FAIL {name}\n{traceback.format_exc()}", flush=True)
        else:
            print(f"ok   {name}", flush=True)
    print(f"{len(tests) - failed} passed, {failed} failed", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
