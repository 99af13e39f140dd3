"""`agentjet vibe --train KEY=VALUE`: the user's TrainConfig overrides, over the family's measured recipe.

Keys are train.yaml's fields with dots (`collect.tasks=1`, `optim.lr=1e-4`, `grpo.group_size=4`);
a value is read as JSON when it parses (numbers, true/false, lists), else kept as a string. Each
override is checked against TrainConfig at once, so a typo or a bad value is a one-line error
before anything runs, and the plan records it in `spec.train` and as an assumption. The settings a
sentence states ("lr 3e-4", "16 games per step") become the same overrides (`said_settings`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from agentjet.core import ConfigError, TrainConfig, describe_validation_error
from agentjet.vibe.plan.spec import merge_overrides
from agentjet.vibe.plan.train_words import BATCH_SIZE, CONTEXT, EPISODES_PER_STEP, MAX_TOKENS, TEMPERATURE

if TYPE_CHECKING:
    from agentjet.vibe.plan.sentence import Reading

__all__ = ["check_train", "describe_overrides", "parse_train_overrides", "said_settings"]

_NOT_SETTINGS = {  # words that look like training settings but are not TrainConfig's, and why
    TEMPERATURE: "each family samples at its recipe's temperature, measured to learn (a task parameter, not a "
    "training setting)",
    BATCH_SIZE: "a step trains on its GRPO groups x task groups (say 'groups of N' or 'N games per step')",
    MAX_TOKENS: "each family's reply length is its recipe's (a task parameter, not a training setting)",
    CONTEXT: "the context window is the model's own (a model property, not a training setting)",
}


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


def said_settings(
    reading: Reading, recipe: dict[str, Any], *, flags: dict[str, Any]
) -> tuple[dict[str, Any], list[str]]:
    """The training settings the sentence states, checked, as overrides of the recipe, and a note on each; a
    setting that `--train` (`flags`) also sets is the flag's, and the note says so."""
    overrides: dict[str, Any] = {}
    notes: list[str] = []
    for setting in reading.settings:
        section, _, key = setting.key.partition(".")
        if key and key in flags.get(section, {}):
            notes.append(f"--train {setting.key}={flags[section][key]} overrides '{setting.words}' in the sentence")
            continue
        if setting.key in _NOT_SETTINGS:
            notes.append(f"'{setting.words}' ignored: {_NOT_SETTINGS[setting.key]}")
            continue
        if setting.key == EPISODES_PER_STEP:
            group = int(merge_overrides(recipe, overrides).get("grpo", {}).get("group_size", 8))
            pairs, how = _as_groups(int(setting.value), group)
        else:
            pairs, how = [f"{setting.key}={setting.value}"], f"sets {setting.key}={setting.value:g}"
        try:
            checked = parse_train_overrides(pairs)
        except ConfigError as exc:
            notes.append(f"'{setting.words}' ignored: {str(exc).removeprefix('--train: ')}")
            continue
        overrides = merge_overrides(overrides, checked)
        notes.append(f"'{setting.words}' {how} over " + ("the family's recipe" if recipe else "vibe's defaults"))
        if setting.others:  # "lr 1e-4 and then lr 3e-4": the first is planned
            also = ", ".join(repr(w) for w in setting.others)
            notes.append(f"{also} also said: the first, '{setting.words}', is used")
    return overrides, notes


def _as_groups(episodes: int, group: int) -> tuple[list[str], str]:
    """Episodes an update as GRPO groups x task groups: 16 with groups of 8 -> 2 tasks; 4 -> one group of 4."""
    if episodes < group:
        pairs = [f"grpo.group_size={episodes}", "collect.tasks=1"]
        return pairs, f"sets grpo.group_size={episodes}, collect.tasks=1 (one group of {episodes} an update)"
    tasks = max(1, round(episodes / group))
    exact = "" if tasks * group == episodes else f"; {tasks * group}, the nearest multiple of the group size"
    groups = f"{tasks} group{'s' if tasks != 1 else ''} of {group}"
    return [f"collect.tasks={tasks}"], f"sets collect.tasks={tasks} ({groups} an update{exact})"
