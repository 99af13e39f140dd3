"""The campaign planner: prose -> a plan's front matter, and results -> the next stage's plan.

A plan with front matter is parsed as written and needs no LLM. Prose alone goes to the LLM
(litellm through `agentjet.llm.chat`: `--llm`, else `AGENTJET_CAMPAIGN_LLM`, else the vibe LLM's
`AGENTJET_VIBE_LLM`), whose JSON reply is validated like a hand-written plan; an invalid reply gets
one repair round with the errors quoted. The next stage comes from the LLM when one is given, else
from a deterministic rule: narrow every range around the best trial's value, keep the best choice
and its neighbours, and move to fresh seeds.
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from agentjet.a3r.errors import PlanError, PlannerError
from agentjet.a3r.plan.campaign_plan import SYNTHETIC, CampaignPlan, Seeds, load_plan, parse_plan, render_plan
from agentjet.a3r.plan.front_matter import NO_FRONT_MATTER, has_front_matter
from agentjet.a3r.plan.params import PARAMS, TASK_PREFIX, ParamSpec, is_integral
from agentjet.llm.chat import LLMError, resolve_llm
from agentjet.tasks.registry import FAMILIES

__all__ = [
    "ENV_LLM",
    "PlannerLLM",
    "StageResults",
    "narrow_search_space",
    "plan_from_file",
    "plan_from_prose",
    "propose_next_stage",
    "resolve_planner_llm",
]

ENV_LLM = "AGENTJET_CAMPAIGN_LLM"  # a litellm model name or an OpenAI-compatible URL, like AGENTJET_VIBE_LLM
_STAGE_SUFFIX = re.compile(r"-stage\d+$")
_SEED_STRIDE = 1000  # each stage's seeds.base moves on by this much, so no stage replays another's items
Message = Mapping[str, Any]


class PlannerLLM(Protocol):
    """What the planner needs of an LLM (`agentjet.llm.chat.ChatLLM` is one)."""

    @property
    def name(self) -> str: ...

    def complete(self, messages: Sequence[Message], *, json: bool = False) -> str: ...


class StageResults(BaseModel):
    """What a finished stage found (analysis fills it); extra keys go to the LLM as they are."""

    model_config = ConfigDict(extra="allow")

    best_params: dict[str, Any] = Field(default_factory=dict)
    best_value: float | None = None
    trials: list[dict[str, Any]] = Field(default_factory=list, description="number, params, value, state")
    importance: dict[str, float] = Field(default_factory=dict)
    notes: str = ""


def resolve_planner_llm(arg: str | None = None) -> PlannerLLM | None:
    """`--llm`, else AGENTJET_CAMPAIGN_LLM, else AGENTJET_VIBE_LLM -> an LLM; None when none is set."""
    value = arg if arg is not None else os.environ.get(ENV_LLM)
    try:
        return resolve_llm(value)
    except LLMError as exc:
        raise PlannerError(str(exc)) from exc


def plan_from_file(path: Path | str, *, llm: PlannerLLM | None = None) -> CampaignPlan:
    """A plan file with front matter as written (no LLM); prose only -> the LLM, or a PlanError saying how."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise PlanError(f"cannot read the plan: {exc}", path=path) from exc
    if has_front_matter(text):
        return load_plan(path)
    if llm is None:
        raise PlanError(NO_FRONT_MATTER, path=path, line=1)
    return plan_from_prose(text, llm, name=path.stem, base_dir=path.parent)


def plan_from_prose(
    prose: str, llm: PlannerLLM, *, name: str | None = None, base_dir: Path | None = None
) -> CampaignPlan:
    """Ask the LLM for the front matter of `prose`; the prose becomes the plan's body."""
    messages: list[Message] = [
        {"role": "system", "content": _PROSE_PROMPT + format_guide()},
        {"role": "user", "content": prose},
    ]

    def build(reply: dict[str, Any]) -> CampaignPlan:
        return parse_plan(_as_markdown(reply, prose), base_dir=base_dir, default_name=name)

    return _ask(llm, messages, build)


def propose_next_stage(
    plan: CampaignPlan, results: StageResults | Mapping[str, Any], *, llm: PlannerLLM | None = None
) -> CampaignPlan:
    """The next stage's plan (stage + 1, fresh seeds): from the LLM when given, else by narrowing."""
    found = results if isinstance(results, StageResults) else _stage_results(results)
    stage = plan.stage + 1
    name = f"{_STAGE_SUFFIX.sub('', plan.name)}-stage{stage}"[:100]
    seeds = Seeds(base=plan.seeds.base + _SEED_STRIDE, confirm=plan.seeds.confirm)
    if llm is None:
        return _narrowed(plan, found, stage=stage, name=name, seeds=seeds)
    messages: list[Message] = [
        {"role": "system", "content": _STAGE_PROMPT + format_guide()},
        {"role": "user", "content": f"Current plan:\n\n{render_plan(plan)}\n\nResults:\n\n{found.model_dump_json()}"},
    ]

    def build(reply: dict[str, Any]) -> CampaignPlan:
        front = reply.get("front_matter", reply)
        if not isinstance(front, dict):
            raise PlanError("front_matter must be a JSON object")
        front = {**front, "name": name, "stage": stage, "seeds": seeds.model_dump()}
        why = str(reply.get("rationale", "")).strip() or "(the planner gave no rationale)"
        body = f"{plan.body.rstrip()}\n\n## Stage {stage} (proposed by {llm.name})\n\n{why}\n"
        return parse_plan(_as_markdown(front, body.lstrip("\n")))

    return _ask(llm, messages, build)


def _stage_results(results: Mapping[str, Any]) -> StageResults:
    try:
        return StageResults.model_validate(dict(results))
    except ValidationError as exc:
        raise PlannerError(f"the stage results are malformed: {exc.errors()[0]['msg']}") from exc


def narrow_search_space(plan: CampaignPlan, best: Mapping[str, Any]) -> dict[str, ParamSpec]:
    """Halve each range around the best value (in log space for log ranges; shifted, not cut, at an
    edge); keep the best choice and its listed neighbours. Params without a best value stay as they are."""
    narrowed: dict[str, ParamSpec] = {}
    for name, spec in plan.search_space.items():
        value = best.get(name)
        if value is None:
            narrowed[name] = spec
        elif spec.choices is not None:
            narrowed[name] = _narrow_choices(spec, value)
        else:
            narrowed[name] = _narrow_range(name, spec, float(value))
    return narrowed


def _narrow_choices(spec: ParamSpec, best: Any) -> ParamSpec:
    choices = list(spec.choices or ())
    if len(choices) <= 2 or best not in choices:
        return spec
    i = choices.index(best)
    return ParamSpec(choices=tuple(choices[max(0, i - 1) : i + 2]), type=spec.type)


def _narrow_range(name: str, spec: ParamSpec, best: float) -> ParamSpec:
    if spec.low is None or spec.high is None or (spec.log and best <= 0):
        return spec
    to, back = (math.log, math.exp) if spec.log else (float, float)
    low, high = to(spec.low), to(spec.high)
    half = (high - low) / 4  # the new range is half as wide, centred on the best unless at an edge
    centre = min(max(to(best), low + half), high - half)
    new_low, new_high = back(centre - half), back(centre + half)
    if is_integral(name, spec):
        step = int(spec.step or 1)
        base = int(spec.low)
        new_low = base + math.floor((new_low - base) / step) * step
        new_high = base + math.ceil((new_high - base) / step) * step
        if new_low >= new_high:
            return spec
        return ParamSpec(low=int(new_low), high=int(new_high), log=spec.log, step=spec.step, type=spec.type)
    if spec.step is not None:
        new_low = spec.low + math.floor((new_low - spec.low) / spec.step + 1e-9) * spec.step
        new_high = spec.low + math.ceil((new_high - spec.low) / spec.step - 1e-9) * spec.step
    return ParamSpec(
        low=max(_round(new_low), spec.low),
        high=min(_round(new_high), spec.high),
        log=spec.log,
        step=spec.step,
        type=spec.type,
    )


def _round(value: float) -> float:
    return float(f"{value:.6g}")


def _narrowed(plan: CampaignPlan, found: StageResults, *, stage: int, name: str, seeds: Seeds) -> CampaignPlan:
    if not found.best_params:
        raise PlannerError(
            f"stage {plan.stage} has no best trial to narrow around (no trial completed); "
            "run more trials, or configure an LLM planner (--llm / AGENTJET_CAMPAIGN_LLM) to propose a stage"
        )
    space = narrow_search_space(plan, found.best_params)
    lines = [f"- `{n}`: {_describe(plan.search_space[n])} -> {_describe(s)}" for n, s in space.items()]
    best = ", ".join(f"{k}={v!r}" for k, v in found.best_params.items())
    value = f"{found.best_value:.4g}" if found.best_value is not None else "n/a"
    section = (
        f"## Stage {stage} (proposed offline from stage {plan.stage})\n\n"
        f"Stage {plan.stage}'s best {plan.objective.metric} was {value} at {best}. The search space is "
        f"narrowed around it, with fresh seeds (base {seeds.base}):\n\n" + "\n".join(lines) + "\n"
    )
    body = f"{plan.body.rstrip()}\n\n{section}" if plan.body.strip() else section
    proposed = plan.model_copy(update={"name": name, "stage": stage, "seeds": seeds, "search_space": space})
    return parse_plan(render_plan(proposed.model_copy(update={"body": body})))


def _describe(spec: ParamSpec) -> str:
    if spec.choices is not None:
        return "{" + ", ".join(map(repr, spec.choices)) + "}"
    return (
        f"[{spec.low:g}, {spec.high:g}]" + (" log" if spec.log else "") + (f" step {spec.step:g}" if spec.step else "")
    )


def _ask(llm: PlannerLLM, messages: list[Message], build: Any, attempts: int = 2) -> CampaignPlan:
    """Ask, validate with `build`, and on a PlanError ask once more with the errors quoted."""
    problem = ""
    for _ in range(attempts):
        try:
            reply_text = llm.complete(messages, json=True)
        except LLMError as exc:
            raise PlannerError(str(exc)) from exc
        try:
            return build(_json_object(reply_text))  # type: ignore[no-any-return]
        except PlanError as exc:
            problem = str(exc)
        messages = [
            *messages,
            {"role": "assistant", "content": reply_text},
            {"role": "user", "content": f"That plan is invalid: {problem}\nReply with the corrected JSON object only."},
        ]
    raise PlannerError(f"the LLM {llm.name} gave no valid plan in {attempts} tries; last problem: {problem}")


def _json_object(text: str) -> dict[str, Any]:
    """The reply's JSON object (code fences and text around it tolerated); PlanError when there is none."""
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end < start:
        raise PlanError(f"the reply holds no JSON object: {text[:200]!r}")
    try:
        value = json.loads(text[start : end + 1])
    except json.JSONDecodeError as exc:
        raise PlanError(f"the reply is not valid JSON ({exc})") from exc
    if not isinstance(value, dict):
        raise PlanError("the reply must be a JSON object")
    return value


def _as_markdown(front: Mapping[str, Any], body: str) -> str:
    front_yaml = yaml.safe_dump(dict(front), sort_keys=False, allow_unicode=True)
    return f"---\n{front_yaml}---\n\n{body}"


_PROSE_PROMPT = """You turn a research plan written in prose into the YAML front matter of an AgentJet \
campaign plan. Reply with ONE JSON object whose keys are the front-matter keys below (omit keys whose \
default fits). Pick params and ranges the prose asks for; stay within the budget it states.

"""
_STAGE_PROMPT = """You plan the next stage of an AgentJet campaign from the current plan and its results. \
Reply with ONE JSON object {"front_matter": {...}, "rationale": "..."}: front_matter holds the next \
stage's front-matter keys (name, stage and seeds are set for you), rationale says in a few sentences \
what the results showed and why the new search space follows.

"""


def format_guide() -> str:
    """The plan format in brief, for the LLM (built from the same tables the checker uses)."""
    params = "\n".join(f"- {d.name} ({d.kind}): {d.description}" for n, d in PARAMS.items() if n == d.name)
    families = ", ".join(sorted([*FAMILIES, SYNTHETIC]))
    return f"""Front-matter keys (defaults in brackets):
- name: short slug [the file name]
- objective: {{metric: eval_reward|eval_accuracy|train_reward [eval_reward], direction: maximize|minimize}}
- task: {{family: one of {families}}} or {{workspace: DIR}} or {{client: FILE.py}}, plus params: {{...}}
- model: policy model name [tiny]; e.g. smollm2-135m
- train: a TrainConfig mapping every trial starts from (grpo, lora, optim, collect sections) [defaults]
- search_space: {{param: {{low, high, log, step}} or {{choices: [...]}}}}; params:
{params}
- {TASK_PREFIX}<name>: a parameter of the task family
- sampler: {{name: tpe|random|grid, seed}} [tpe]
- pruner: {{name: median|none, warmup_steps, startup_trials}} [median]
- budget: {{trials [20], wall_clock like 90m/2h/3d, steps_per_trial [10], eval_every [5], eval_items [32]}}
- pool: local:N or a list of server URLs [local:1]
- seeds: {{base [0], confirm: re-runs of the best with fresh seeds [3]}}
- storage: sqlite|journal|RDB URL [sqlite]
"""
