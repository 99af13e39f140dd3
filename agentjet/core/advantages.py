"""GRPO advantages: each episode's reward relative to the other episodes of its task group (pure)."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence

__all__ = ["group_advantages"]


def group_advantages(
    rewards: Sequence[float], groups: Sequence[str], *, scale: bool = True, std_floor: float = 1e-6
) -> list[float]:
    """Reward minus its group's mean, divided by the group's std + `std_floor` when `scale`.

    Groups may differ in size. A group whose rewards are all equal gets advantages of exactly 0
    (never NaN): it carries no signal about which behaviour was better. Std is the population
    std (ddof=0), so a group of two equal-and-opposite rewards gets +-1 / (1 + floor).
    """
    if len(rewards) != len(groups):
        raise ValueError(f"{len(rewards)} rewards but {len(groups)} group labels")
    members: dict[str, list[int]] = defaultdict(list)
    for index, group in enumerate(groups):
        members[group].append(index)
    out = [0.0] * len(rewards)
    for indices in members.values():
        values = [rewards[i] for i in indices]
        mean = sum(values) / len(values)
        std = math.sqrt(sum((v - mean) ** 2 for v in values) / len(values))
        for i in indices:
            centred = rewards[i] - mean
            out[i] = centred / (std + std_floor) if scale and centred != 0.0 else centred
    return out
