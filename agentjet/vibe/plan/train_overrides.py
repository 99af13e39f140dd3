"""`agentjet vibe --train KEY=VALUE`: the user's TrainConfig overrides, over the family's measured recipe.

Keys are train.yaml's fields with dots (`collect.tasks=1`, `optim.lr=1e-4`, `grpo.group_size=4`);
a value is read as JSON when it parses (numbers, true/false, lists), else kept as a string. Each
override is checked against TrainConfig at once, so a typo or a bad value is a one-line error
before anything runs, and the plan records it in `spec.train` and as an assumption.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from pydantic import ValidationError

from agentjet.core import ConfigError, TrainConfig, describe_validation_error
from agentjet.vibe.plan.spec import merge_overrides

__all__ = ["check_train", "describe_overrides", "parse_train_overrides"]


def parse_train_overrides(pairs: Sequence[str]) -> dict[str, Any]:
    """`["collect.tasks=1", "optim.lr=1e-4"]` -> `{"collect": {"tasks": 1}, "optim": {"lr": 0.0001}}`, checked."""
    overrides: dict[str, Any] = {}
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        path = [part.strip() for part in key.split(".")]
        if not sep or not all(part.isidentifier() for part in path):
            raise ConfigError(f"--train must look like section.field=value (e.g. collect.tasks=1), got {pair!r}")
        try:
            value: Any = json.loads(raw)
        except json.JSONDecodeError:
            value = raw
        nested: Any = value
        for part in reversed(path):
            nested = {part: nested}
        overrides = merge_overrides(overrides, nested)
    check_train(overrides, "--train")
    return overrides


def check_train(overrides: dict[str, Any], what: str) -> None:
    """ConfigError ("{what}: ...", one line) unless `overrides` over TrainConfig's defaults make a valid config."""
    try:
        TrainConfig.model_validate(merge_overrides(TrainConfig().model_dump(mode="json"), overrides))
    except ValidationError as exc:
        raise ConfigError(f"{what}: {describe_validation_error(exc)}") from exc
    except ConfigError as exc:
        raise ConfigError(f"{what}: {exc}") from exc


def describe_overrides(overrides: dict[str, Any], prefix: str = "") -> list[str]:
    """`{"collect": {"tasks": 1}}` -> `["collect.tasks=1"]`, in the given order."""
    out: list[str] = []
    for key, value in overrides.items():
        if isinstance(value, dict):
            out += describe_overrides(value, f"{prefix}{key}.")
        else:
            out.append(f"{prefix}{key}={json.dumps(value)}")
    return out
