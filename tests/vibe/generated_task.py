"""A task "written by an LLM" for the generation and validation tests: parity ("is 7 even or odd?").

`PARITY` is a correct workspace in the shape an LLM is asked for (self-contained client, pure
reward, dataset.py, plain-assert tests). The buggy rewards are what validation must catch even
though the workspace's own tests pass: one raises on an answer that is neither word, one pays 2.0
for a wrong answer. `reply_with(files)` wraps files in fenced blocks as the LLM would.
"""

from __future__ import annotations

from collections.abc import Mapping

__all__ = ["PARITY", "REWARD_PAYS_TWO", "REWARD_RAISES", "reply_with"]

CLIENT = '''"""Parity: the policy says whether a number is even or odd."""

import importlib.util
import json
from pathlib import Path

from openai import OpenAI

from agentjet.tasks.base import Outcome, TaskItem

HERE = Path(__file__).resolve().parent


def _load_reward():
    spec = importlib.util.spec_from_file_location("parity_reward", HERE / "reward.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


reward = _load_reward()


class Parity:
    name = "parity"
    servers = ("policy",)

    def items(self, split, *, count, seed):
        lines = (HERE / "data" / f"{split}.jsonl").read_text().splitlines()
        rows = [json.loads(line) for line in lines if line.strip()]
        picked = [rows[(seed + i) % len(rows)] for i in range(count)]
        return [TaskItem(r["task_id"], r["seed"], r["data"]) for r in picked]

    def run(self, item, llms):
        endpoint = llms["policy"]
        client = OpenAI(base_url=endpoint.base_url, api_key=endpoint.api_key, max_retries=0)
        question = f"Is {item.data['number']} even or odd? End with `Answer: even` or `Answer: odd`."
        reply = client.chat.completions.create(
            model=endpoint.model,
            messages=[{"role": "user", "content": question}],
            max_tokens=16,
            seed=item.seed,
        )
        text = reply.choices[0].message.content or ""
        return Outcome.single(reward.score(item.data, text), reply=text)


def make_task(**params):
    return Parity()
'''

REWARD = '''"""Parity reward: 1.0 for the right word after `Answer:`, else 0.0."""

from agentjet.tasks.answers import find_answer


def score(item, reply):
    answer = find_answer(reply)
    if answer is None:
        return 0.0
    return 1.0 if answer.strip().lower() == item["parity"] else 0.0
'''

DATASET = '''"""Makes data/train.jsonl and data/eval.jsonl: distinct numbers with their parity."""

import argparse
import json
import random
from pathlib import Path

HERE = Path(__file__).resolve().parent


def parity(n):
    return "even" if n % 2 == 0 else "odd"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", type=Path, default=HERE / "data")
    parser.add_argument("--train", type=int, default=64)
    parser.add_argument("--eval", type=int, default=16)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    numbers = rng.sample(range(1, 100_000), args.train + args.eval)
    rows = [
        {"task_id": f"parity-{n}", "seed": rng.randrange(2**31), "data": {"number": n, "parity": parity(n)}}
        for n in numbers
    ]
    args.out.mkdir(parents=True, exist_ok=True)
    for name, part in (("train", rows[: args.train]), ("eval", rows[args.train :])):
        (args.out / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\\n" for r in part))


if __name__ == "__main__":
    main()
'''

TESTS = '''"""Parity workspace checks: python3 tests/test_task.py"""

import importlib.util
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def load(name):
    spec = importlib.util.spec_from_file_location(name, ROOT / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def rows(split):
    return [json.loads(line) for line in (ROOT / "data" / f"{split}.jsonl").read_text().splitlines() if line]


def test_reward():
    reward = load("reward")
    assert reward.score({"parity": "even"}, "Answer: even") == 1.0
    assert reward.score({"parity": "even"}, "Answer: odd") == 0.0


def test_dataset():
    train, evals = rows("train"), rows("eval")
    assert train and evals
    assert not {r["task_id"] for r in train} & {r["task_id"] for r in evals}


def test_client():
    task = load("client").make_task()
    assert len(task.items("eval", count=2, seed=0)) == 2


def main():
    failed = 0
    for name, fn in list(globals().items()):
        if name.startswith("test_"):
            try:
                fn()
                print("ok", name)
            except Exception as exc:
                failed += 1
                print("FAIL", name, repr(exc))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
'''

PARITY = {"client.py": CLIENT, "reward.py": REWARD, "dataset.py": DATASET, "tests/test_task.py": TESTS}

REWARD_RAISES = REWARD.replace(
    '    return 1.0 if answer.strip().lower() == item["parity"] else 0.0\n',
    '    other = "odd" if item["parity"] == "even" else "even"\n'
    '    return {item["parity"]: 1.0, other: 0.0}[answer.strip().lower()]\n',
)
REWARD_PAYS_TWO = REWARD.replace(  # a wrong answer that is neither word pays 2.0: the workspace's tests miss it
    '    return 1.0 if answer.strip().lower() == item["parity"] else 0.0\n',
    "    word = answer.strip().lower()\n"
    '    return 1.0 if word == item["parity"] else (0.0 if word in ("even", "odd") else 2.0)\n',
)


def reply_with(files: Mapping[str, str], preamble: str = "Here is the workspace.") -> str:
    blocks = "\n\n".join(f"```python path={path}\n{text.rstrip()}\n```" for path, text in files.items())
    return f"{preamble}\n\n{blocks}\n"
