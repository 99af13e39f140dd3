"""Makes data/train.jsonl and data/eval.jsonl: werewolves deals, one item per line.

    python3 dataset.py --out data --train 64 --eval 16 --seed 0

A line is `{"task_id": str, "seed": int, "data": {"deal": int}}`: the deal seats the nine roles (and
seeds the rules' tie-breaks); `seed` drives the scripted players and sampling. Train and eval never
share a deal and the same seed gives the same files (agentjet.tasks.splits).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from agentjet.tasks.werewolves import Werewolves

HERE = Path(__file__).resolve().parent
PARAMS: dict[str, Any] = {}  # vibe: params
TRAIN_ITEMS = 64  # vibe: dataset.train_items
EVAL_ITEMS = 16  # vibe: dataset.eval_items
SEED = 0  # vibe: dataset.seed


def build(train: int, eval_items: int, seed: int) -> dict[str, list[dict[str, Any]]]:
    """Both splits as JSON-able rows."""
    family = Werewolves(**PARAMS)
    return {
        split: [
            {"task_id": item.task_id, "seed": item.seed, "data": dict(item.data)}
            for item in family.items(split, count=count, seed=seed)
        ]
        for split, count in (("train", train), ("eval", eval_items))
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=HERE / "data")
    parser.add_argument("--train", type=int, default=TRAIN_ITEMS)
    parser.add_argument("--eval", type=int, default=EVAL_ITEMS)
    parser.add_argument("--seed", type=int, default=SEED)
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    for split, rows in build(args.train, args.eval, args.seed).items():
        (args.out / f"{split}.jsonl").write_text("".join(json.dumps(row, sort_keys=True) + "\n" for row in rows))


if __name__ == "__main__":
    main()
