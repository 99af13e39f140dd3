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


def solved(data: dict[str, Any]) -> dict[str, Any]:
    """What a perfect episode leaves: every asked item looked up, the total noted and answered."""
    total = data["total"]
    return {"final_reply": f"Answer: {total}", "notes": [f"total: {total}"], "looked_up": list(data["order"])}


def test_reward_is_one_for_a_perfect_episode() -> None:
    for row in rows("eval") + rows("train")[:20]:
        assert reward.score(row["data"], solved(row["data"])) == 1.0, row


def test_reward_gives_partial_credit() -> None:
    data = rows("eval")[0]["data"]
    total, asked = data["total"], list(data["order"])
    wrong = {"final_reply": f"Answer: {total + 1}", "notes": [f"total: {total + 1}"], "looked_up": asked}
    assert reward.score(data, wrong) == 0.2  # looked everything up, wrong total
    assert reward.score(data, {**solved(data), "notes": []}) == 0.6  # no note
    assert reward.score(data, {**solved(data), "final_reply": None}) == 0.6  # ran out of turns
    half = {**solved(data), "looked_up": asked[:1]}
    assert abs(reward.score(data, half) - (0.8 + 0.2 / len(asked))) < 1e-6  # guessed some prices


def test_reward_is_zero_for_degenerate_episodes() -> None:
    data = rows("eval")[0]["data"]
    total = data["total"]
    degenerate = [
        {"final_reply": "", "notes": [], "looked_up": []},
        {"final_reply": data["question"], "notes": [], "looked_up": []},  # echoing the question
        {"final_reply": f"Answer: {total} Answer: {total + 1}", "notes": [], "looked_up": []},  # hedging
        {"final_reply": "Answer: " + " ".join(str(n) for n in range(500)), "notes": [], "looked_up": []},
        {"final_reply": None, "notes": [" ".join(str(n) for n in range(total + 5))], "looked_up": []},
        {"final_reply": None, "notes": [], "looked_up": ["unicorn", "everything"]},  # items not asked for
    ]
    for outcome in degenerate:
        assert reward.score(data, outcome) == 0.0, outcome


def test_dataset_schema() -> None:
    train, evals = rows("train"), rows("eval")
    assert train and evals, "both splits must have items"
    for row in train + evals:
        assert set(row) == {"task_id", "seed", "data"}, row
        assert isinstance(row["task_id"], str) and isinstance(row["seed"], int)
        data = row["data"]
        assert isinstance(data["question"], str) and data["order"] and set(data["order"]) <= set(data["prices"]), data
        assert data["total"] == sum(data["prices"][name] * qty for name, qty in data["order"].items()), data
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
