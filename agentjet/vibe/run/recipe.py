"""The training settings of a vibe run: the default TrainConfig, a spec's recipe merged into it, greedy held-out rounds.

A built-in family's plan carries the recipe measured to learn on the embedded model
(`TaskSpec.train`, TrainConfig overrides: group size, batch, learning rate, LoRA targets); the
rest comes from `default_train_config`. The client plays in rounds of one step's episodes and
waits for the update after each (`client run --update-every`), so on a 2-core machine an update
never shares the CPU with rollouts, and every round is on-policy.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from typing import Any

from agentjet.core import ConfigError, TrainConfig
from agentjet.tasks.registry import FAMILIES, load_family
from agentjet.vibe.errors import VibeError
from agentjet.vibe.plan.spec import TaskSpec, merge_overrides

__all__ = ["default_train_config", "episodes_per_step", "greedy_params", "train_config_for"]


def default_train_config() -> TrainConfig:
    """Small GRPO steps (2 tasks x 4 episodes) so a CPU run shows its first step soon."""
    return TrainConfig.model_validate(
        {"grpo": {"group_size": 4}, "collect": {"strategy": "tasks", "tasks": 2}, "optim": {"lr": 2e-4}}
    )


def episodes_per_step(config: TrainConfig) -> int:
    """Train episodes one update consumes under the config's collection strategy (at least)."""
    if config.collect.strategy == "episodes":
        return config.collect.episodes
    return config.collect.tasks * config.grpo.group_size


def train_config_for(overrides: Mapping[str, Any]) -> TrainConfig:
    """`default_train_config` with a recipe's overrides (nested keys as in train.yaml) merged in."""
    try:
        merged = merge_overrides(default_train_config().model_dump(mode="json"), dict(overrides))
        return TrainConfig.model_validate(merged)
    except (ConfigError, ValueError) as exc:
        raise VibeError(f"the spec's train settings are no valid TrainConfig: {exc}") from exc


def greedy_params(spec: TaskSpec) -> tuple[str, ...]:
    """Held-out rounds play greedily where the task samples at a temperature (a built-in family's parameter)."""
    if spec.family not in FAMILIES:
        return ()
    try:
        family = load_family(spec.family, spec.params)
    except ConfigError:
        return ()
    return ("temperature=0",) if "temperature" in inspect.signature(type(family)).parameters else ()
