"""The LLM planner: ask for a JSON TaskSpec, validate it, retry once with the validation error.

The LLM sees the built-in families with their parameters and the spec's JSON schema. A family
it invents becomes `generated` (the generate step then writes the code); params of a built-in
family must fit its constructor (checked by building it); a sentence that is no trainable
task may be declined with `{"refused": "why"}`. The caller resolves the policy model.
"""

from __future__ import annotations

import json
import re
from typing import Any

from pydantic import ValidationError

from agentjet.core import ConfigError
from agentjet.llm.chat import ChatLLM
from agentjet.tasks.registry import FAMILIES, load_family
from agentjet.vibe.errors import PlanRefused, VibeError
from agentjet.vibe.plan.families import CATALOG, family_list
from agentjet.vibe.plan.sentence import Reading
from agentjet.vibe.plan.spec import GENERATED, SHARED_POLICY, Policy, TaskSpec, validation_problems
from agentjet.vibe.plan.werewolves.plan import policies_from_params

__all__ = ["OWNED_FIELDS", "plan_with_llm", "system_prompt"]

OWNED_FIELDS = ("sentence", "planner", "model", "model_note")  # filled by the planner, never by the LLM
_TRIES = 2


class _Invalid(Exception):
    """The reply is no valid plan; the message goes back to the LLM."""


def system_prompt() -> str:
    """The planner's instructions: the families, the schema and the rules."""
    schema = TaskSpec.model_json_schema()
    for field in OWNED_FIELDS:
        schema["properties"].pop(field, None)
        if field in schema.get("required", []):
            schema["required"].remove(field)
    families = "\n".join(f"- {i.name}: {i.summary}. Params: {i.params}" for i in CATALOG.values())
    return (
        "You plan reinforcement-learning runs for AgentJet, which trains a policy LLM on tasks with a verifiable "
        "reward. Turn the user's task sentence into a task spec.\n\n"
        f"Built-in task families (use one when it fits; params must be its constructor parameters):\n{families}\n\n"
        f"When none fits, use family {GENERATED!r}: the task's code will be written from your spec, so describe "
        "the environment, every actor, the reward (exact values and when each is given, robust to degenerate "
        "answers), the dataset (what one item holds, dataset.params for its generator) and the success metric "
        "precisely. Record every guess you make in `assumptions`. `requested_model` is the model size or name "
        'the sentence asks for (e.g. "7B"), or null.\n\n'
        'If the sentence is not a task a model could be trained on with a checkable reward, reply {"refused": '
        '"<why>"} instead.\n\n'
        f"Reply with one JSON object only, matching this JSON schema:\n{json.dumps(schema, separators=(',', ':'))}"
    )


def plan_with_llm(
    sentence: str, reading: Reading, llm: ChatLLM, *, steps: int | None, minutes: float | None
) -> TaskSpec:
    """A validated spec from the LLM (model fields left to the caller); VibeError after two bad replies."""
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": system_prompt()},
        {"role": "user", "content": f"Task sentence: {sentence.strip()}"},
    ]
    problem = ""
    for _ in range(_TRIES):
        reply = llm.complete(messages, json=True)
        try:
            return _spec_from_reply(reply, sentence, reading, llm, steps=steps, minutes=minutes)
        except _Invalid as exc:
            problem = str(exc)
            messages.append({"role": "assistant", "content": reply})
            messages.append(
                {
                    "role": "user",
                    "content": f"That reply is not a valid plan: {problem}\nReply with the corrected JSON object only.",
                }
            )
    raise VibeError(
        f"the LLM {llm.name} gave no valid plan in {_TRIES} tries (last problem: {problem}); "
        "try a stronger model with --llm, or rephrase the sentence"
    )


def _spec_from_reply(
    reply: str, sentence: str, reading: Reading, llm: ChatLLM, *, steps: int | None, minutes: float | None
) -> TaskSpec:
    data = _json_object(reply)
    if data.get("refused"):
        raise PlanRefused(
            f"the LLM {llm.name} declined to plan {sentence.strip()!r}: {data['refused']}. "
            f"Built-in families: {family_list()}."
        )
    for field in (*OWNED_FIELDS, "refused"):
        data.pop(field, None)
    given = data.get("assumptions")
    assumptions: list[Any] = given if isinstance(given, list) else []
    data["assumptions"] = [f"planned by the LLM {llm.name}", *assumptions]
    data["family"] = _family(data.get("family"), data["assumptions"])
    if isinstance(data.get("name"), str):
        data["name"] = _slug(data["name"])
    if data.get("requested_model") in (None, ""):
        data["requested_model"] = reading.requested_model
    given_budget = data.get("budget")
    budget: dict[str, Any] = given_budget if isinstance(given_budget, dict) else {}
    data["budget"] = {**budget, **({"steps": steps} if steps else {}), **({"minutes": minutes} if minutes else {})}
    try:
        spec = TaskSpec.model_validate({**data, "sentence": sentence, "planner": llm.name})
    except ValidationError as exc:
        raise _Invalid(validation_problems(exc)) from exc
    if not spec.is_generated:  # a built-in family's params decide who trains on which policy, not the LLM's prose
        _check_params(spec)
        if spec.family == "werewolves":
            policies = policies_from_params(spec.params)
            roles = [r for p in policies for r in p.roles]
            spec = spec.model_copy(update={"trained_roles": roles, "policies": policies})
        else:
            spec = spec.model_copy(update={"policies": [Policy(name=SHARED_POLICY, roles=list(spec.trained_roles))]})
    return spec


def _json_object(reply: str) -> dict[str, Any]:
    text = reply.strip()
    fenced = re.search(r"```(?:json)?\s*(.*?)```", text, re.DOTALL)
    if fenced:
        text = fenced.group(1).strip()
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end < start:
        raise _Invalid("it holds no JSON object")
    try:
        data = json.loads(text[start : end + 1])
    except json.JSONDecodeError as exc:
        raise _Invalid(f"it is not valid JSON ({exc})") from exc
    if not isinstance(data, dict):
        raise _Invalid("the JSON is not an object")
    return data


def _family(value: object, assumptions: list[str]) -> str:
    if not isinstance(value, str) or not value.strip():
        raise _Invalid(f"`family` must be one of {', '.join(FAMILIES)} or {GENERATED!r}")
    name = value.strip().lower().replace("-", "_").replace(" ", "_")
    if name in FAMILIES or name == GENERATED:
        return name
    assumptions.append(f"the LLM named the family {value!r}, which is not built in: the task will be generated")
    return GENERATED


def _slug(name: str) -> str:
    slug = re.sub(r"[^a-z0-9_-]+", "-", name.lower()).strip("-_")[:64]
    return slug or "task"


def _check_params(spec: TaskSpec) -> None:
    try:
        load_family(spec.family, spec.params)
    except ConfigError as exc:
        raise _Invalid(f"params do not fit the {spec.family} family: {exc}") from exc
