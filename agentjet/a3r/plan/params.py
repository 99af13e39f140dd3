"""Search-space params: what each name means, its spec, and how a sampled value lands in a trial.

A param is a short name a plan searches over (`lr`, `lora_rank`, `model`, ...). Each maps onto one
TrainConfig field, onto the server's model, or (`task.<name>`) onto a task family parameter. One
table (`PARAMS`) holds them all, so the plan checker, `apply_params`, the docs and the errors agree.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from agentjet.a3r.errors import PlanError
from agentjet.core import TrainConfig

__all__ = [
    "PARAMS",
    "TASK_PREFIX",
    "Choice",
    "ParamDef",
    "ParamSpec",
    "apply_params",
    "check_spec",
    "grid_values",
    "is_integral",
    "lookup_param",
    "needs_restart",
    "split_params",
]

TASK_PREFIX = "task."  # `task.difficulty` searches the task family's `difficulty` parameter
Kind = Literal["float", "int", "bool", "str", "any"]  # any: a task param, typed by its family
Choice = None | bool | int | float | str  # what Optuna's CategoricalDistribution can store

_ATTENTION = ("q_proj", "k_proj", "v_proj", "o_proj")
_MLP = ("gate_proj", "up_proj", "down_proj")
TARGET_PRESETS: dict[str, tuple[str, ...]] = {"attention": _ATTENTION, "mlp": _MLP, "all": _ATTENTION + _MLP}


def _targets(value: Any) -> tuple[str, ...]:
    """`attention` | `mlp` | `all` | `"q_proj,v_proj"` -> module names (a list cannot be an Optuna choice)."""
    text = str(value)
    if text in TARGET_PRESETS:
        return TARGET_PRESETS[text]
    return tuple(part.strip() for part in text.split(",") if part.strip())


@dataclass(frozen=True)
class ParamDef:
    """One searchable param. `target` is a dotted TrainConfig path, or `server.model`."""

    name: str
    kind: Kind
    target: str
    restart: bool  # a new value needs a fresh server process (model) or a fresh adapter (lora.*)
    description: str
    convert: Callable[[Any], Any] | None = None  # sampled value -> the config value


def _p(name: str, kind: Kind, target: str, description: str, **kw: Any) -> ParamDef:
    return ParamDef(name, kind, target, kw.pop("restart", False), description, **kw)


_DEFS = [
    _p("lr", "float", "optim.lr", "AdamW learning rate"),
    _p("weight_decay", "float", "optim.weight_decay", "AdamW weight decay"),
    _p("grad_clip", "float", "optim.grad_clip", "max global gradient norm"),
    _p("lora_rank", "int", "lora.rank", "LoRA rank r", restart=True),
    _p("lora_alpha", "float", "lora.alpha", "LoRA scaling alpha", restart=True),
    _p("lora_dropout", "float", "lora.dropout", "LoRA dropout", restart=True),
    _p(
        "lora_targets",
        "str",
        "lora.target_modules",
        "adapted modules: attention | mlp | all | comma-separated names",
        restart=True,
        convert=_targets,
    ),
    _p(
        "full_finetune",
        "bool",
        "lora.enabled",
        "true = full fine-tune (no adapter)",
        restart=True,
        convert=lambda v: not v,
    ),
    _p("group_size", "int", "grpo.group_size", "episodes per task in a GRPO group"),
    _p("clip_eps", "float", "grpo.clip_eps", "PPO-clip bound"),
    _p("kl", "float", "grpo.kl_coef", "KL penalty weight to the reference policy (0 = off)"),
    _p("scale_rewards", "bool", "grpo.scale_rewards", "divide advantages by the group's reward std"),
    _p("strategy", "str", "collect.strategy", "collection strategy: episodes | tasks | informative_tasks | ..."),
    _p("tasks_per_step", "int", "collect.tasks", "task groups per update (tasks strategies)"),
    _p("episodes_per_step", "int", "collect.episodes", "episodes per update (episodes strategy)"),
    _p("merge", "str", "merge", "timeline merging level: token | text | off"),
    _p("model", "str", "server.model", "the policy model the server loads", restart=True),
]
_ALIASES = {"learning_rate": "lr", "kl_coef": "kl", "rank": "lora_rank", "collect_strategy": "strategy"}
PARAMS: dict[str, ParamDef] = {d.name: d for d in _DEFS}
PARAMS.update({alias: PARAMS[name] for alias, name in _ALIASES.items()})


def lookup_param(name: str) -> ParamDef:
    """The definition of a param name; `task.x` gets an untyped task def; else a PlanError listing them."""
    if name in PARAMS:
        return PARAMS[name]
    if name.startswith(TASK_PREFIX) and name[len(TASK_PREFIX) :].isidentifier():
        return ParamDef(name, "any", name, False, "a parameter of the task family")
    known = ", ".join(d.name for d in _DEFS)
    aliases = ", ".join(f"{a} = {n}" for a, n in _ALIASES.items())
    raise PlanError(
        f"unknown param {name!r}; known params: {known} (aliases: {aliases}); "
        f"or {TASK_PREFIX}<name> for a parameter of the task family"
    )


class ParamSpec(BaseModel):
    """How one param is searched: a range `{low, high, log, step}` or a list `{choices: [...]}`."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    low: float | int | None = Field(None, description="lower bound (inclusive)")
    high: float | int | None = Field(None, description="upper bound (inclusive)")
    log: bool = Field(False, description="sample on a log scale (needs low > 0)")
    step: float | int | None = Field(None, gt=0, description="sample on a grid low, low+step, ...")
    choices: tuple[Choice, ...] | None = Field(None, min_length=1, description="the values to pick from")
    type: Literal["float", "int", "categorical"] | None = Field(None, description="optional; says what the rest says")

    @model_validator(mode="before")
    @classmethod
    def _shorthand(cls, data: Any) -> Any:
        return {"choices": data} if isinstance(data, list | tuple) else data

    @model_validator(mode="after")
    def _one_form(self) -> ParamSpec:
        ranged = self.low is not None or self.high is not None
        if self.choices is not None and (ranged or self.log or self.step is not None):
            raise ValueError("give either choices or a range (low/high/log/step), not both")
        if self.choices is None and (self.low is None or self.high is None):
            raise ValueError("a range needs both low and high (or give choices: [...])")
        if self.choices is not None and len(set(map(repr, self.choices))) != len(self.choices):
            raise ValueError(f"choices repeat a value: {list(self.choices)}")
        if (self.type == "categorical") != (self.choices is not None) and self.type is not None:
            raise ValueError(f"type: {self.type} needs " + ("choices" if self.type == "categorical" else "low/high"))
        return self

    @property
    def is_range(self) -> bool:
        return self.choices is None


def check_spec(name: str, spec: ParamSpec, base: TrainConfig) -> list[tuple[str, str]]:
    """Problems of one spec as (field, message); every value it can yield must fit the TrainConfig."""
    d = lookup_param(name)
    if spec.choices is not None:
        return [(f"choices.{i}", msg) for i, c in enumerate(spec.choices) for msg in _value_problems(d, c, base)]
    if spec.low is None or spec.high is None:  # ParamSpec's own validator refuses this already
        return [("low", "a range needs both low and high")]
    if d.kind in ("bool", "str"):
        return [("low", f"{name} is a {d.kind} param: give choices: [...] instead of a range")]
    if spec.type in ("int", "float") and d.kind in ("int", "float") and spec.type != d.kind:
        return [("type", f"{name} is a {d.kind} param, not {spec.type}")]
    if (d.kind == "int" or spec.type == "int") and not _all_int(spec):
        return [(f, f"{name} takes whole numbers, got {v!r}") for f, v in _fields(spec) if not _is_int(v)]
    problems: list[tuple[str, str]] = []
    if not spec.low < spec.high:
        problems.append(("high", f"high ({spec.high}) must be greater than low ({spec.low})"))
    if spec.log and spec.low <= 0:
        problems.append(("low", f"a log range needs low > 0, got {spec.low}"))
    if spec.log and spec.step is not None:
        problems.append(("step", "a log range cannot have a step (Optuna samples it continuously)"))
    for field in ("low", "high"):
        problems += [(field, msg) for msg in _value_problems(d, getattr(spec, field), base)]
    return problems


def _fields(spec: ParamSpec) -> list[tuple[str, Any]]:
    return [(f, getattr(spec, f)) for f in ("low", "high", "step") if getattr(spec, f) is not None]


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _all_int(spec: ParamSpec) -> bool:
    return all(_is_int(v) for _, v in _fields(spec))


def is_integral(name: str, spec: ParamSpec) -> bool:
    """Whether a range samples whole numbers: int params, and task params whose bounds are all ints."""
    kind = lookup_param(name).kind
    if spec.type is not None and kind == "any":
        return spec.type == "int"
    return kind == "int" or (kind == "any" and _all_int(spec))


def _value_problems(d: ParamDef, value: Any, base: TrainConfig) -> list[str]:
    if d.name.startswith(TASK_PREFIX):
        return []
    if d.kind == "bool" and not isinstance(value, bool):
        return [f"{d.name} takes true or false, got {value!r}"]
    if d.kind == "str" and not isinstance(value, str):
        return [f"{d.name} takes a string, got {value!r}"]
    if d.kind in ("int", "float") and (isinstance(value, bool) or not isinstance(value, int | float)):
        return [f"{d.name} takes a number, got {value!r}"]
    if d.target == "server.model":
        return [] if value.strip() else ["model names cannot be empty"]
    try:
        apply_params(base, {d.name: value})
    except PlanError as exc:
        return [exc.reason]
    return []


def split_params(params: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """(TrainConfig params, server params such as `model`, task params without the `task.` prefix)."""
    train: dict[str, Any] = {}
    server: dict[str, Any] = {}
    task: dict[str, Any] = {}
    for name, value in params.items():
        d = lookup_param(name)
        if name.startswith(TASK_PREFIX):
            task[name[len(TASK_PREFIX) :]] = value
        elif d.target.startswith("server."):
            server[d.target.removeprefix("server.")] = value
        else:
            train[name] = value
    return train, server, task


def apply_params(base: TrainConfig, params: Mapping[str, Any]) -> TrainConfig:
    """`base` with each TrainConfig param set (`lr` -> optim.lr ...); `model` and `task.*` are skipped
    (see `split_params`). Unknown names and values the TrainConfig refuses raise PlanError."""
    tree = base.model_dump()
    seen: dict[str, str] = {}
    for name, value in split_params(params)[0].items():
        d = PARAMS[name]
        if d.target in seen:
            raise PlanError(f"{seen[d.target]} and {name} both set {d.target}: keep one")
        seen[d.target] = name
        *parents, leaf = d.target.split(".")
        node = tree
        for part in parents:
            node = node[part]
        node[leaf] = d.convert(value) if d.convert else value
    try:
        return TrainConfig.model_validate(tree)
    except ValidationError as exc:
        raise PlanError(_describe(exc, params)) from exc


def _describe(exc: ValidationError, params: Mapping[str, Any]) -> str:
    by_target = {PARAMS[n].target: n for n in params if n in PARAMS}
    lines = []
    for problem in exc.errors():
        target = ".".join(str(p) for p in problem["loc"])
        msg = str(problem["msg"]).removeprefix("Value error, ")
        name = by_target.get(target)
        lines.append(f"{name}={params[name]!r} ({target}): {msg}" if name else f"{target or 'config'}: {msg}")
    return "; ".join(lines)


def needs_restart(params: Mapping[str, Any]) -> bool:
    """True when these params cannot be applied to a running server (model, LoRA shape)."""
    return any(lookup_param(name).restart for name in params)


def grid_values(name: str, spec: ParamSpec) -> list[Choice]:
    """Every value the grid sampler visits: the choices, or low..high by step (ints step 1)."""
    if spec.choices is not None:
        return list(spec.choices)
    if spec.low is None or spec.high is None:
        raise PlanError(f"{name}: a range needs both low and high")
    integral = is_integral(name, spec)
    step = spec.step if spec.step is not None else (1 if integral else None)
    if step is None or spec.log:
        raise PlanError(f"the grid sampler needs choices, or a range with a step (not log), for {name}")
    count = math.floor((spec.high - spec.low) / step + 1e-9) + 1
    values = [spec.low + i * step for i in range(count)]
    return [int(v) for v in values] if integral else [round(v, 12) for v in values]
