"""Run settings a sentence states in words: "a learning rate of 1e-4", "groups of 16", "LoRA rank 8", and how
many held-out items to measure on ("evaluate on 32 games").

Pure. Each training setting is the TrainConfig key it sets, the value and the words it came from, so the planner
can put it over the family's measured recipe and say so; `blanked` takes them out of the text before numeric
difficulty cues are read (the 16 of "groups of 16" or "eval on 16 items" is no count of anything in the puzzle).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = [
    "BATCH_SIZE", "EPISODES_PER_STEP", "EvalCount", "TrainSetting", "blanked", "read_eval_count", "read_train_settings"
]

EPISODES_PER_STEP = "episodes per step"  # not a TrainConfig key: the planner splits it into groups x tasks
BATCH_SIZE = "batch size"  # no TrainConfig key: a step's batch is groups x tasks; the planner says so
_NUMBER = r"(\d+(?:\.\d+)?(?:e-?\d+)?)"
_IS = r"\s*(?:of|=|:|at|is|to|set to)?\s*"
_SETTINGS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("optim.lr", re.compile(
        rf"\b(?:learning[ -]rate|lr){_IS}{_NUMBER}|"
        rf"(?<![\w.-]){_NUMBER}\s+(?:as\s+(?:the\s+|a\s+)?|for\s+(?:the\s+)?)?(?:learning[ -]rate|lr)\b"  # "3e-4 lr"
    )),
    ("grpo.group_size", re.compile(
        rf"\b(?:(?:grpo )?group[ -]size{_IS}|(?:grpo )?groups of\s+){_NUMBER}\b|"
        r"\b(\d+)\s+(?:rollouts?|samples?|completions?|attempts?|tries|games?|episodes?)\s+(?:per|a|each|for each)\s+"
        r"(?:group|prompt|puzzle|problem|task|deal|list|word|question|item)\b"
    )),
    ("lora.rank", re.compile(rf"\b(?:lora[ -])?rank{_IS}{_NUMBER}\b|\brank[ -]{_NUMBER}[ -](?:lora|adapters?)\b")),
    ("collect.tasks", re.compile(  # task groups an update: "2 deals per step", "4 problems an update"
        r"\b(\d+)\s+(?:[\w-]+\s+)?(?:deals?|tasks?|problems?|puzzles?|prompts?|lists?|words?|questions?)\s+"
        r"(?:per|an|each|a|every)\s+(?:training\s+)?(?:step|update|iteration)\b"
    )),
    (BATCH_SIZE, re.compile(rf"\b(?:batch[ -]size|batches of|mini-?batch(?: size)?){_IS}{_NUMBER}\b")),
    (EPISODES_PER_STEP, re.compile(  # episodes an update, groups x tasks: "16 games per step"
        r"\b(\d+)\s+(?:games?|episodes?|rollouts?|samples?|completions?)\s+"
        r"(?:per|an|each|a|every)\s+(?:training\s+)?(?:step|update|iteration)\b"
    )),
)


@dataclass(frozen=True)
class TrainSetting:
    """One setting as the sentence wrote it: the TrainConfig key (dotted), its value, the words."""

    key: str
    value: float | int
    words: str
    span: tuple[int, int]


def read_train_settings(text: str) -> tuple[TrainSetting, ...]:
    """The settings `text` (lowercase, number words as digits) states, first mention of each key."""
    found: dict[str, TrainSetting] = {}
    for key, pattern in _SETTINGS:
        match = pattern.search(text)
        if match is None or key in found:
            continue
        raw = next(group for group in match.groups() if group is not None)
        value: float | int = float(raw) if key == "optim.lr" else int(float(raw))
        found[key] = TrainSetting(key, value, match.group(0).strip(), match.span())
    return tuple(found.values())


_THINGS = (
    r"(?:games?|deals?|items?|problems?|puzzles?|questions?|words?|lists?|episodes?|examples?|tasks?|prompts?|"
    r"samples?|cases?)"
)
_NOT_PER_STEP = r"(?!\s+(?:per|an|a|each|every)\s+(?:training\s+)?(?:step|update|iteration)\b)"  # "2 puzzles per step"
_ABOUT = r"(?:(?:maybe|about|around|roughly|approximately|some|like|~)\s*)?"
_EVAL_COUNT = re.compile(
    rf"\b(?:eval(?:uate|uated|uating|uation)?|test(?:ed|ing)?|measure[sd]?|measuring|score[sd]?)\s+"
    rf"(?:it\s+|them\s+|(?:the|my|our)\s+[\w-]+\s+)?(?:on|over|with|against|using)\s+{_ABOUT}(\d+)\s+"
    rf"(?:(?:held[- ]out|new|unseen|fresh|test)\s+)?{_THINGS}\b{_NOT_PER_STEP}|"
    rf"\b(?:eval(?:uate|uated|uating|uation)?|test(?:ed|ing)?)\s+(?:it\s+)?(?:on|over)\s+{_ABOUT}(\d+)(?=\s*(?:$|[,.;!?]))|"
    rf"\b(\d+)\s+(?:held[- ]out|eval(?:uation)?|test)\s+{_THINGS}\b|"
    rf"\b(\d+)\s+(?:held[- ]out\s+)?{_THINGS}\s+(?:of\s+|for\s+)?(?:eval(?:uation)?|testing|held[- ]out)\b|"
    r"\b(\d+)\s+held[- ]out(?=\s*(?:$|[,.;!?]))"  # "20 held-out"
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
