"""GRPO groups: an item played `group_size` times, each member sampling with its own seed.

Member 0 keeps the item's seed; the others get seeds derived from it, distinct and reproducible, so a
group samples differently every time the same way (`agentjet client run`, `bench learn`, campaign trials).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import replace

from agentjet.tasks.base import TaskItem

__all__ = ["group_members", "member_seed"]


def member_seed(seed: int, member: int) -> int:
    """The seed of the `member`-th episode of a group: distinct per member, the item's own for member 0."""
    return seed if member == 0 else random.Random(f"{seed}:{member}").randrange(2**31)


def group_members(items: Sequence[TaskItem], group_size: int) -> list[TaskItem]:
    """Each item `group_size` times in a row (one GRPO group: same task_id), member k seeded by `member_seed`."""
    return [replace(item, seed=member_seed(item.seed, k)) for item in items for k in range(group_size)]
