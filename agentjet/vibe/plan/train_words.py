"""Run settings a sentence states in words: "a learning rate of 1e-4", "groups of 16", "LoRA rank 8", how
many held-out items to measure on ("evaluate on 32 games"), the time limit ("half an hour", "for 2 days") and the
training steps ("10-15 steps": 15, said; "3 epochs"), a held-out round between ("evaluate every 5 steps") and the
items' seed ("seed 42").

Pure. Each training setting is the TrainConfig key it sets, the value and the words it came from, so the planner
can put it over the family's measured recipe and say so; `blanked` takes them out of the text before numeric
difficulty cues are read (the 16 of "groups of 16" or "eval on 16 items" is no count of anything in the puzzle).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from agentjet.vibe.plan.numbers import PROBLEM_NOUNS, STEPS_OF_A_PROBLEM, STEPS_OF_THE_SKILL

__all__ = [
    "BATCH_SIZE", "CONTEXT", "EPISODES_PER_STEP", "MAX_TOKENS", "OVERNIGHT", "TEMPERATURE", "EvalCount", "TrainSetting",
    "blanked", "impossible_budget", "read_epochs", "read_eval_count", "read_eval_every", "read_minutes", "read_seed",
    "read_steps", "read_steps_note", "read_train_settings",
]  # fmt: skip

EPISODES_PER_STEP = "episodes per step"  # not a TrainConfig key: the planner splits it into groups x tasks
BATCH_SIZE = "batch size"  # no TrainConfig key: a step's batch is groups x tasks; the planner says so
TEMPERATURE = "temperature"  # a family's sampling temperature is its recipe's (a task param); the planner says so
MAX_TOKENS = "max tokens"  # so is the length of a reply
CONTEXT = "context"  # and the model's context window, the model's own
_NUMBER = r"(\d+(?:\.\d+)?(?:e-?\d+)?)"
_IS = r"\s*(?:of|=|:|at|is|to|set to)?\s*"
_SETTINGS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("optim.lr", re.compile(
        rf"\b(?:learning[ -]rate|lr)\)?{_IS}{_NUMBER}|"
        rf"(?<![\w.-]){_NUMBER}\s+(?:as\s+(?:the\s+|a\s+)?|for\s+(?:the\s+)?)?(?:learning[ -]rate|lr)\b"
        r"(?!\s*[=:])"  # "3e-4 lr", not the 40 of "eval_items=40 lr=5e-5"
    )),
    ("grpo.group_size", re.compile(
        rf"\b(?:(?:grpo )?group[ -]size{_IS}|(?:grpo )?groups? of\s+|group\s*[=:]?\s*){_NUMBER}\b|"  # "group 4"
        r"\b(?:rollouts?|samples?|completions?|generations?)\s+n\s*=\s*(\d+)\b|"  # "rollouts n=16"
        r"\b(\d+)\s+(?:rollouts?|samples?|completions?|generations?|responses?|answers?|attempts?|tries|games?|"
        r"episodes?)\s+(?:per|a|each|for each)\s+"
        r"(?:group|prompt|puzzle|problem|task|deal|list|word|question|item)\b"
    )),
    ("lora.rank", re.compile(
        rf"\b(?:lora[ -])?rank{_IS}{_NUMBER}\b|\brank[ -]{_NUMBER}[ -](?:lora|adapters?)\b|"
        rf"\blora[ -]r\s*[=:]?\s*{_NUMBER}\b"
    )),
    ("lora.alpha", re.compile(rf"\b(?:lora[ -])?alpha{_IS}{_NUMBER}\b|\balpha[ -]{_NUMBER}\b")),
    ("optim.weight_decay", re.compile(rf"\b(?:weight[ -]decay|wd){_IS}{_NUMBER}")),
    ("grpo.kl_coef", re.compile(  # "kl 0.01", "a kl penalty of 0.05", "kl_coef=0.1"
        rf"\b(?:grpo\.)?kl(?:[ _-]?(?:coef(?:ficient)?|penalty|weight|beta|term))?{_IS}{_NUMBER}"
    )),
    (TEMPERATURE, re.compile(rf"\b(?:sampling\s+)?temp(?:erature)?{_IS}-?{_NUMBER}")),
    (MAX_TOKENS, re.compile(  # "max 1000 tokens per reply": a task parameter, as the temperature is
        r"\b(?:(?:max(?:imum)?|at most|up to|limit(?: of)?)\s+)?(\d+)\s+(?:new\s+)?tokens?\b(?:\s+(?:per|an?|each)\s+"
        r"(?:reply|answer|response|completion|call|turn|message|generation))?|\bmax[_ ](?:new[_ ])?tokens{_IS}(\d+)"
    )),
    ("collect.tasks", re.compile(  # task groups an update: "2 deals per step", "4 problems an update"
        r"\b(\d+)\s+(?:[\w-]+\s+)?(?:deals?|tasks?|problems?|puzzles?|prompts?|lists?|words?|questions?)\s+"
        r"(?:per|an|each|a|every)\s+(?:training\s+)?(?:step|update|iteration)\b"
    )),
    (BATCH_SIZE, re.compile(rf"\b(?:batch[ -]size|batches of|mini-?batch(?: size)?|bs){_IS}{_NUMBER}\b")),
    (CONTEXT, re.compile(rf"\b(?:ctx|context(?:[ _-](?:length|len|window|size))?|max[_ ]seq(?:uence)?[_ ]len(?:gth)?)"
                         rf"{_IS}{_NUMBER}\b")),
    (EPISODES_PER_STEP, re.compile(  # episodes an update, groups x tasks: "16 games per step", "each step with 4 games"
        r"\b(?:each|every|a|per)\s+(?:training\s+)?step\s+(?:with|of|has|plays)\s+(\d+)\s+(?:games?|episodes?)\b|"
        r"\b(\d+)\s+(?:[\w-]+\s+)?(?:games?|episodes?|rollouts?|samples?|completions?)\s+"
        r"(?:per|an|each|a|every)\s+(?:training\s+)?(?:step|update|iteration)\b"
    )),
)


_FRACTIONS = ("optim.lr", "grpo.kl_coef", "optim.weight_decay")  # the settings whose values are no counts


@dataclass(frozen=True)
class TrainSetting:
    """One setting as the sentence wrote it: the TrainConfig key (dotted), its value, the words."""

    key: str
    value: float | int
    words: str
    span: tuple[int, int]
    others: tuple[str, ...] = ()  # the same setting said again with another value ("lr 1e-4 and then lr 3e-4")


def read_train_settings(text: str) -> tuple[TrainSetting, ...]:
    """The settings `text` (lowercase, number words as digits) states, first mention of each key."""
    found: dict[str, TrainSetting] = {}
    for key, pattern in _SETTINGS:
        matches = list(pattern.finditer(text))
        if not matches or key in found:
            continue
        values = [_value(key, m) for m in matches]
        said = [re.sub(r"\s*[()]\s*", " ", m.group(0)).strip() for m in matches]  # "(learning rate) 1e-4"
        others = tuple(dict.fromkeys(w for w, v in zip(said, values, strict=True) if v != values[0]))
        found[key] = TrainSetting(key, values[0], said[0], matches[0].span(), others)
    return tuple(found.values())


def _value(key: str, match: re.Match[str]) -> float | int:
    raw = next(group for group in match.groups() if group is not None)
    return float(raw) if key in _FRACTIONS else int(float(raw))


_THINGS = (  # "24 shopping lists", "8 receipts"
    r"(?:(?:shopping|grocery|math|word|countdown|werewol(?:f|ves))\s+)?(?:games?|deals?|items?|problems?|puzzles?|"
    r"questions?|words?|lists?|episodes?|examples?|tasks?|prompts?|samples?|cases?|receipts?|baskets?|carts?|orders?|"
    r"bills?)"
)
_NOT_PER_STEP = r"(?!\s+(?:per|an|a|each|every)\s+(?:training\s+)?(?:step|update|iteration)\b)"  # "2 puzzles per step"
_HELD_SET = r"(?:held[- ]out|eval(?:uation)?|test|validation)\s+(?:set|split)"
_ABOUT = r"(?:(?:maybe|about|around|roughly|approximately|some|like|only|just|~)\s*)?"
_EVAL_COUNT = re.compile(
    rf"\b(?:eval(?:uate|uated|uating|uation)?|test(?:ed|ing)?|measure[sd]?|measuring|score[sd]?)\s+"
    rf"(?:it\s+|them\s+|(?:the|my|our)\s+[\w-]+\s+)?(?:on|over|with|against|using)\s+{_ABOUT}(\d+)\s+"
    rf"(?:(?:held[- ]out|new|unseen|fresh|test|separate|different)\s+)?{_THINGS}\b{_NOT_PER_STEP}|"
    rf"\b(?:eval(?:uate|uated|uating|uation)?|test(?:ed|ing)?)\s+(?:it\s+)?(?:on|over)\s+{_ABOUT}(\d+)(?=\s*(?:$|[,.;!?]))|"
    r"\b(?:eval(?:uation)?|held[- ]out)(?:[-_ ]items)?\s*[:=]?\s*(\d+)"
    r"(?=\s*(?:$|[,.;!?\u2013\u2014]|-\s|\s+[a-z_-]+\s*[=:]|\s+--))|"  # "eval 8", "eval_items=40 lr=..."
    rf"\b(?:eval(?:uation)?|held[- ]out|test)\s+{_THINGS}\s*[:=]?\s*(\d+)(?=\s*(?:$|[,.;!?]))|"  # "eval items 20"
    rf"\bheld[- ]out\s+{_ABOUT}(\d+)\s+{_THINGS}\b|"  # "held out 12 lists"
    rf"\b(\d+)\s+(?:held[- ]out|eval(?:uation)?|test)\s+{_THINGS}\b|"
    rf"\b(\d+)\s+(?:held[- ]out\s+)?{_THINGS}\s+(?:of\s+|for\s+)?(?:eval(?:uation)?|testing|held[- ]out)\b|"
    r"\b(\d+)\s+held[- ]out(?=\s*(?:$|[,.;!?]))|"  # "20 held-out"
    r"\b(\d+)\s+evals?(?=\s*(?:$|[,.;!?]))|"  # "25 evals"
    rf"\b(?:hold(?:ing)?|keep(?:ing)?|set(?:ting)?)\s+(?:back|out|aside)\s+{_ABOUT}(\d+)"
    rf"(?:\s+{_THINGS}\b|(?=\s*(?:$|[,.;!?])))|"
    rf"\bkeep(?:ing)?\s+{_ABOUT}(\d+)\s+(?:{_THINGS}\s+)?(?:for|as)\s+(?:the\s+)?"
    r"(?:eval(?:uation)?|test(?:ing)?|held[- ]out|validation)\b|"
    rf"\beval(?:uate|uation)?\s*:?\s+{_ABOUT}(\d+)\s+(?:(?:held[- ]out|new|unseen|fresh|test)\s+)?{_THINGS}\b"
    rf"{_NOT_PER_STEP}|"
    rf"\b{_HELD_SET}\s+(?:of|with)\s+{_ABOUT}(\d+)\b|"  # "a held-out set of 128 problems"
    rf"\b(?:(?:try|tries|trying|check|checks|checking)\s+(?:it|them)|(?:how\s+)?(?:it|they)\s+(?:does|do|did))\s+"
    rf"(?:\w+\s+){{0,3}}?on\s+{_ABOUT}(\d+)\s+"
    rf"(?:[\w-]+\s+)?{_THINGS}\b{_NOT_PER_STEP}|"  # "check it afterwards on 30 bills it has never seen"
    rf"\b(\d+)[\s-]+(?:{_THINGS}[\s-]+)?{_HELD_SET}\b"  # "a 100-item test set"
)


@dataclass(frozen=True)
class EvalCount:
    """How many held-out items the sentence asks to measure on, and its words."""

    items: int
    words: str
    span: tuple[int, int]


def read_eval_count(text: str) -> EvalCount | None:
    """"evaluate on 32 games", "64 held-out problems" -> 32, 64; None when the sentence does not say."""
    match = _EVAL_COUNT.search(text)
    if match is None:
        return None
    return EvalCount(int(next(g for g in match.groups() if g is not None)), match.group(0), match.span())


def blanked(text: str, spans: list[tuple[int, int]]) -> str:
    """`text` with each span blanked (same length, so positions hold)."""
    for start, end in spans:
        text = text[:start] + " " * (end - start) + text[end:]
    return text


_HOURS_AND_MINUTES = re.compile(
    r"\b(\d+(?:\.\d+)?)\s*(?:hours?|hrs?|h)\s*,?\s*(?:and\s+)?(\d+)\s*(?:minutes?|mins?|m)\b"
)
_HOURS_AND_A_HALF = re.compile(
    r"\b(?:(\d+)|an?)\s+hours?\s+and\s+(?:a\s+)?half\b|\b(?:(\d+)|an?)\s+and\s+a\s+half\s+hours?\b"
)
_HALF_HOUR = re.compile(r"\b(?:half an hour|(?:a\s+)?half[- ]hour)\b")
_MINUTES = re.compile(  # "20 minutes", "5-minute", "1h30"
    r"\b(\d+(?:\.\d+)?)(?:-|\s*)(minutes?|mins?|hours?|hrs?|h|seconds?|secs?)(?:(\d+)(?:m|mins?)?)?\b"
)
_SPAN = r"(\d+(?:\.\d+)?|an?)\s+(?:whole\s+|full\s+)?(days?|weeks?)"
_DAYS = re.compile(  # a budget in days: "for 2 days", "a 3-day run", "a week of training"; not "survive 3 days"
    rf"(?<!survive )(?<!alive )(?<!last )(?<!lasts )\b(?:for|over|spend|spending|budget of|run of|up to|at most)\s+"
    rf"(?:about\s+|around\s+|roughly\s+)?{_SPAN}\b|"
    r"\b(\d+(?:\.\d+)?)[\s-]+(day|week)\s+(?:run|budget|training|job|limit)\b|"
    rf"\b{_SPAN}\s+of\s+(?:training|compute|gpu|cpu|time|rl)\b|"
    rf"\bbudget\s*(?:of\s+|:\s*|=\s*)?{_SPAN}\b|(?:^|[,;.]\s*){_SPAN}(?=\s*(?:$|[,.;!?]))"  # "countdown, 2 days"
)
_QUARTERS = re.compile(r"\b(\d+|an?)\s+quarters?\s+of\s+an\s+hour\b|\b(\d+|an)\s+hours?\s+and\s+a\s+quarter\b")
OVERNIGHT = re.compile(r"\bovernight\b|\bover the weekend\b")
_MINUTES_IN = {"day": 24 * 60.0, "week": 7 * 24 * 60.0}


def read_minutes(text: str) -> float | None:
    """The run's time limit in minutes, if the sentence states one."""
    if said := re.search(r"\b(?:minutes|mins|budget|time[_ ]limit)\s*[:=]\s*(\d+(?:\.\d+)?)\b(?!\s*[a-z])", text):
        return float(said.group(1))  # "minutes: 20", "budget=30"
    if match := _QUARTERS.search(text):  # "3 quarters of an hour", "a quarter of an hour", "an hour and a quarter"
        if hours := match.group(2):
            return (1.0 if hours == "an" else float(hours)) * 60.0 + 15.0
        return (1.0 if match.group(1) in ("a", "an") else float(match.group(1))) * 15.0
    if match := _HOURS_AND_MINUTES.search(text):  # "1 hour 15 minutes", "2 hours and 30 minutes", "1h 30m"
        return float(match.group(1)) * 60.0 + float(match.group(2))
    if match := _HOURS_AND_A_HALF.search(text):  # "an hour and a half", "1 and a half hours"
        return (float(match.group(1) or match.group(2) or 1) + 0.5) * 60.0
    if _HALF_HOUR.search(text):
        return 30.0
    if match := re.search(r"\b(?:an?|1) (minute|hour) or (\d+)\b", text):  # "a minute or two": the longer
        return float(match.group(2)) * (60.0 if match.group(1) == "hour" else 1.0)
    if match := _MINUTES.search(text):
        value, unit = float(match.group(1)), match.group(2)
        if unit.startswith("h"):
            return value * 60.0 + (float(match.group(3)) if match.group(3) else 0.0)
        return value / 60.0 if unit.startswith("s") else value
    if re.search(r"\b(?:an|1) hour\b", text):
        return 60.0
    if night := OVERNIGHT.search(text):  # a night's run: 8 hours; a weekend's: 48 (the planner says how it read it)
        return (48 if "weekend" in night.group(0) else 8) * 60.0
    if match := _DAYS.search(text):
        count, unit = next((g, u) for g, u in zip(match.groups()[::2], match.groups()[1::2], strict=True) if u)
        return (1.0 if count in ("a", "an") else float(count)) * _MINUTES_IN[unit.rstrip("s")]
    return None


# ---- the training steps asked for ---------------------------------------------------------------------------

_NOT_BUDGET = rf"(?!\s+{PROBLEM_NOUNS}|\s+each\b|\s+(?:per|a|an|in each|for each)\s+{PROBLEM_NOUNS})"
_STEPS = re.compile(
    r"(?<![\d.=:])(?<!not )(?<!no )(?<!every )\b(\d+)(?:\s+|-)?(?:more\s+)?"  # not "not 5 steps", "level=5 steps=60"
    r"(?:training\s+|rl\s+|grpo\s+|gradient\s+|optimi[sz]er\s+|update\s+)?"
    rf"(?:steps?|iterations?|iters?|updates?)\b{_NOT_BUDGET}|"
    r"\b(\d+)\s+rounds? of (?:[\w-]+\s+)?(?:training|rl|grpo|updates?)\b|"
    r"\b(\d+)\s+(?:practice|training)\s+(?:rounds?|sessions?)\b|"  # "fifty practice rounds"
    r"\b(?:steps?|training steps|updates|iterations)\s*[:=]\s*(\d+)\b|--steps\s+(\d+)\b|"  # "steps: 10", "--steps 10"
    r"\b(?:steps?|training steps)\s+(\d+)(?=\s*(?:$|[,.;!?]))|"  # "..., step 30"
    r"\b(?:steps|updates|iterations)\s*(?:,\s*|\(\s*)?(?:like|say|maybe|about|around|roughly|e\.g\.)?\s*(\d+)"
    r"(?=\s*(?:\)|$|[,.;!?]))"  # "fewer steps, like 2", "more steps (20)"
)
_STEP_RANGE = re.compile(
    rf"\bbetween\s+(\d+)\s+and\s+(\d+)\s+(?:training\s+)?(?:steps?|iterations?|iters?|updates?)\b{_NOT_BUDGET}|"
    rf"\b(\d+)(?:-|\s*(?:–|to|or)\s*)(\d+)[\s-]+(?:training\s+)?(?:steps?|iterations?|iters?|updates?)\b{_NOT_BUDGET}"
)
_EPOCHS = re.compile(r"\b(\d+)[\s-]*(?:training\s+)?epochs?\b|\bepochs?\s*[:=]?\s*(\d+)\b")


def _step_counts(text: str) -> list[tuple[int, re.Match[str]]]:
    """Every training-step count said, in order; not the steps one problem takes ("problems that need 3 steps")."""
    of_a_problem = [m.span(1) for m in STEPS_OF_A_PROBLEM.finditer(text)]
    of_a_problem += [m.span(m.lastindex or 0) for m in STEPS_OF_THE_SKILL.finditer(text)]
    return [
        (int(next(group for group in match.groups() if group is not None)), match)
        for match in _STEPS.finditer(text)
        if not any(start <= match.start() < end for start, end in of_a_problem)
    ]


def _step_range(text: str) -> re.Match[str] | None:
    """The first range of steps said, low to high ("10-15 steps"; not "held out 10 - 4 steps")."""
    of_a_problem = [m.span() for m in STEPS_OF_A_PROBLEM.finditer(text)]  # "problems that take 2 or 3 steps"
    of_a_problem += [m.span() for m in STEPS_OF_THE_SKILL.finditer(text)]
    for ranged in _STEP_RANGE.finditer(text):
        if any(start <= ranged.start() < end for start, end in of_a_problem):
            continue
        if int(ranged.group(1) or ranged.group(3)) < int(ranged.group(2) or ranged.group(4)):
            return ranged
    return None


def read_steps(text: str) -> int | None:
    """The training steps asked for: the top of a range ("10-15 steps"), else the first count said."""
    if ranged := _step_range(text):
        return max(int(ranged.group(1) or ranged.group(3)), int(ranged.group(2) or ranged.group(4)))
    counts = _step_counts(text)
    return counts[0][0] if counts else None


_THEN = re.compile(r"\b(?:then|after that|afterwards|followed by|and after)\b")


def read_steps_note(text: str) -> str | None:
    """The assumption that says which count was taken, when the sentence gives a range or several."""
    if ranged := _step_range(text):
        return f"'{ranged.group(0)}': {read_steps(text)} steps, the top of the range"
    counts = _step_counts(text)
    values = list(dict.fromkeys(value for value, _ in counts))
    if len(counts) > 1 and _THEN.search(text, counts[0][1].end(), counts[1][1].start()):  # "... 3 steps, then ..."
        return (f"'{text[counts[0][1].start() : counts[1][1].end()]}': a run trains every role it trains in each "
                f"step, not one phase after another, so the first count, {values[0]} steps, is the run's")
    if len(values) > 1:
        return f"several step counts given ({', '.join(map(str, values))}): the first, {values[0]}, is used"
    return None


def read_epochs(text: str) -> int | None:
    """"3 epochs" -> 3 (no pass over a dataset in vibe: the planner reads it as steps and says so)."""
    return int(epochs.group(1) or epochs.group(2)) if (epochs := _EPOCHS.search(text)) else None


# ---- the held-out rounds between, and the items' seed --------------------------------------------------------

_EVAL_WORD = (
    r"(?:eval(?:uate[sd]?|uating|uations?|s)?|held[- ]out\s+(?:rounds?|evals?)|test(?:s|ed|ing)?|measur(?:e|es|ed|ing)|"
    r"validat(?:e|es|ed|ing|ion))"
)
_EVERY_STEPS = re.compile(  # "evaluate every 5 steps", "an eval round after each update", "eval every other step"
    rf"\b{_EVAL_WORD}\b(?:\s+(?!every\b|each\b)[\w-]+){{0,5}}?\s+(?:after\s+|at\s+)?(?:each|every)\s+"
    r"(?:(?P<n>\d+)\s*|(?P<other>other|second)\s+)?(?:training\s+)?(?:steps?|updates?|iterations?)\b"
    r"(?!\s+(?:of|in)\b)|"  # not "test every step of the pipeline"
    r"\beval(?:uation)?[_ -]every\s*[=:]?\s*(?P<said>\d+)\b"  # "eval_every=5"
)
_SEED = re.compile(r"\b(?:random\s+|dataset\s+|data\s+)?seed\s*(?:of|=|:|is|to)?\s*(\d+)\b|\bseeded\s+with\s+(\d+)\b")


def read_eval_every(text: str) -> tuple[int, str] | None:
    """The steps between held-out rounds: "evaluate every 5 steps" -> (5, its words), "after each update" -> 1,
    "every other step" -> 2; None if unsaid."""
    if (found := _EVERY_STEPS.search(text)) is None:
        return None
    every = found.group("n") or found.group("said") or ("2" if found.group("other") else "1")
    return int(every), found.group(0)


def read_seed(text: str) -> tuple[int, str] | None:
    """The items' seed: "with seed 42" -> (42, its words); None if unsaid."""
    if (found := _SEED.search(text)) is None:
        return None
    return int(found.group(1) or found.group(2)), found.group(0)


# ---- numbers no run can have ---------------------------------------------------------------------------------

_NEGATIVE = re.compile(  # "-5 minutes", "minus 3 steps"; not a dash between clauses ("easy - 10 steps")
    r"(?:(?<![\w.])-(?=\d)|\bminus\s+)\d+(?:\.\d+)?\s*(?:minutes?|mins?|hours?|hrs?|steps?|iterations?|updates?)\b"
)
_FRACTION_OF_A_STEP = re.compile(r"\b\d+\.\d+\s+(?:training\s+)?(?:steps?|iterations?|updates?)\b")  # "1.5 steps"
_NEGATIVE_LEVEL = re.compile(r"\b(?:level|difficulty)(?:\s+|\s*[=:]\s*)(?:-|minus\s)\s*\d+")  # not "level-2"


def impossible_budget(text: str) -> str | None:
    """Why a number the sentence gives cannot be run ("-5 minutes", "1.5 steps", "level -2"), or None."""
    if found := _NEGATIVE.search(text):
        return f"'{found.group(0)}' is negative: say a step count or a time limit above 0"
    if found := _FRACTION_OF_A_STEP.search(text):
        return f"'{found.group(0)}' is no whole number of steps: a step is one update"
    if found := _NEGATIVE_LEVEL.search(text):
        return f"'{found.group(0)}' is no level: levels start at 1"
    return None
