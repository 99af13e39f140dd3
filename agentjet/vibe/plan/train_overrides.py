"""`agentjet vibe --train KEY=VALUE`: the user's TrainConfig overrides, over the family's measured recipe; and the
held-out rounds' settings (`--eval-items`, `--eval-every`, `--seed`, or the sentence's words for them).

Keys are train.yaml's fields with dots (`collect.tasks=1`, `optim.lr=1e-4`, `grpo.group_size=4`);
a value is read as JSON when it parses (numbers, true/false, lists), else kept as a string. Each
override is checked against TrainConfig at once, so a typo or a bad value is a one-line error
before anything runs, and the plan records it in `spec.train` and as an assumption. The settings a
sentence states ("lr 3e-4", "16 games per step") become the same overrides (`said_settings`). A flag wins over
the sentence's words for the same setting, and the plan says so (`said_settings`, `held_out_settings`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from agentjet.core import ConfigError, TrainConfig, describe_validation_error
from agentjet.vibe.errors import PlanRefused
from agentjet.vibe.plan.spec import DatasetPlan, field_range, merge_overrides
from agentjet.vibe.plan.train_words import (
    BATCH_SIZE,
    CONTEXT,
    EPISODES_PER_STEP,
    MAX_TOKENS,
    TEMPERATURE,
    read_eval_every,
    read_seed,
)

if TYPE_CHECKING:
    from agentjet.vibe.plan.sentence import Reading

__all__ = ["check_train", "describe_overrides", "held_out_settings", "parse_train_overrides", "said_settings"]

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


def held_out_settings(
    dataset: DatasetPlan,
    reading: Reading,
    *,
    steps: int,
    eval_items: int | None = None,
    eval_every: int | None = None,
    seed: int | None = None,
) -> tuple[DatasetPlan, list[str]]:
    """`dataset` with the held-out items a round, the steps between rounds and the items' seed that the flags
    (`eval_items`, `eval_every`, `seed`) or else the sentence say, and a note on each; PlanRefused for one out of
    range. `steps` is the run's budget, to say when no round can fall between the first and the last."""
    update: dict[str, int] = {}
    notes: list[str] = []
    said_items = reading.eval_count
    if eval_items is None and said_items is not None:
        eval_items = said_items.items
        notes.append(f"'{said_items.words}': {eval_items} held-out items a round, before and after training")
    elif said_items is not None and said_items.items != eval_items:
        notes.append(f"--eval-items {eval_items} overrides '{said_items.words}' in the sentence")
    every_said = read_eval_every(reading.text)
    if eval_every is None and every_said is not None:
        eval_every = every_said[0]
        notes.append(f"'{every_said[1]}': {_rounds(eval_every)}")
    elif every_said is not None and every_said[0] != eval_every:
        notes.append(f"--eval-every {eval_every} overrides '{every_said[1]}' in the sentence")
    elif eval_every is not None:
        notes.append(f"--eval-every {eval_every}: {_rounds(eval_every)}")
    if eval_every is not None and eval_every >= steps:
        notes[-1] += f"; in a run of {steps} step{'s' if steps > 1 else ''}, none falls between the first and last"
    seed_said = read_seed(reading.text)
    if seed is None and seed_said is not None:
        seed = seed_said[0]
        notes.append(f"'{seed_said[1]}': the train and held-out items are drawn with seed {seed}")
    elif seed is not None:  # other deals and other sampling: a second sample of a recipe, not a replicate
        overrides = f" (over '{seed_said[1]}' in the sentence)" if seed_said and seed_said[0] != seed else ""
        notes.append(f"--seed {seed}: the train and held-out items are drawn with seed {seed}{overrides}")
    for name, value, what in (
        ("eval_items", eval_items, f"{eval_items} held-out items"),
        ("eval_every", eval_every, f"a held-out round every {eval_every} steps"),
        ("seed", seed, f"seed {seed}"),
    ):
        if value is None:
            continue
        low, high = field_range(DatasetPlan, name)
        if not low <= value <= high:
            raise PlanRefused(f"{what} cannot be planned: say {low} to {high}")
        update[name] = value
    return dataset.model_copy(update=update), notes


def _rounds(every: int) -> str:
    return f"a held-out round every {every} step{'s' if every > 1 else ''}, between the first round and the last"
