"""`plan(sentence)` -> `TaskSpec`: the understand step of a vibe run.

Without an LLM the deterministic planner maps the sentence onto a built-in family by its
keywords (`sentence.read_sentence`), fills every unstated parameter with a default and writes
each such guess into `assumptions`; a sentence that fits no family is refused (`PlanRefused`)
with what was understood, the families, and how to configure an LLM. With an LLM the plan is a
JSON TaskSpec it writes, validated, with one retry that shows it the validation error.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from agentjet.llm.chat import ENV_LLM, ChatLLM
from agentjet.tasks.tool_use import LEVELS as TOOL_LEVELS
from agentjet.vibe.errors import PlanRefused
from agentjet.vibe.plan.difficulty import level_from_cues
from agentjet.vibe.plan.families import CATALOG, TOOL_USE_PARAMS, FamilyInfo
from agentjet.vibe.plan.family_notes import family_notes
from agentjet.vibe.plan.numbers import as_written
from agentjet.vibe.plan.planner_llm import plan_with_llm
from agentjet.vibe.plan.policy_model import (
    EMBEDDED,
    choose_model,
    devices_note,
    has_cuda,
    sizes_said,
)
from agentjet.vibe.plan.refusals import no_training, plan_only
from agentjet.vibe.plan.sentence import SIMPLEST_TASK, Reading, read_sentence
from agentjet.vibe.plan.shots import plan_shots, shots_said
from agentjet.vibe.plan.spec import (
    SHARED_POLICY,
    Budget,
    DatasetPlan,
    Policy,
    SuccessMetric,
    TaskSpec,
    field_range,
    merge_overrides,
)
from agentjet.vibe.plan.train_overrides import check_train, describe_overrides, held_out_settings, said_settings
from agentjet.vibe.plan.train_words import OVERNIGHT, impossible_budget
from agentjet.vibe.plan.werewolves.plan import plan_werewolves

__all__ = ["DEFAULT_STEPS", "DETERMINISTIC", "QUICK_STEPS", "plan"]

DETERMINISTIC = "deterministic"
DEFAULT_STEPS = 10
QUICK_STEPS = 3  # "a quick run", "a smoke test"
_LEVEL_OF_WORD: dict[str, Callable[[int], int]] = {
    "easy": lambda top: 1,
    "medium": lambda top: 2,
    "hard": lambda top: min(3, top),
    "hardest": lambda top: top,
}
_EXAMPLES = '"train a 7B to play werewolves as the seer", "RL a 0.5B on countdown for 50 steps"'


def plan(
    sentence: str,
    *,
    llm: ChatLLM | None,
    model: str | None = None,
    steps: int | None = None,
    minutes: float | None = None,
    eval_items: int | None = None,
    eval_every: int | None = None,
    seed: int | None = None,
    train: dict[str, Any] | None = None,
    gpu: bool | None = None,
    model_roots: Sequence[Path] | None = None,
    dry_run: bool = False,
) -> TaskSpec:
    """Plan a run for `sentence`. `model`/`steps`/`minutes`/`eval_items`/`eval_every`/`seed`/`train` (checked
    TrainConfig overrides, `train_overrides`) are the user's flags and win over the sentence and the family's
    defaults; `gpu` None means ask torch; `model_roots` are where local models are looked for (tests); `dry_run`
    says the plan alone is wanted, so a sentence asking for just the plan ("dry run: werewolves") is not refused
    for it."""
    reading = read_sentence(sentence)
    if not reading.text:
        raise PlanRefused(
            f"the task sentence is empty: say what to train, e.g. {_EXAMPLES} (the built-in families: "
            f"{', '.join(CATALOG)}), or pass --llm MODEL_OR_URL or set {ENV_LLM} to have a new task generated"
        )
    requested = reading.requested_model
    if llm is not None:
        draft = plan_with_llm(sentence, reading, llm, steps=steps, minutes=minutes)
        requested = draft.requested_model
    else:
        try:
            draft = _deterministic(sentence, reading, steps=steps, minutes=minutes, dry_run=dry_run)
        except ValidationError as exc:  # a reading the spec cannot hold: one line, never a traceback
            reason = f"its reading is no valid plan ({exc.errors()[0]['msg']})"
            raise _refusal(sentence, reading, reason) from exc
    needs_gpu_check = model is None and requested is not None
    choice = choose_model(
        requested, override=model, gpu=(gpu if gpu is not None else needs_gpu_check and has_cuda()), roots=model_roots
    )
    update: dict[str, object] = {"model": choice.model, "model_note": choice.note}
    family, base_recipe, notes = CATALOG.get(draft.family), dict(draft.train), []
    said, said_notes = said_settings(reading, base_recipe, flags=train or {})
    notes += said_notes
    if len(sizes := sizes_said(reading.text)) > 1:  # "the wolves with a 3B and the villagers with a 7B"
        notes.append(f"{', '.join(sizes[1:])} ignored: every policy of a run trains one model (the {sizes[0]} asked "
                     "first)")
    if device := devices_note(reading.text, cuda=gpu):
        notes.append(device)
    if family is not None and family.on_embedded and choice.model == EMBEDDED:
        if int(draft.params.get("difficulty", 1)) > family.learned_to_level:
            notes.append(family.on_embedded)
    dataset, held_notes = held_out_settings(
        draft.dataset, reading, steps=draft.budget.steps, eval_items=eval_items, eval_every=eval_every, seed=seed
    )
    update["dataset"], notes = dataset, notes + held_notes
    assumptions, recipe = [*draft.assumptions, *notes], merge_overrides(base_recipe, said)
    if model is not None and requested is not None:  # "--model 0.5B" over "a 7B": an override, said as one
        assumptions.append(choice.note)
    if train:
        recipe = merge_overrides(recipe, train)
        given = ", ".join(describe_overrides(train))
        assumptions.append(f"training settings from --train, over the recipe: {given}")
    check_train(recipe, f"the training settings do not fit the {draft.family} recipe")  # each was checked alone
    return draft.model_copy(update={**update, "train": recipe, "assumptions": assumptions})


def _deterministic(
    sentence: str, reading: Reading, *, steps: int | None, minutes: float | None, dry_run: bool = False
) -> TaskSpec:
    if (reason := no_training(reading.text)) is not None:
        raise _refusal(sentence, reading, reason)
    if not dry_run and (plan_asked := plan_only(reading.text)) is not None:
        raise PlanRefused(
            f"cannot plan {_quoted(sentence)} as a run: {plan_asked}; add --dry-run to print the plan and write "
            "nothing (`agentjet vibe TEXT --dry-run`, with --json for the spec as JSON)"
        )
    if (impossible := impossible_budget(reading.text)) is not None:
        raise PlanRefused(f"cannot plan {_quoted(sentence)}: {impossible}")
    game_roles = [m.word for m in reading.roles.mentions if m.word in _GAME_ROLE_WORDS]
    if not reading.families and not game_roles:  # "the cop and doctor": roles of the game, but no game named
        named = ", ".join(dict.fromkeys(m.word for m in reading.roles.mentions))
        hint = f"; {named} may be werewolves roles: say 'in werewolves' or 'in mafia'" if named else ""
        raise _refusal(sentence, reading, "no built-in task family matches it", hint=hint)
    family = reading.families[0] if reading.families else "werewolves"
    info = CATALOG[family]
    assumptions = [f"planned without an LLM: the keywords of the sentence map it onto the built-in {family} family"]
    assumptions += reading.corrections
    if not reading.families:
        words = list(dict.fromkeys(game_roles))
        named = ", ".join(f"'{word}'" for word in words)
        assumptions[0] = (
            f"planned without an LLM: no game is named, but {named} {'is a role' if len(words) == 1 else 'are roles'} "
            "of the built-in werewolves family, so that game is played"
        )
    reading = _steps_each(reading, family, assumptions)
    if len(reading.families) > 1:
        others = ", ".join(reading.families[1:])
        assumptions.append(f"the sentence also fits {others}; {family} was chosen as the more specific match")
    policies: list[Policy] | None = None
    if family == "werewolves":
        found = plan_werewolves(reading, assumptions)
        params, roles, name, policies = found.params, found.roles, found.name, found.policies
    elif info.levels:
        difficulty = _difficulty(reading, info, assumptions)
        params, roles, name = {"difficulty": difficulty}, [], f"{family}-d{difficulty}"
        if family == "tool_use":
            params |= TOOL_USE_PARAMS | _tool_turns(reading, difficulty, assumptions)
    else:
        params, roles, name = {}, [], family
    params |= plan_shots(family, shots_said(reading.text, reading.written), assumptions)
    if not info.levels:
        _ignored_cues(reading, family, assumptions)
    said_level = reading.level is not None or reading.level_word is not None
    if not info.levels and said_level and not re.search(SIMPLEST_TASK, reading.text):  # "the simplest task": no level
        assumptions.append(f"the difficulty asked for is ignored: {family} has no difficulty levels")
    if family != "werewolves" and (reading.roles.separate or reading.roles.both_sides):
        assumptions.append(f"separate models are not needed: {family} has one trained actor, so one policy trains")
    if info.recipe:
        assumptions.append(info.recipe)
    assumptions.extend(family_notes(family, reading.text, reading.written))
    prose = info.prose(params, roles)
    trained = roles or [a.removesuffix(" (policy)") for a in prose.actors if a.endswith("(policy)")]
    return TaskSpec(
        name=name.replace("_", "-"),
        sentence=sentence,
        family=family,
        params=params,
        requested_model=reading.requested_model,
        environment=prose.environment,
        actors=prose.actors,
        trained_roles=trained,
        policies=policies or [Policy(name=SHARED_POLICY, roles=trained)],
        reward=prose.reward,
        dataset=DatasetPlan(train_items=info.train_items, eval_items=info.eval_items, description=prose.dataset),
        success_metric=SuccessMetric(description=prose.metric, success_reward=info.success_reward, rate=info.rate),
        budget=_budget(reading, steps, minutes, assumptions, default=info.steps or DEFAULT_STEPS),
        train=dict(info.train),
        assumptions=assumptions,
        planner=DETERMINISTIC,
    )


# Role words that name the werewolves game on their own ("the seer should ...", "make the wolves win"): not the
# generic ones (town, doctor, detective, good guys) that other requests use too
_GAME_ROLE_WORDS = frozenset(
    "seer seers witch witches hunter hunters villager villagers werewolf werewolves wolf wolves wolf pack".split()
    + ["wolf pack", "plain villager", "godfather", "mafioso", "mafiosi", "mafiosos"]  # mafia's own words
)
_CLOCK = re.compile(
    r"\b(?:until|till|by|before)\s+(?:lunch|dinner|breakfast|noon|midnight|tonight|tomorrow(?: morning)?|"
    r"(?:the )?morning|(?:the )?evening|(?:the )?end of (?:the )?day|eod|\d{1,2}(?::\d\d)?\s*(?:am|pm|o'?clock))\b"
)
_UNTIL = re.compile(  # "until it reaches 80% accuracy", "till the reward stops improving"
    r"\b(?:until|till|untill)\s+(?:it|the \w+|its \w+|they)?\s*(?:\w+\s+){0,3}?(?:reach(?:es)?|hits?|gets?|stops?|"
    r"plateaus?|converges?|is|are|wins?)\b[^,;.]*|"
    r"\b\d+(?:\.\d+)?\s*%\s*(?:accuracy|win rate|success(?: rate)?|wins?)?\s*(?:target|goal)\b|"  # "an 80% target"
    r"\b(?:win|wins|reach|reaches|hit|hits|get|gets|aim for|target)\s+(?:at least\s+)?\d+(?:\.\d+)?\s*%[^,;.]*"
)


_STEPS_EACH = re.compile(r"(?<![\d.])\b(\d+)[\s-]*(?:training\s+)?(?:steps?|updates?|iterations?)\s+(?:each|apiece)\b")


def _steps_each(reading: Reading, family: str, assumptions: list[str]) -> Reading:
    """"6 steps each" where no problem of the family takes steps (werewolves' sides, a word): the training steps,
    which every policy takes together; in arithmetic and countdown it stays the steps of each problem."""
    said = _STEPS_EACH.search(reading.text)
    if said is None or reading.steps is not None or family in ("arithmetic", "countdown"):
        return reading
    steps = int(said.group(1))
    cues = tuple(c for c in reading.cues if not (c.kind == "operations" and c.value == steps))
    words = as_written(said.group(0), reading.written) if reading.written else said.group(0)
    assumptions.append(f"'{words}' read as {steps} training steps (every policy of a run takes each step)")
    return dataclasses.replace(reading, steps=steps, cues=cues)


def _difficulty(reading: Reading, info: FamilyInfo, assumptions: list[str]) -> int:
    """A stated level wins, then the numeric cues ("6 numbers", "3-digit"), then a word ("hard"); else level 1."""
    top = info.levels
    cued = level_from_cues(info.name, reading.cues)
    _note_ignored(cued.ignored, info.name, assumptions)
    if reading.level is not None:
        level = min(max(reading.level, 1), top)
        if level != reading.level:
            assumptions.append(f"difficulty {reading.level} is outside 1-{top} for {info.name}: using {level}")
        if cued.level is not None and cued.level != level:
            assumptions.append(f"the stated level {level} wins over {'; '.join(cued.reasons)}")
        return level
    if cued.level is not None:
        assumptions.append(f"{'; '.join(cued.reasons)}, of levels 1-{top}")
        if reading.level_word is not None and _LEVEL_OF_WORD[reading.level_word](top) != cued.level:
            assumptions.append(f"'{reading.level_phrase}' gives way to the numbers said (level {cued.level})")
        return cued.level
    if reading.grade is not None and info.name == "arithmetic":
        grade, words = reading.grade
        level = min(max((grade + 1) // 2, 1), top)
        assumptions.append(
            f"'{words}' ({_grade_said(words, grade)}) read as level {level} of 1-{top}: grades 1-2 are level 1, 3-4 "
            "level 2, 5-6 level 3, 7-8 level 4, 9 and up level 5 (each level one more operation, larger amounts)"
        )
        if reading.level_word is not None and _LEVEL_OF_WORD[reading.level_word](top) != level:
            assumptions.append(f"'{reading.level_phrase}' gives way to the grade said (level {level})")
        return level
    if reading.level_word is not None:
        level = _LEVEL_OF_WORD[reading.level_word](top)
        assumptions.append(f"'{reading.level_phrase}' read as difficulty {level} of 1-{top}")
        return level
    if reading.grade is not None:
        said = reading.grade[1]
        assumptions.append(f"'{said}' ({_grade_said(said)}) is no level of {info.name}: level 1 of 1-{top}")
        return 1
    assumptions.append(f"no difficulty given: level 1 of 1-{top} (the easiest, where a small model starts to learn)")
    return 1


def _grade_said(words: str, grade: int | None = None) -> str:
    """How a grade was said: a child's age ("10 year old", read as its grade) or a school grade."""
    if re.search(r"\b(?:olds?|aged?)\b", words):
        return "an age" + (f", grade {grade}" if grade is not None else "")
    return "a school grade"


def _ignored_cues(reading: Reading, family: str, assumptions: list[str]) -> None:
    _note_ignored(level_from_cues(family, reading.cues).ignored, family, assumptions)


def _tool_turns(reading: Reading, difficulty: int, assumptions: list[str]) -> dict[str, Any]:
    """`max_turns` from "at most 6 turns", with a note when it is fewer than a list of the level needs."""
    cue = next((c for c in reading.cues if c.kind == "turns" and c.value >= 1), None)
    if cue is None:
        return {}
    level = TOOL_LEVELS[difficulty]
    short = "" if cue.value >= level.turns else f" (fewer than the {level.turns} a list of {level.items_said} takes)"
    assumptions.append(f"'{cue.words}' -> max_turns={cue.value} model calls an episode{short}")
    return {"max_turns": cue.value}


def _note_ignored(ignored: tuple[str, ...], family: str, assumptions: list[str]) -> None:
    if ignored:
        words = ", ".join(f"'{w}'" for w in ignored)
        assumptions.append(f"{words} ignored: the {family} family has no setting it maps onto")


def _budget(
    reading: Reading, steps: int | None, minutes: float | None, assumptions: list[str], *, default: int
) -> Budget:
    if steps is not None:
        if reading.steps is not None and reading.steps != steps:
            assumptions.append(f"--steps {steps} overrides the {reading.steps} steps in the sentence")
        elif reading.steps is None and reading.quick:
            assumptions.append(f"--steps {steps} overrides the quick run the sentence asks for")
    elif reading.steps is not None:
        steps = reading.steps
        if reading.steps_note is not None:
            assumptions.append(reading.steps_note)
        if reading.epochs is not None:
            assumptions.append(f"'{reading.epochs} epochs' ignored: the {steps} steps said are the budget")
    elif reading.epochs is not None and reading.epochs > 0:
        steps = reading.epochs
        assumptions.append(
            f"'{reading.epochs} epochs' read as {steps} training steps: a vibe budget counts updates (each on a few "
            "train items), not passes over the train split"
        )
    elif reading.quick:
        steps = QUICK_STEPS
        assumptions.append(f"a quick run asked for: {QUICK_STEPS} training steps")
    if minutes is None:
        minutes = reading.minutes
    elif reading.minutes is not None and reading.minutes != minutes:
        assumptions.append(f"--budget {minutes:g} overrides the {reading.minutes:g} minutes in the sentence")
    if steps is None:
        steps = default
        limit = f", or fewer if {minutes:g} minutes run out first (a limit, not a length)" if minutes else ""
        assumptions.append(f"no step count given: {default} training steps (the family's default){limit}")
    if minutes is not None and minutes == reading.minutes and (night := OVERNIGHT.search(reading.text)):
        assumptions.append(f"'{night.group(0)}' read as a time limit of {minutes / 60:g} hours")
    if clock := _CLOCK.search(reading.text):  # "until lunch": a time of day, no length vibe can know
        limit = f"{minutes:g} minutes" if minutes is not None else "no time limit"
        assumptions.append(f"'{clock.group(0)}' is a time of day, not a length: {limit} (say one: 'for 2 hours')")
    if until := _UNTIL.search(reading.text):
        limit = f" or {minutes:g} minutes" if minutes is not None else ""
        assumptions.append(f"'{until.group(0)}' is not a stop rule vibe has: the run trains {steps} steps{limit}, and "
                           "the held-out rounds say how far it got")
    low, high = field_range(Budget, "steps")
    if not low <= steps <= high:
        raise PlanRefused(f"a run of {steps} steps cannot be planned: say a step count from {low} to {high}")
    if minutes is not None and minutes <= 0:
        raise PlanRefused(f"a time limit of {minutes:g} minutes leaves no time to train: say a limit above 0")
    return Budget(steps=steps, minutes=minutes)


def _quoted(sentence: str, limit: int = 200) -> str:
    """The sentence as a refusal quotes it: on one line, and cut short when long (a pasted page is no sentence)."""
    text = " ".join(sentence.split())
    return repr(text if len(text) <= limit else text[:limit] + "...")


def _refusal(sentence: str, reading: Reading, reason: str, *, hint: str = "") -> PlanRefused:
    understood = f" (understood: {', '.join(reading.understood)})" if reading.understood else ""
    understood += hint
    return PlanRefused(
        f"cannot plan {_quoted(sentence)}: {reason}{understood}. Without an LLM, vibe plans the built-in families "
        f"({', '.join(CATALOG)}; e.g. {_EXAMPLES}), or pass --llm MODEL_OR_URL or set {ENV_LLM} (a litellm model "
        "name or an OpenAI-compatible URL) to have a new task generated."
    )
