"""The synthetic trial: no model, a known noisy learning curve of the params, for the scheduler bench and tests.

`task: {family: synthetic, params: {step_s: 0.05, noise: 0.02}}`. A trial of `steps` steps sleeps
`step_s` per step (the stand-in for training) and, every `eval_every` steps and at the end,
reports `quality * (1 - 0.5 ** step) + noise`, where `quality` (in (0, 1]) peaks at 1.0 for
`lr = 1e-3`, `lora_rank = 16`, `group_size = 4` (Gaussian in log10(lr), log2(rank), log2(group
size)), and the noise is Gaussian with sd `noise`, drawn from a generator seeded by the trial's
seed and those params: the same seed and params give the same curve in any process. It runs on
any pool member (a real server is only watched, never called) and raises ServerLost when its
member dies, exactly as a model trial would.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable, Mapping
from typing import Any

from agentjet.a3r.errors import CampaignError, ServerLost
from agentjet.a3r.pool.members import MemberState, PoolMember
from agentjet.core import TrainConfig

__all__ = ["DEFAULTS", "PEAK", "quality", "synthetic_curve", "synthetic_options"]

DEFAULTS: dict[str, float] = {"step_s": 0.01, "noise": 0.02}
PEAK = {"lr": 1e-3, "lora_rank": 16, "group_size": 4}


def synthetic_options(params: Mapping[str, Any]) -> dict[str, float]:
    """The task params with defaults; CampaignError naming the known ones for anything else."""
    unknown = sorted(set(params) - set(DEFAULTS))
    if unknown:
        known = ", ".join(f"{k} (default {v})" for k, v in DEFAULTS.items())
        raise CampaignError(f"unknown synthetic task params {unknown}; the synthetic task takes {known}")
    options = {**DEFAULTS, **{k: float(v) for k, v in params.items()}}
    if options["step_s"] < 0 or options["noise"] < 0:
        raise CampaignError(f"synthetic step_s and noise must be >= 0, got {options}")
    return options


def quality(config: TrainConfig) -> float:
    """1.0 at the peak (lr 1e-3, LoRA rank 16, group size 4), falling off smoothly away from it."""
    lr_term = (math.log10(config.optim.lr) - math.log10(PEAK["lr"])) ** 2 / (2 * 0.5**2)
    rank_term = (math.log2(config.lora.rank) - math.log2(PEAK["lora_rank"])) ** 2 / (2 * 1.0**2)
    group_term = (math.log2(config.grpo.group_size) - math.log2(PEAK["group_size"])) ** 2 / (2 * 1.5**2)
    return math.exp(-(lr_term + rank_term + group_term))


def synthetic_curve(config: TrainConfig, *, steps: int, seed: int, noise: float) -> list[float]:
    """The value at steps 1..steps: deterministic for (config's searched fields, seed)."""
    key = f"synthetic:{seed}:{config.optim.lr!r}:{config.lora.rank}:{config.grpo.group_size}"
    rng = random.Random(key)  # a str seed is hashed with SHA-512: the same in every process
    q = quality(config)
    return [q * (1 - 0.5**step) + rng.gauss(0.0, noise) for step in range(1, steps + 1)]


def run_synthetic(
    member: PoolMember,
    config: TrainConfig,
    *,
    steps: int,
    eval_points: set[int],
    seed: int,
    options: Mapping[str, float],
    report: Callable[[int, float], bool],
) -> tuple[list[tuple[int, float]], int, bool]:
    """Sleep through the steps, report at `eval_points`; (curve, steps done, pruned)."""
    values = synthetic_curve(config, steps=steps, seed=seed, noise=options["noise"])
    curve: list[tuple[int, float]] = []
    for step in range(1, steps + 1):
        time.sleep(options["step_s"])  # the stand-in for a training step's work
        _check_alive(member)
        if step in eval_points:
            curve.append((step, values[step - 1]))
            if report(step, values[step - 1]):
                return curve, step, True
    return curve, steps, False


def _check_alive(member: PoolMember) -> None:
    """Cheap: the heartbeat's verdict, or a local process seen dead (no HTTP call per step)."""
    if member.is_dead() or member.state is MemberState.DOWN:
        raise ServerLost(member.name, member.down_reason or "its process exited")
