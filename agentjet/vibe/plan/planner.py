"""`plan(sentence)` -> `TaskSpec`: the understand step of a vibe run.

Without an LLM the deterministic planner maps the sentence onto a built-in family by its
keywords (`sentence.read_sentence`), fills every unstated parameter with a default and writes
each such guess into `assumptions`; a sentence that fits no family is refused (`PlanRefused`)
with what was understood, the families, and how to configure an LLM. With an LLM the plan is a
JSON TaskSpec it writes, validated, with one retry that shows it the validation error.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from agentjet.core import ConfigError
from agentjet.llm.chat import HOW_TO_CONFIGURE, ChatLLM
from agentjet.tasks.tool_use import LEVELS as TOOL_LEVELS
from agentjet.vibe.errors import PlanRefused
from agentjet.vibe.plan.difficulty import level_from_cues
from agentjet.vibe.plan.families import CATALOG, FamilyInfo, family_list
from agentjet.vibe.plan.numbers import LISTED_NUMBERS
from agentjet.vibe.plan.planner_llm import plan_with_llm
from agentjet.vibe.plan.policy_model import EMBEDDED, choose_model, has_cuda
from agentjet.vibe.plan.sentence import GAME_OF_24, SAYS_A_WORD, Reading, read_sentence
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
from agentjet.vibe.plan.train_overrides import describe_overrides, parse_train_overrides
from agentjet.vibe.plan.train_words import BATCH_SIZE, EPISODES_PER_STEP
from agentjet.vibe.plan.werewolves_plan import plan_werewolves

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
    train: dict[str, Any] | None = None,
    gpu: bool | None = None,
    model_roots: Sequence[Path] | None = None,
) -> TaskSpec:
    """Plan a run for `sentence`. `model`/`steps`/`minutes`/`eval_items`/`train` (checked TrainConfig overrides,
    `train_overrides`) are the user's flags and win over the sentence and the family's defaults; `gpu` None means
    ask torch; `model_roots` are where local models are looked for (tests)."""
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
    update: dict[str, object] = {"model": choice.model, "model_note": choice.note}
    said, notes = _said_settings(reading, dict(draft.train))
    family = CATALOG.get(draft.family)
    if family is not None and family.on_embedded and choice.model == EMBEDDED:
        notes.append(family.on_embedded)
    if eval_items is None and reading.eval_count is not None:
        eval_items = reading.eval_count.items
        notes.append(f"'{reading.eval_count.words}': {eval_items} held-out items a round, before and after training")
    if eval_items is not None:
        low, high = field_range(DatasetPlan, "eval_items")
        if not low <= eval_items <= high:
            raise PlanRefused(f"{eval_items} held-out items cannot be planned: say {low} to {high}")
        update["dataset"] = draft.dataset.model_copy(update={"eval_items": eval_items})
    assumptions, recipe = [*draft.assumptions, *notes], merge_overrides(dict(draft.train), said)
    if train:
        recipe = merge_overrides(recipe, train)
        given = ", ".join(describe_overrides(train))
        assumptions.append(f"training settings from --train, over the recipe: {given}")
    return draft.model_copy(update={**update, "train": recipe, "assumptions": assumptions})


def _said_settings(reading: Reading, recipe: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """The training settings the sentence states, checked, as overrides of the recipe, and a note on each."""
    overrides: dict[str, Any] = {}
    notes: list[str] = []
    for setting in reading.settings:
        if setting.key == BATCH_SIZE:
            notes.append(f"'{setting.words}' ignored: a step trains on its GRPO groups x task groups (say 'groups "
                         "of N' or 'N games per step')")
            continue
        if setting.key == EPISODES_PER_STEP:
            group = int(merge_overrides(recipe, overrides).get("grpo", {}).get("group_size", 8))
            pairs, how = _episodes_per_step(int(setting.value), group)
        else:
            pairs, how = [f"{setting.key}={setting.value}"], f"sets {setting.key}={setting.value:g}"
        try:
            checked = parse_train_overrides(pairs)
        except ConfigError as exc:
            notes.append(f"'{setting.words}' ignored: {str(exc).removeprefix('--train: ')}")
            continue
        overrides = merge_overrides(overrides, checked)
        notes.append(f"'{setting.words}' {how} over the family's recipe")
    return overrides, notes


def _episodes_per_step(episodes: int, group: int) -> tuple[list[str], str]:
    """Episodes an update as GRPO groups x task groups: 16 with groups of 8 -> 2 tasks; 4 -> one group of 4."""
    if episodes < group:
        pairs = [f"grpo.group_size={episodes}", "collect.tasks=1"]
        return pairs, f"sets grpo.group_size={episodes}, collect.tasks=1 (one group of {episodes} an update)"
    tasks = max(1, round(episodes / group))
    exact = "" if tasks * group == episodes else f"; {tasks * group}, the nearest multiple of the group size"
    return [f"collect.tasks={tasks}"], f"sets collect.tasks={tasks} ({tasks} groups of {group} an update{exact})"


def _deterministic(sentence: str, reading: Reading, *, steps: int | None, minutes: float | None) -> TaskSpec:
    if reading.is_text_request:
        raise _refusal(sentence, reading, "it asks for text, not for training a model")
    if writing := _WRITING.search(reading.text):
        raise _refusal(sentence, reading, f"it asks to train writing ('{writing.group(0)}'), which no built-in family "
                                          "trains")
    game_roles = [m.word for m in reading.roles.mentions if m.word in _GAME_ROLE_WORDS]
    if not reading.families and not game_roles:
        raise _refusal(sentence, reading, "no built-in task family matches it")
    family = reading.families[0] if reading.families else "werewolves"
    info = CATALOG[family]
    assumptions = [f"planned without an LLM: the keywords of the sentence map it onto the built-in {family} family"]
    if not reading.families:
        words = list(dict.fromkeys(game_roles))
        named = ", ".join(f"'{word}'" for word in words)
        assumptions[0] = (
            f"planned without an LLM: no game is named, but {named} {'is a role' if len(words) == 1 else 'are roles'} "
            "of the built-in werewolves family, so that game is played"
        )
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
            params |= _tool_turns(reading, difficulty, assumptions)
    else:
        params, roles, name = {}, [], family
    if not info.levels:
        _ignored_cues(reading, family, assumptions)
    if not info.levels and (reading.level is not None or reading.level_word is not None):
        assumptions.append(f"the difficulty asked for is ignored: {family} has no difficulty levels")
    if family != "werewolves" and (reading.roles.separate or reading.roles.both_sides):
        assumptions.append(f"separate models are not needed: {family} has one trained actor, so one policy trains")
    if info.recipe:
        assumptions.append(info.recipe)
    assumptions.extend(_what_the_family_poses(family, reading.text))
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
    + ["wolf pack", "plain villager"]
)
_BARE_OPERATIONS = re.compile(
    r"\b(?:adds?|adding|addition|multipl(?:y|ies|ying|ication)|subtract(?:s|ing|ion)?|divid(?:e|es|ing)|division|"
    r"times tables?)\b"
)
# The four operations, each as a sentence may name it: naming some but not all asks for what is not posed alone
_OPERATION_KINDS = (
    re.compile(r"\b(?:adds?|adding|addition|plus)\b"),
    re.compile(r"\b(?:subtract(?:s|ing|ion)?|minus)\b"),
    re.compile(r"\b(?:multipl(?:y|ies|ying|ication)|times tables?)\b"),
    re.compile(r"\b(?:divid(?:e|es|ing)|division)\b"),
)
_WORDED = re.compile(r"\b(?:word|story|math|maths|grade|gsm|arithmetic)")
_GAME_OF_24 = re.compile(GAME_OF_24)
_NAMED_WORD = re.compile(
    r"\b(?:the|a) word\s+[\"'\u2018\u201c]?(?P<word>[a-z]+)|"
    r"\bgreet(?:s|ing)?\s+(?:\w+\s+){0,2}?with\s+[\"'\u2018\u201c]?(?P<greeted>[a-z]+)|"
    r"\bword(?::\s*[\"'\u2018\u201c]?|\s+[\"'\u2018\u201c])(?P<word2>[a-z]+)|"
    + SAYS_A_WORD
    + "|"
    r"\b(?:say|says|repeat|output|print|reply|replies|answer|answers|respond|responds)(?: only| just| always)?"
    r"(?: with)?\s+"
    r"(?:just |only |exactly |always )?"
    r"(?:[\"'\u2018\u201c](?P<quoted>[a-z]+)[\"'\u2019\u201d]|(?P<bare>[a-z]+),? and nothing else)"
)
_NOT_A_NAMED_WORD = frozenset(
    {"i", "it", "they", "we", "you", "given", "asked", "requested", "problems", "and", "only"}
    | {"game", "games", "task", "tasks", "family", "echo", "repetition", "challenge", "puzzle", "puzzles", "test"}
    | {"exercise", "problem", "is", "that", "which", "in", "for", "of", "to", "from", "it", "list", "level"}
    | {"back", "again", "out", "aloud", "loud", "correctly", "properly", "right", "exactly", "clearly", "once"}
    | {"twice", "more", "better", "well", "on", "at", "with", "by", "as", "when", "if", "then", "now", "each"}
)
_NOT_INTEGERS = re.compile(r"\b(?:fractions?|decimals?|percent(?:ages?)?|negative numbers|negatives|real numbers)\b")
_NOT_THE_SHOP = re.compile(  # prices that are no shopping list
    r"\b(?:stock|stocks|share|flight|flights|hotel|hotels|crypto|bitcoin|gas|fuel|house|housing|rent|market)\s+prices?\b"
)
_FIXED_TARGET = re.compile(
    r"\btargets?(?:\s+(?:number|value))?\s+(?:is\s+|are\s+)?(?:always|fixed at|fixed to|set to|=)\s+(\d+)|"
    r"\balways\s+(?:reach|reaches|hit|hits|make|makes|get|gets)\s+(\d+)\b"
)
_SHOPPING = re.compile(
    r"\b(?:shop(?:s|ping|per)?|grocer(?:y|ies)|prices?|priced|cart|basket|receipts?|bills?|invoices?|lists?|totals?|"
    r"totall?(?:ing|ed)|store|buy(?:ing)?|purchases?|costs?)\b"
)
_OTHER_TOOL = re.compile(
    r"\b(?:weather|search(?:es|ing)?|web|browser|brows(?:e|ing)|internet|google|database|sql|python|code|email|"
    r"e-mail|calendar|wikipedia|maps?|files?|shell|terminal|retrieval)\b"
)
_UNKNOWNS = re.compile(
    r"\b(?:algebra(?:ic)?|equations?|solve for x|unknowns?|variables?|square roots?|exponents?|powers)\b"
)
_TOOL_DROPPED = re.compile(
    r"\b(?:no|without|not|never|don't|do not|doesn't)\s+(?:\w+\s+){0,4}?(?:calculator|note|notes|notepad|lookup|"
    r"look-up)(?:\s+tool)?\b"
)
# A skill no family trains: writing ("write haiku about werewolves" names the game, but trains no play)
_WRITING = re.compile(
    r"\b(?:write|writes|writing|compose|composing|generate|generating)\s+(?:\w+\s+){0,2}?(?:poems?|poetry|"
    r"haikus?|stories|story|essays?|songs?|lyrics|jokes?|articles?|novels?|limericks?|sonnets?)\b"
)
_UNTIL = re.compile(  # "until it reaches 80% accuracy", "till the reward stops improving"
    r"\b(?:until|till|untill)\s+(?:it|the \w+|its \w+|they)?\s*(?:\w+\s+){0,3}?(?:reach(?:es)?|hits?|gets?|stops?|"
    r"plateaus?|converges?|is|are)\b[^,;.]*"
)
_VARIANT = re.compile(r"\b(?:one|1)[- ]night\b|\bultimate werewol(?:f|ves)\b")


def _what_the_family_poses(family: str, text: str) -> list[str]:
    """Where the sentence names a task a family only approximates, the assumptions that say how (each that applies)."""
    notes: list[str] = []
    if family == "arithmetic" and (school := re.search(r"\b(?:grade|primary|elementary)[- ]school\b|\bgsm", text)):
        notes.append(f"'{school.group(0)}' math means the generated word problems (GSM8K itself is not downloaded)")
    operation = _BARE_OPERATIONS.search(text)
    if family == "arithmetic" and operation and not _WORDED.search(text):
        notes.append(
            "the sums asked for are posed as the arithmetic family's generated word problems (each a chain of "
            "+, -, x and / on integers; there is no family of bare expressions)"
        )
    operations = [found.group(0) for kind in _OPERATION_KINDS if (found := kind.search(text))]
    if family == "arithmetic" and 0 < len(operations) < len(_OPERATION_KINDS):
        notes.append(
            f"{' and '.join(repr(word) for word in operations)} alone cannot be asked for: the arithmetic family draws "
            "each step's operation from +, -, x and / at every level"
        )
    if family == "countdown" and 0 < len(operations) < len(_OPERATION_KINDS):
        notes.append(
            f"{' and '.join(repr(word) for word in operations)} alone cannot be asked for: every countdown puzzle "
            "allows +, -, x and /"
        )
    if family == "countdown" and re.search(r"\bletters?\b", text):
        notes.append("countdown here is the numbers round only: there is no letters round")
    if family == "arithmetic" and (kind := _UNKNOWNS.search(text)):
        notes.append(
            f"'{kind.group(0)}' cannot be asked for: the arithmetic family poses word problems whose answer is a "
            "whole number found by + - x /, with no unknown to solve for"
        )
    if family == "tool_use" and (dropped := _TOOL_DROPPED.search(text)):
        notes.append(
            f"'{dropped.group(0)}' cannot be asked for: every tool_use episode offers lookup, calculator and note "
            "tools, and the reward asks for the total to be noted"
        )
    if family == "word" and (named := _named_word(text)):
        notes.append(
            f"the word family asks for a different word in each prompt (8 train words, 16 other held-out words): the "
            f"model learns to say the word it is asked for, '{named}' among others, not '{named}' alone"
        )
    if family in ("arithmetic", "countdown") and (kind := _NOT_INTEGERS.search(text)):
        notes.append(
            f"'{kind.group(0)}' cannot be asked for: the numbers and the answer of every {family} problem are "
            "positive whole numbers; the generated problems are posed as they are"
        )
    if family == "werewolves" and _VARIANT.search(text):
        notes.append(
            "One Night Ultimate Werewolf is played as the built-in game: 9 players, as many nights and days as it "
            "takes (there is no one-night variant)"
        )
    if family == "countdown" and any(len(re.findall(r"\d+", m.group(0))) >= 3 for m in LISTED_NUMBERS.finditer(text)):
        notes.append(
            "the puzzle the sentence spells out is not trained itself: countdown generates its own puzzles, at the "
            "level its numbers and target come closest to"
        )
    if family == "countdown" and (fixed := _FIXED_TARGET.search(text)):
        notes.append(
            f"a target fixed at {fixed.group(1) or fixed.group(2)} cannot be asked for: each puzzle's target is drawn "
            "from the level's range"
        )
    if family == "countdown" and _GAME_OF_24.search(text):
        notes.append(
            "the game of 24 is played as countdown: each puzzle's target is drawn from the level's range, "
            "not fixed at 24"
        )
    elsewhere = _NOT_THE_SHOP.search(text)
    if family == "tool_use" and (elsewhere or not _SHOPPING.search(text)):
        other = _OTHER_TOOL.search(text)
        notes.append(
            "tool use is trained on the tool_use family's one task: total a shopping list with its three tools "
            "(lookup a price, calculator, write a note)"
            + (f"; its lookup knows the shop's prices, not '{elsewhere.group(0)}'" if elsewhere else "")
            + (f"; '{other.group(0)}' is not among them" if other else "")
        )
    return notes


def _named_word(text: str) -> str | None:
    """The one word a word-family sentence names ("say the word banana", 'always say "ok"'), if any."""
    for match in _NAMED_WORD.finditer(text):
        word = next(w for w in match.group("word", "word2", "said", "quoted", "bare", "greeted") if w)
        if word not in _NOT_A_NAMED_WORD:
            return str(word)
    return None


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
    if reading.level_word is not None:
        level = _LEVEL_OF_WORD[reading.level_word](top)
        assumptions.append(f"'{reading.level_phrase}' read as difficulty {level} of 1-{top}")
        return level
    assumptions.append(f"no difficulty given: level 1 of 1-{top} (the easiest, where a small model starts to learn)")
    return 1


def _ignored_cues(reading: Reading, family: str, assumptions: list[str]) -> None:
    _note_ignored(level_from_cues(family, reading.cues).ignored, family, assumptions)


def _tool_turns(reading: Reading, difficulty: int, assumptions: list[str]) -> dict[str, Any]:
    """`max_turns` from "at most 6 turns", with a note when it is fewer than a list of the level needs."""
    cue = next((c for c in reading.cues if c.kind == "turns" and c.value >= 1), None)
    if cue is None:
        return {}
    level = TOOL_LEVELS[difficulty]
    short = "" if cue.value >= level.turns else f" (fewer than the {level.turns} a list of {level.items} items takes)"
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
    elif reading.steps is not None:
        steps = reading.steps
        if reading.steps_note is not None:
            assumptions.append(reading.steps_note)
    elif reading.epochs is not None and reading.epochs > 0:
        steps = reading.epochs
        assumptions.append(
            f"'{reading.epochs} epochs' read as {steps} training steps: a vibe budget counts updates (each on a few "
            "train items), not passes over the train split"
        )
    elif reading.quick:
        steps = QUICK_STEPS
        assumptions.append(f"a quick run asked for: {QUICK_STEPS} training steps")
    else:
        steps = default
        assumptions.append(f"no step count given: {default} training steps (the family's default)")
    if minutes is None:
        minutes = reading.minutes
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


def _refusal(sentence: str, reading: Reading, reason: str) -> PlanRefused:
    understood = f" (understood: {', '.join(reading.understood)})" if reading.understood else ""
    return PlanRefused(
        f"cannot plan {sentence.strip()!r}: {reason}{understood}. Without an LLM, vibe maps a sentence onto a "
        f"built-in task family: {family_list()}. Rephrase it around one of these (e.g. {_EXAMPLES}), or "
        f"{HOW_TO_CONFIGURE}, to have a new task generated."
    )
