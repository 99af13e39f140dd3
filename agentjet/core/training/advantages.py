"""GRPO advantages: each episode's reward relative to the other episodes of its task group (pure)."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence

__all__ = ["group_advantages", "mean_std"]


def mean_std(values: Sequence[float]) -> tuple[float, float]:
    """Mean and population std of finite values, without overflow for any finite input.

    Everything is computed on `values / max|values|`, so rewards near the float maximum give a
    finite std (the naive `(v - mean) ** 2` overflows to inf, or the sum of two huge values does).
    The std may still be `inf` only when the true std exceeds the float range, which cannot
    happen for values inside it; callers refuse non-finite values before they get here.
    """
    if not values:
        raise ValueError("mean_std of no values")
    scale = max(abs(v) for v in values)
    if scale == 0.0 or all(v == values[0] for v in values):
        return values[0], 0.0
    scaled = [v / scale for v in values]
    mean = math.fsum(scaled) / len(scaled)
    var = math.fsum((v - mean) ** 2 for v in scaled) / len(scaled)
    return mean * scale, math.sqrt(var) * scale


def group_advantages(
    rewards: Sequence[float], groups: Sequence[str], *, scale: bool = True, std_floor: float = 1e-6
) -> list[float]:
    """Reward minus its group's mean, divided by the group's std + `std_floor` when `scale`.

    Groups may differ in size. A group whose rewards are all equal gets advantages of exactly 0
    (never NaN): it carries no signal about which behaviour was better. Std is the population
    std (ddof=0), so a group of two equal-and-opposite rewards gets +-1 / (1 + floor). Rewards
    must be finite (the server refuses others at `end`); any finite rewards give finite scaled
    advantages, computed on rescaled values so that huge ones cannot overflow.
    """
    if len(rewards) != len(groups):
        raise ValueError(f"{len(rewards)} rewards but {len(groups)} group labels")
    if not all(math.isfinite(r) for r in rewards):
        raise ValueError("rewards must be finite")
    members: dict[str, list[int]] = defaultdict(list)
    for index, group in enumerate(groups):
        members[group].append(index)
    out = [0.0] * len(rewards)
    for indices in members.values():
        values = [rewards[i] for i in indices]
        top = max(abs(v) for v in values)
        if top == 0.0 or all(v == values[0] for v in values):
            continue  # no signal: exactly 0, whatever rounding the mean would do
        unit = [v / top for v in values]  # in [-1, 1]: nothing below can overflow
        mean = math.fsum(unit) / len(unit)
        std = math.sqrt(math.fsum((v - mean) ** 2 for v in unit) / len(unit))
        for i, v in zip(indices, unit, strict=True):
            centred = v - mean
            if centred == 0.0:
                continue
            out[i] = centred / (std + std_floor / top) if scale else centred * top
    return out
