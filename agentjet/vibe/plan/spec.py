"""`TaskSpec`: what a vibe run will train, as planned from the sentence and saved as `task.yaml`.

Every later node (generate, validate, red team, launch, report) reads the spec and nothing else
about the sentence, so everything the planner guessed is written here in `assumptions`. `spec_text` is
the spec as a readable block, what `agentjet vibe TEXT --dry-run` prints (`dry_run_json` with `--json`), so
a sentence can be checked before anything runs.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from agentjet.core import TrainConfig
from agentjet.tasks.registry import FAMILIES
from agentjet.vibe.errors import VibeError

__all__ = [
    "GENERATED",
    "SHARED_POLICY",
    "Budget",
    "DatasetPlan",
    "Policy",
    "SuccessMetric",
    "TaskSpec",
    "dry_run_json",
    "field_range",
    "load_spec",
    "merge_overrides",
    "save_spec",
    "spec_text",
    "validation_problems",
]

GENERATED = "generated"  # the family of a task the LLM writes from scratch
SHARED_POLICY = "policy"  # the name of the one policy every trained role shares (the family's default server)
_NAME = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")


def merge_overrides(base: dict[str, Any], overrides: dict[str, Any]) -> dict[str, Any]:
    """`base` with `overrides` merged in, nested sections key by key (train.yaml's shape)."""
    out = dict(base)
    for key, value in overrides.items():
        nested = isinstance(value, dict) and isinstance(out.get(key), dict)
        out[key] = merge_overrides(out[key], value) if nested else value
    return out


def field_range(model: type[BaseModel], name: str) -> tuple[int, int]:
    """The inclusive integer bounds (`ge`, `le`) a model declares for a field, so messages quote the model's own."""
    low, high = 0, 0
    for rule in model.model_fields[name].metadata:
        low = getattr(rule, "ge", low)
        high = getattr(rule, "le", high)
    return int(low), int(high)


class DatasetPlan(BaseModel):
    """How many items each split gets and how they are drawn (disjoint splits, one seed)."""

    model_config = ConfigDict(extra="forbid")
    train_items: int = Field(64, ge=1, le=100_000, description="items in data/train.jsonl")
    eval_items: int = Field(16, ge=1, le=100_000, description="items in data/eval.jsonl (never trained on)")
    seed: int = Field(0, ge=0, le=2**31 - 1, description="the dataset seed")
    eval_every: int | None = Field(
        None, ge=1, le=100_000, description="a held-out round every N steps between the first and the last (the curve)"
    )
    params: dict[str, Any] = Field(default_factory=dict, description="generator parameters (generated tasks)")
    description: str = Field("", description="what an item is, in plain words")


class SuccessMetric(BaseModel):
    """What counts as the run having worked: a metric the report can read, and its meaning."""

    model_config = ConfigDict(extra="forbid")
    name: str = Field("eval_reward_mean", min_length=1, description="metric name in the run's summary")
    description: str = Field(..., min_length=1, description="what the metric measures, in plain words")
    success_reward: float = Field(
        1.0,
        description="a held-out episode is a success when the task reports it won (its metadata's `won`), else when "
        "its reward is at least this (an exact answer)",
    )
    rate: str = Field("success rate", min_length=1, max_length=40, description="what the share of successes is called")


class Budget(BaseModel):
    """How long to train: steps always, wall-clock minutes when the user gave a limit."""

    model_config = ConfigDict(extra="forbid")
    steps: int = Field(10, ge=1, le=100_000, description="training steps (server updates)")
    minutes: float | None = Field(None, gt=0, description="wall-clock limit for the whole run")


class Policy(BaseModel):
    """One set of trained parameters (one policy server) and the trained roles it plays."""

    model_config = ConfigDict(extra="forbid")
    name: str = Field(SHARED_POLICY, min_length=1, max_length=64, description="the policy's server name")
    roles: list[str] = Field(default_factory=list, description="the trained roles this policy plays")


class TaskSpec(BaseModel):
    """The plan of one vibe run. Unknown keys are errors (a typo in task.yaml is not a no-op)."""

    model_config = ConfigDict(extra="forbid")
    name: str = Field(..., description="short slug: lowercase letters, digits, - and _")
    sentence: str = Field(..., description="what the user typed")
    family: str = Field(..., description=f"a built-in family ({', '.join(FAMILIES)}) or {GENERATED!r}")
    params: dict[str, Any] = Field(default_factory=dict, description="the family's constructor parameters")
    requested_model: str | None = Field(None, description="the model the sentence asked for, e.g. '7B'")
    model: str = Field("smollm2-135m", min_length=1, description="the policy model that will train")
    model_note: str = Field("", description="why this model, in plain words")
    environment: str = Field(..., min_length=1, description="what the agent sees and does")
    actors: list[str] = Field(default_factory=list, description="everyone taking part")
    trained_roles: list[str] = Field(default_factory=list, description="the actors the policy plays")
    policies: list[Policy] = Field(
        default_factory=lambda: [Policy()],
        min_length=1,
        description="the trained parameters: one shared policy, or one per side or role group (non-shared)",
    )
    reward: str = Field(..., min_length=1, description="reward values and when each is given")
    dataset: DatasetPlan = Field(default_factory=DatasetPlan)
    success_metric: SuccessMetric
    budget: Budget = Field(default_factory=Budget)
    train: dict[str, Any] = Field(
        default_factory=dict,
        description="TrainConfig overrides, nested as in train.yaml (docs/training-config.md): the recipe that learns",
    )
    assumptions: list[str] = Field(default_factory=list, description="every guess the planner made")
    planner: str = Field("deterministic", min_length=1, description="'deterministic' or the LLM's name")

    @field_validator("name")
    @classmethod
    def _slug(cls, value: str) -> str:
        if not _NAME.match(value):
            raise ValueError(f"name {value!r} must be 1-64 of a-z 0-9 - _ (starting with a letter or digit)")
        return value

    @field_validator("train")
    @classmethod
    def _train_overrides(cls, value: dict[str, Any]) -> dict[str, Any]:
        """A typo in the recipe is an error when task.yaml is read, not minutes later at launch."""
        TrainConfig.model_validate(merge_overrides(TrainConfig().model_dump(mode="json"), value))
        return value

    @field_validator("family")
    @classmethod
    def _known_family(cls, value: str) -> str:
        if value != GENERATED and value not in FAMILIES:
            raise ValueError(f"family {value!r} is neither a built-in family ({', '.join(FAMILIES)}) nor {GENERATED!r}")
        return value

    @field_validator("policies")
    @classmethod
    def _distinct_policies(cls, value: list[Policy]) -> list[Policy]:
        names = [p.name for p in value]
        if len(set(names)) != len(names):
            raise ValueError(f"policy names must differ, got {names}")
        return value

    @property
    def shares_one_policy(self) -> bool:
        """True when every trained role plays on one set of parameters (one server)."""
        return len(self.policies) == 1

    @property
    def is_generated(self) -> bool:
        """True when the LLM writes the task's code (no built-in family to wrap)."""
        return self.family == GENERATED


def save_spec(spec: TaskSpec, path: Path) -> None:
    """Write the spec as readable YAML (fields in declaration order)."""
    text = yaml.safe_dump(spec.model_dump(mode="json"), sort_keys=False, allow_unicode=True, width=100)
    Path(path).write_text(text, encoding="utf-8")


def load_spec(path: Path) -> TaskSpec:
    """Read `task.yaml`; a missing file, bad YAML or an invalid field is a VibeError naming the file."""
    path = Path(path)
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise VibeError(f"cannot read the task spec {path}: {exc.strerror or exc}") from exc
    except yaml.YAMLError as exc:
        raise VibeError(f"{path} is not valid YAML: {exc}") from exc
    if not isinstance(data, dict):
        raise VibeError(f"{path} must hold a mapping of TaskSpec fields, got {type(data).__name__}")
    try:
        return TaskSpec.model_validate(data)
    except ValidationError as exc:
        raise VibeError(f"{path} is not a valid task spec: {validation_problems(exc)}") from exc


def validation_problems(exc: ValidationError) -> str:
    """A pydantic error as one line: `field.path: message; ...` (for users and for an LLM's retry)."""
    return "; ".join(f"{'.'.join(map(str, e['loc'])) or 'spec'}: {e['msg']}" for e in exc.errors())


# ---- the spec as text: what `--dry-run` prints ----------------------------------------------------------------


def _value(value: Any) -> str:
    return json.dumps(value) if isinstance(value, dict | list) else str(value)


def _training(train: dict[str, Any]) -> str:
    """The recipe's overrides as dotted `key=value`s, or that the defaults apply."""

    def flat(prefix: str, node: Any) -> list[str]:
        if isinstance(node, dict):
            return [item for key, value in node.items() for item in flat(f"{prefix}{key}.", value)]
        return [f"{prefix[:-1]}={_value(node)}"]

    return ", ".join(flat("", train)) or "the defaults (docs/training-config.md)"


def spec_text(spec: TaskSpec) -> str:
    """The spec as aligned `key: value` lines, then the assumptions."""
    params = ", ".join(f"{k}={_value(v)}" for k, v in spec.params.items()) or "defaults"
    policies = "; ".join(f"{p.name} ({', '.join(p.roles) or 'the one actor'})" for p in spec.policies)
    shared = (
        "one shared policy" if spec.shares_one_policy else f"{len(spec.policies)} separate policies, one server each"
    )
    budget = f"{spec.budget.steps} steps" + (f", {spec.budget.minutes:g} minutes" if spec.budget.minutes else "")
    model = spec.model + (f" (asked for: {spec.requested_model})" if spec.requested_model else "")
    rows = [
        ("task", f"{spec.name} (planner: {spec.planner})"),
        ("family", spec.family),
        ("parameters", params),
        ("trained roles", ", ".join(spec.trained_roles) or "none"),
        ("policies", f"{shared}: {policies}"),
        ("budget", budget),
        ("training", _training(spec.train)),
        (
            "held-out",
            f"{spec.dataset.eval_items} eval items before and after training{_between(spec.dataset.eval_every)}; "
            "success: the task's won flag where it "
            f"reports one, else reward >= {spec.success_metric.success_reward:g} ({spec.success_metric.rate})",
        ),
        ("model", model),
    ]
    if spec.model_note:
        rows.append(("model note", spec.model_note))
    width = max(len(key) for key, _ in rows)
    lines = [f"dry run: nothing was written; this is the spec `agentjet vibe` would run for {spec.sentence!r}", ""]
    lines += [f"  {key.ljust(width)}  {value}" for key, value in rows]
    lines += ["", "assumptions:"] + [f"  - {a}" for a in spec.assumptions or ["none"]]
    return "\n".join(lines)


def _between(every: int | None) -> str:
    return f", and every {every} step{'s' if every > 1 else ''} between" if every else ""


def dry_run_json(spec: TaskSpec) -> str:
    """The spec as JSON (task.yaml's fields)."""
    return json.dumps(spec.model_dump(mode="json"), indent=2)
