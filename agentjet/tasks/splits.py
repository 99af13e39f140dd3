"""Seeded item streams whose train and eval splits can never share an item.

The item space of a family is cut in two by a hash of each item's content key (one key in
`EVAL_SHARE` is eval), and each split rejection-samples its own seeded stream into its half.
So train and eval never overlap whatever seeds are used, the same `(split, seed)` always gives
the same items, and `count=10` is a prefix of `count=20`. Items within one list are distinct.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from agentjet.tasks.base import Split, TaskItem

__all__ = ["EVAL_SHARE", "Draft", "draw_items", "split_of"]

EVAL_SHARE = 5  # one item in five of the item space is held out for eval
_MAX_TRIES_PER_ITEM = 400


@dataclass(frozen=True)
class Draft:
    """A generated item before it is placed: `key` names its content (equal keys = same item)."""

    key: str
    data: Mapping[str, Any]


def split_of(key: str) -> Split:
    """The split a content key belongs to: a fixed function of the key alone."""
    digest = hashlib.sha256(key.encode()).digest()
    return "eval" if int.from_bytes(digest[:8], "big") % EVAL_SHARE == 0 else "train"


def draw_items(
    stream: str, split: Split, *, count: int, seed: int, draw: Callable[[random.Random], Draft]
) -> list[TaskItem]:
    """`count` distinct items of `split` drawn from the seeded stream `stream` (e.g. `countdown-d2`).

    `task_id` is `stream/<content hash>`, so the same puzzle is the same GRPO group whatever seed
    drew it; `seed` of each item (sampling seeds) comes from the same stream."""
    if split not in ("train", "eval"):
        raise ValueError(f"split must be 'train' or 'eval', got {split!r}")
    if count < 0:
        raise ValueError(f"count must be >= 0, got {count}")
    rng = random.Random(f"{stream}|{split}|{seed}")
    items: list[TaskItem] = []
    seen: set[str] = set()
    for _ in range(_MAX_TRIES_PER_ITEM * count):
        if len(items) == count:
            break
        draft = draw(rng)
        if draft.key in seen or split_of(draft.key) != split:
            continue
        seen.add(draft.key)
        digest = hashlib.sha256(draft.key.encode()).hexdigest()[:12]
        items.append(TaskItem(task_id=f"{stream}/{digest}", seed=rng.randrange(2**31), data=draft.data))
    if len(items) < count:
        raise ValueError(f"{stream}: only {len(items)} distinct {split} items exist, {count} were asked for")
    return items
