"""The campaign plan: markdown with YAML front matter -> a validated, frozen `CampaignPlan`.

Format and every key's default: `campaigns/README.md`. Every problem is a PlanError whose
message starts with `path:line:` and names the key (`search_space.lr.low`), so a plan written
by hand or by the LLM planner fails before any server starts, never halfway through a campaign.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_serializer, field_validator, model_validator

from agentjet.a3r.errors import PlanError
from agentjet.a3r.plan.front_matter import split_front_matter
from agentjet.a3r.plan.messages import describe_error
from agentjet.a3r.plan.params import (
    TASK_PREFIX,
    ParamSpec,
    apply_params,
    check_spec,
    grid_values,
    is_integral,
    lookup_param,
    needs_restart,
    split_params,
)
from agentjet.a3r.plan.plan_checks import check_models, check_task_params
from agentjet.a3r.plan.pool_spec import PoolSpec, parse_pool
from agentjet.core import TrainConfig
from agentjet.tasks.registry import FAMILIES, family_params

if TYPE_CHECKING:
    from optuna.distributions import BaseDistribution

__all__ = [
    "SYNTHETIC",
    "Budget",
    "CampaignPlan",
    "Objective",
    "PoolSpec",
    "PrunerSpec",
    "SamplerSpec",
    "Seeds",
    "TaskSource",
    "TrialSetup",
    "apply_params",
    "grid_search_space",
    "load_plan",
    "needs_restart",
    "parse_duration",
    "parse_plan",
    "parse_pool",
    "render_plan",
    "search_space_distributions",
    "trial_setup",
]

SYNTHETIC = "synthetic"  # the model-free trial kind (agentjet.a3r.trial.runner) for the scheduler bench and tests
Metric = Literal["eval_reward", "eval_accuracy", "train_reward"]
_METRIC_ALIASES = {"reward": "eval_reward", "accuracy": "eval_accuracy", "eval_reward_mean": "eval_reward"}
_UNITS_S = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}
_DURATION = re.compile(r"(\d+(?:\.\d+)?)\s*([smhdw])")


def parse_duration(text: str) -> float:
    """`"90m"`, `"2h"`, `"3d"`, `"1h30m"`, `"45s"` -> seconds. A bare number is refused: say the unit."""
    compact = str(text).strip().lower().replace(" ", "")
    parts = _DURATION.findall(compact)
    if not compact or "".join(f"{n}{u}" for n, u in parts) != compact:
        raise ValueError(f"{text!r} is not a duration: write a number and a unit s|m|h|d|w, e.g. 90m, 2h, 3d, 1h30m")
    seconds = sum(float(n) * _UNITS_S[u] for n, u in parts)
    if seconds <= 0:
        raise ValueError(f"duration {text!r} must be longer than zero")
    return seconds


def _lower(value: Any) -> Any:
    """Closed choices (`TPE`, `Maximize`) are read case-blind; other values pass unchanged."""
    return value.strip().lower() if isinstance(value, str) else value


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Objective(_Section):
    metric: Metric = Field("eval_reward", description="what a trial reports: eval mean reward, solved share, ...")
    direction: Literal["maximize", "minimize"] = "maximize"

    @model_validator(mode="before")
    @classmethod
    def _shorthand(cls, data: Any) -> Any:
        data = {"metric": data} if isinstance(data, str) else data
        if isinstance(data, dict):
            data = {k: _lower(v) for k, v in data.items()}
            data["metric"] = _METRIC_ALIASES.get(data.get("metric"), data.get("metric", "eval_reward"))
            data["direction"] = {"max": "maximize", "min": "minimize"}.get(data.get("direction"), data.get("direction"))
            data = {k: v for k, v in data.items() if v is not None}
        return data


class TaskSource(_Section):
    """Exactly one of a built-in `family`, a vibe `workspace` dir (with client.py), or a `client` file."""

    family: str | None = None
    workspace: Path | None = None
    client: Path | None = None
    params: dict[str, Any] = Field(default_factory=dict, description="task family constructor params")

    @model_validator(mode="before")
    @classmethod
    def _shorthand(cls, data: Any) -> Any:
        """`task: arithmetic` (a family), `task: my_client.py` (a client file), `task: ws/` (a workspace)."""
        if not isinstance(data, str):
            return data
        if data in FAMILIES or data == SYNTHETIC or re.fullmatch(r"[a-z_]+", data):
            return {"family": data}
        return {"client": data} if data.endswith(".py") else {"workspace": data}

    @model_validator(mode="after")
    def _exactly_one(self) -> TaskSource:
        given = [k for k in ("family", "workspace", "client") if getattr(self, k) is not None]
        if len(given) != 1:
            raise ValueError(f"give exactly one of family, workspace or client (got {given or 'none'})")
        return self

    @field_validator("family")
    @classmethod
    def _known_family(cls, family: str | None) -> str | None:
        known = sorted([*FAMILIES, SYNTHETIC])
        if family is not None and family not in known:
            raise ValueError(
                f"unknown family {family!r}; built-in families: {', '.join(known)} "
                "(a vibe workspace or a client file: write workspace: DIR or client: FILE.py)"
            )
        return family


class SamplerSpec(_Section):
    name: Literal["tpe", "random", "grid"] = "tpe"
    seed: int | None = Field(None, description="sampler seed; default seeds.base")
    startup_trials: int | None = Field(None, ge=0, description="TPE random trials first; None = Optuna's 10")

    @model_validator(mode="before")
    @classmethod
    def _from_name(cls, data: Any) -> Any:
        data = {"name": data} if isinstance(data, str) else ({} if data is None else data)
        return {**data, "name": _lower(data["name"])} if isinstance(data, dict) and "name" in data else data


class PrunerSpec(_Section):
    name: Literal["median", "none"] = "median"
    warmup_steps: int = Field(1, ge=0, description="no pruning at eval reports before this step")
    startup_trials: int = Field(2, ge=0, description="no pruning until this many trials completed")

    @model_validator(mode="before")
    @classmethod
    def _from_name(cls, data: Any) -> Any:
        data = {"name": data} if isinstance(data, str) else ({"name": "none"} if data is None else data)
        return {**data, "name": _lower(data["name"])} if isinstance(data, dict) and "name" in data else data


class Budget(_Section):
    trials: int | None = Field(20, ge=1, description="trials to run (confirmation re-runs not counted)")
    wall_clock: str | None = Field(None, description="stop starting trials after this long, e.g. 3d")
    steps_per_trial: int = Field(10, ge=1, description="training steps of one trial")
    eval_every: int = Field(5, ge=1, description="eval (and report to the pruner) every K steps, and at the end")
    eval_items: int = Field(32, ge=1, description="held-out items per eval")

    @field_validator("wall_clock", mode="before")
    @classmethod
    def _check_wall_clock(cls, value: Any) -> Any:
        if value is not None:
            parse_duration(value)
        return value

    @model_validator(mode="after")
    def _bounded(self) -> Budget:
        if self.trials is None and self.wall_clock is None:
            raise ValueError("an endless campaign: set trials or wall_clock (or both)")
        return self

    @property
    def wall_clock_s(self) -> float | None:
        return parse_duration(self.wall_clock) if self.wall_clock is not None else None


class Seeds(_Section):
    base: int = Field(0, ge=0, description="trial seeds derive from it (task items, sampling)")
    confirm: int = Field(3, ge=0, description="re-runs of the best params with fresh seeds; 0 = none")


class CampaignPlan(_Section):
    """One campaign: what to optimise, over which params, with what budget, on which servers."""

    name: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$", max_length=100)
    stage: int = Field(1, ge=1, description="1 for a fresh plan; the planner's next stage adds 1")
    objective: Objective = Objective()
    task: TaskSource
    model: str = Field("tiny", min_length=1, description="the policy model, unless search_space has model")
    train: TrainConfig = Field(TrainConfig(), description="the TrainConfig every trial starts from")
    search_space: dict[str, ParamSpec] = Field(default_factory=dict)
    sampler: SamplerSpec = SamplerSpec()
    pruner: PrunerSpec = PrunerSpec()
    budget: Budget = Budget()
    pool: PoolSpec = PoolSpec(local=1)
    seeds: Seeds = Seeds()
    storage: str = Field("sqlite", description="sqlite | journal | an RDB URL (postgresql://...)")
    body: str = Field("", description="the markdown after the front matter: research questions")

    @field_validator("model", mode="before")
    @classmethod
    def _one_model(cls, value: Any) -> Any:
        if isinstance(value, list | tuple | dict):
            raise ValueError("model takes one name; to compare models write model: {choices: [...]} in search_space")
        return value

    @field_validator("pool", mode="before")
    @classmethod
    def _pool_count(cls, value: Any) -> Any:
        return f"local:{value}" if isinstance(value, int) and not isinstance(value, bool) else value

    @field_validator("storage")
    @classmethod
    def _check_storage(cls, value: str) -> str:
        if value not in ("sqlite", "journal") and "://" not in value:
            raise ValueError(f"storage {value!r}: use sqlite, journal, or a URL such as postgresql://user@host/db")
        return value

    @field_serializer("pool")
    def _pool_value(self, pool: PoolSpec) -> str | list[Any]:
        return pool.to_plan_value()

    @property
    def sampler_seed(self) -> int:
        return self.sampler.seed if self.sampler.seed is not None else self.seeds.base


@dataclass(frozen=True)
class TrialSetup:
    """What one trial runs with: the model to serve, its TrainConfig, the task's params."""

    model: str
    config: TrainConfig
    task_params: dict[str, Any]
    restart: bool  # a param the trial sets needs a fresh server (model) or adapter (lora.*)


def trial_setup(plan: CampaignPlan, params: Mapping[str, Any]) -> TrialSetup:
    """The plan's base settings with a trial's sampled params applied (PlanError on a bad mix)."""
    _, server, task = split_params(params)
    return TrialSetup(
        model=str(server.get("model", plan.model)),
        config=apply_params(plan.train, params),
        task_params={**plan.task.params, **task},
        restart=needs_restart(params),
    )


def search_space_distributions(plan: CampaignPlan) -> dict[str, BaseDistribution]:
    """The search space as Optuna distributions (for `study.ask(...)` and `enqueue_trial`)."""
    from optuna.distributions import CategoricalDistribution, FloatDistribution, IntDistribution

    out: dict[str, BaseDistribution] = {}
    for name, spec in plan.search_space.items():
        if spec.choices is not None:
            out[name] = CategoricalDistribution(spec.choices)
            continue
        integral = is_integral(name, spec)
        low, high = spec.low, spec.high
        if low is None or high is None:
            raise PlanError(f"search_space.{name}: a range needs both low and high")
        if integral:
            out[name] = IntDistribution(int(low), int(high), log=spec.log, step=int(spec.step or 1))
        else:
            out[name] = FloatDistribution(float(low), float(high), log=spec.log, step=spec.step)
    return out


def grid_search_space(plan: CampaignPlan) -> dict[str, list[Any]]:
    """Every value per param for Optuna's GridSampler (ranges need a step)."""
    return {name: grid_values(name, spec) for name, spec in plan.search_space.items()}


def load_plan(path: Path | str) -> CampaignPlan:
    """Read and validate a plan file; relative workspace/client paths are taken from its folder."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise PlanError(f"cannot read the plan: {exc}", path=path) from exc
    return parse_plan(text, path=path, base_dir=path.parent, default_name=path.stem)


def parse_plan(
    text: str, *, path: Path | str | None = None, base_dir: Path | None = None, default_name: str | None = None
) -> CampaignPlan:
    """Validate a plan's text; every problem found is listed, the first one's line in `.line`."""
    where = str(path) if path is not None else None
    front = split_front_matter(text, path=where)
    data = dict(front.data)
    problems: list[tuple[tuple[str | int, ...], str]] = []
    if "body" in data:
        problems.append((("body",), "unknown key 'body': the prose after the front matter is the body"))
        del data["body"]
    if default_name is not None:
        data.setdefault("name", re.sub(r"[^A-Za-z0-9._-]", "-", default_name).lstrip("._-") or "campaign")
    plan: CampaignPlan | None = None
    try:
        plan = CampaignPlan.model_validate({**data, "body": front.body})
    except ValidationError as exc:
        problems += [(tuple(e["loc"]), describe_error(e, CampaignPlan, hidden={"body"})) for e in exc.errors()]
    if plan is not None:
        plan, found = _check(plan, base_dir)
        problems += found
    if problems or plan is None:
        lines = [(front.line_of(loc), ".".join(map(str, loc)), msg) for loc, msg in problems]
        (line, key, msg), rest = lines[0], lines[1:]
        extra = "".join(f"\n{where + ':' if where else 'line '}{n}: {k}: {m}" for n, k, m in rest)
        raise PlanError(f"{key}: {msg}{extra}" if key else msg + extra, path=path, line=line, key=key or None)
    return plan


def _check(plan: CampaignPlan, base_dir: Path | None) -> tuple[CampaignPlan, list[tuple[tuple[str | int, ...], str]]]:
    """Checks that need more than one field: params against the base TrainConfig, grid, task paths."""
    problems: list[tuple[tuple[str | int, ...], str]] = []
    targets: dict[str, str] = {}
    for name, spec in plan.search_space.items():
        try:
            d = lookup_param(name)
            problems += [(("search_space", name, *f.split(".")), m) for f, m in check_spec(name, spec, plan.train)]
            if plan.sampler.name == "grid":
                grid_values(name, spec)
        except PlanError as exc:
            hint = ""
            if plan.task.family is not None and name in family_params(plan.task.family):
                hint = f" ({name!r} is a parameter of the {plan.task.family} family: search it as {TASK_PREFIX}{name})"
            problems.append((("search_space", name), exc.reason + hint))
            continue
        if d.target in targets and not name.startswith("task."):
            problems.append((("search_space", name), f"{targets[d.target]} and {name} both set {d.target}"))
        targets[d.target] = name
        if d.target == "server.model" and plan.pool.servers:
            problems.append((
                ("search_space", name),
                "the pool has server URLs, and a remote server cannot switch models: search over models on "
                "local:N servers only, or leave model out of the search space",
            ))  # fmt: skip
    if not plan.pool.servers:  # a remote server serves its own model
        searched = plan.search_space.get("model")
        problems += check_models(plan.model, searched.choices if searched is not None else None)
    if plan.task.family is not None and plan.task.family != SYNTHETIC:
        problems += check_task_params(plan.task.family, plan.task.params, plan.search_space)
    task = plan.task
    for key in ("workspace", "client"):
        value: Path | None = getattr(task, key)
        if value is None or base_dir is None:
            continue
        resolved = value if value.is_absolute() else (base_dir / value).resolve()
        wanted = resolved / "client.py" if key == "workspace" else resolved
        if not wanted.is_file():
            problems.append((("task", key), f"{wanted} does not exist"))
        task = task.model_copy(update={key: resolved})
    return plan.model_copy(update={"task": task}), problems


def render_plan(plan: CampaignPlan) -> str:
    """The plan as a markdown file again: every key written out (only `train` and the task's
    unset sources keep to what differs from the defaults), then the body. Parses back equal."""
    data = plan.model_dump(mode="json", exclude={"body", "train", "task"})
    data["task"] = plan.task.model_dump(mode="json", exclude_none=True)
    data["train"] = plan.train.model_dump(mode="json", exclude_defaults=True)
    data["search_space"] = {
        name: spec.model_dump(mode="json", exclude_defaults=True) for name, spec in plan.search_space.items()
    }
    order = [*type(plan).model_fields]
    data = {key: data[key] for key in order if key in data}
    front = yaml.safe_dump(data, sort_keys=False, allow_unicode=True, default_flow_style=None, width=100)
    return f"---\n{front}---\n\n{plan.body}" if plan.body else f"---\n{front}---\n"
