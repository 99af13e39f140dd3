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


def test_reward_is_one_for_the_word() -> None:
    for row in rows("eval") + rows("train")[:20]:
        word = row["data"]["word"]
        assert reward.score(row["data"], word) == 1.0, row
        assert reward.score(row["data"], f"{word.capitalize()}!") == 1.0, row  # case and punctuation


def test_reward_is_zero_for_another_word() -> None:
    for row in rows("eval"):
        word = row["data"]["word"]
        assert reward.score(row["data"], f"sure {word}") == 0.0, row  # the word, but not first


def test_reward_is_zero_for_degenerate_replies() -> None:
    data = rows("eval")[0]["data"]
    degenerate = ["", "   ", "42", f"Reply with just the word '{data['word']}' and nothing else.", "x" * 5000]
    for reply in degenerate:
        assert reward.score(data, reply) == 0.0, reply[:80]


def test_dataset_schema() -> None:
    train, evals = rows("train"), rows("eval")
    assert train and evals, "both splits must have items"
    for row in train + evals:
        assert set(row) == {"task_id", "seed", "data"}, row
        assert isinstance(row["task_id"], str) and isinstance(row["seed"], int)
        assert isinstance(row["data"]["word"], str) and row["data"]["word"].isalpha(), row
    assert not {r["task_id"] for r in train} & {r["task_id"] for r in evals}, "train and eval share items"
    assert not {r["data"]["word"] for r in train} & {r["data"]["word"] for r in evals}, "train and eval share words"


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
    assert tuple(task.servers) == ("policy",) and task.name
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
