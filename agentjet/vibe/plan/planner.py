"""`plan(sentence)` -> `TaskSpec`: the understand step of a vibe run.

Without an LLM the deterministic planner maps the sentence onto a built-in family by its
keywords (`sentence.read_sentence`), fills every unstated parameter with a default and writes
each such guess into `assumptions`; a sentence that fits no family is refused (`PlanRefused`)
with what was understood, the families, and how to configure an LLM. With an LLM the plan is a
JSON TaskSpec it writes, validated, with one retry that shows it the validation error.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from agentjet.llm.chat import HOW_TO_CONFIGURE, ChatLLM
from agentjet.vibe.errors import PlanRefused
from agentjet.vibe.plan.families import CATALOG, VILLAGE_ROLES, WEREWOLF_ROLES, FamilyInfo, family_list
from agentjet.vibe.plan.planner_llm import plan_with_llm
from agentjet.vibe.plan.policy_model import choose_model, has_cuda
from agentjet.vibe.plan.sentence import ROLE_ALIASES, Reading, read_sentence
from agentjet.vibe.plan.spec import Budget, DatasetPlan, SuccessMetric, TaskSpec

__all__ = ["DEFAULT_STEPS", "DETERMINISTIC", "plan"]

DETERMINISTIC = "deterministic"
DEFAULT_STEPS = 10
_LEVEL_OF_WORD: dict[str, Callable[[int], int]] = {
    "easy": lambda top: 1,
    "medium": lambda top: 2,
    "hard": lambda top: min(3, top),
    "hardest": lambda top: top,
}
_ALIAS_NOTES = {
    "detective": "'detective' read as the seer (the role that learns a player's side each night)",
    "cop": "'cop' read as the seer (the role that learns a player's side each night)",
    "doctor": "'doctor' read as the witch (the role that can save the night's victim)",
    "town": "'town' read as the village side",
    "townsfolk": "'townsfolk' read as the village side",
    "townspeople": "'townspeople' read as the village side",
    "mafia": "'mafia' read as the werewolves",
}
_EXAMPLES = '"train a 7B to play werewolves as the seer", "RL a 0.5B on countdown for 50 steps"'


def plan(
    sentence: str,
    *,
    llm: ChatLLM | None,
    model: str | None = None,
    steps: int | None = None,
    minutes: float | None = None,
    gpu: bool | None = None,
    model_roots: Sequence[Path] | None = None,
) -> TaskSpec:
    """Plan a run for `sentence`. `model`/`steps`/`minutes` are the user's flags and win over the sentence;
    `gpu` None means ask torch; `model_roots` are where local models are looked for (tests)."""
    reading = read_sentence(sentence)
    if not reading.text:
        raise PlanRefused(
            f"the task sentence is empty: say what to train, e.g. {_EXAMPLES}. "
            f"Built-in families: {family_list()}. Or {HOW_TO_CONFIGURE}."
        )
    requested = reading.requested_model
    if llm is not None:
        draft = plan_with_llm(sentence, reading, llm, steps=steps, minutes=minutes)
        requested = draft.requested_model
    else:
        draft = _deterministic(sentence, reading, steps=steps, minutes=minutes)
    needs_gpu_check = model is None and requested is not None
    choice = choose_model(
        requested, override=model, gpu=(gpu if gpu is not None else needs_gpu_check and has_cuda()), roots=model_roots
    )
    return draft.model_copy(update={"model": choice.model, "model_note": choice.note})


def _deterministic(sentence: str, reading: Reading, *, steps: int | None, minutes: float | None) -> TaskSpec:
    if reading.is_text_request:
        raise _refusal(sentence, reading, "it asks for text, not for training a model")
    if not reading.families:
        raise _refusal(sentence, reading, "no built-in task family matches it")
    family = reading.families[0]
    info = CATALOG[family]
    assumptions = [f"planned without an LLM: the keywords of the sentence map it onto the built-in {family} family"]
    if len(reading.families) > 1:
        others = ", ".join(reading.families[1:])
        assumptions.append(f"the sentence also fits {others}; {family} was chosen as the more specific match")
    if family == "werewolves":
        params, roles, name = _werewolves(reading, assumptions)
    elif info.levels:
        difficulty = _difficulty(reading, info, assumptions)
        params, roles, name = {"difficulty": difficulty}, [], f"{family}-d{difficulty}"
    else:
        params, roles, name = {}, [], family
    if not info.levels and (reading.level is not None or reading.level_word is not None):
        assumptions.append(f"the difficulty asked for is ignored: {family} has no difficulty levels")
    if family == "arithmetic" and ("grade" in reading.text or "gsm" in reading.text):
        assumptions.append("grade-school math means the generated word problems (GSM8K itself is not downloaded)")
    prose = info.prose(params, roles)
    return TaskSpec(
        name=name.replace("_", "-"),
        sentence=sentence,
        family=family,
        params=params,
        requested_model=reading.requested_model,
        environment=prose.environment,
        actors=prose.actors,
        trained_roles=roles or [a.removesuffix(" (policy)") for a in prose.actors if a.endswith("(policy)")],
        reward=prose.reward,
        dataset=DatasetPlan(train_items=info.train_items, eval_items=info.eval_items, description=prose.dataset),
        success_metric=SuccessMetric(description=prose.metric),
        budget=_budget(reading, steps, minutes, assumptions),
        assumptions=assumptions,
        planner=DETERMINISTIC,
    )


def _werewolves(reading: Reading, assumptions: list[str]) -> tuple[dict[str, Any], list[str], str]:
    chosen: set[str] = set()
    side: str | None = None
    for word in reading.role_words:
        mapped = ROLE_ALIASES[word]
        word_side = "wolves" if mapped == ("werewolf",) else "village"
        side = side or word_side
        if word_side != side:
            assumptions.append(f"'{word}' is on the other side: one policy trains one side, so only the {side} play")
            continue
        if word in _ALIAS_NOTES:
            assumptions.append(_ALIAS_NOTES[word])
        chosen.update(mapped)
    if not chosen:
        chosen = {"werewolf"}
        assumptions.append("no side or role named: the policy plays the three werewolves (the family's default)")
    roles = [r for r in WEREWOLF_ROLES if r in chosen]
    if "mafia" in reading.text:
        assumptions.append(
            "mafia is played as werewolves (the same social deduction game: mafia = wolves, town = village)"
        )
    discussion = reading.discussion if reading.discussion is not None else False
    if reading.discussion is None:
        assumptions.append(
            "discussion off (the default): players only kill, check, heal and vote, about 30 short calls a game, "
            "so a CPU machine plays enough games to learn; say 'with discussion' to add talk"
        )
    assumptions.append(
        "penalty per_action: win/loss minus 0.1 x the invalid-answer share, a graded signal while a small model "
        "is still learning the answer format"
    )
    label = "wolves" if roles == ["werewolf"] else "village" if roles == list(VILLAGE_ROLES) else "-".join(roles)
    return {"trained_roles": roles, "discussion": discussion, "penalty": "per_action"}, roles, f"werewolves-{label}"


def _difficulty(reading: Reading, info: FamilyInfo, assumptions: list[str]) -> int:
    top = info.levels
    if reading.level is not None:
        level = min(max(reading.level, 1), top)
        if level != reading.level:
            assumptions.append(f"difficulty {reading.level} is outside 1-{top} for {info.name}: using {level}")
        return level
    if reading.level_word is not None:
        level = _LEVEL_OF_WORD[reading.level_word](top)
        assumptions.append(f"'{reading.level_word}' read as difficulty {level} of 1-{top}")
        return level
    assumptions.append(f"no difficulty given: level 1 of 1-{top} (the easiest, where a small model starts to learn)")
    return 1


def _budget(reading: Reading, steps: int | None, minutes: float | None, assumptions: list[str]) -> Budget:
    if steps is not None:
        if reading.steps is not None and reading.steps != steps:
            assumptions.append(f"--steps {steps} overrides the {reading.steps} steps in the sentence")
    elif reading.steps is not None:
        steps = reading.steps
    else:
        steps = DEFAULT_STEPS
        assumptions.append(f"no step count given: {DEFAULT_STEPS} training steps")
    if minutes is None:
        minutes = reading.minutes
    return Budget(steps=steps, minutes=minutes)


def _refusal(sentence: str, reading: Reading, reason: str) -> PlanRefused:
    understood = f" (understood: {', '.join(reading.understood)})" if reading.understood else ""
    return PlanRefused(
        f"cannot plan {sentence.strip()!r}: {reason}{understood}. Without an LLM, vibe maps a sentence onto a "
        f"built-in task family: {family_list()}. Rephrase it around one of these (e.g. {_EXAMPLES}), or "
        f"{HOW_TO_CONFIGURE}, to have a new task generated."
    )
