"""Training settings a sentence states in words: "a learning rate of 1e-4", "groups of 16", "LoRA rank 8".

Pure. Each setting is the TrainConfig key it sets, the value and the words it came from, so the planner can put
it over the family's measured recipe and say so; `without_settings` blanks them out of the text before numeric
difficulty cues are read (the 16 of "groups of 16" is no count of anything in the puzzle).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["TrainSetting", "read_train_settings", "without_settings"]

_NUMBER = r"(\d+(?:\.\d+)?(?:e-?\d+)?)"
_IS = r"\s*(?:of|=|:|at|is|to|set to)?\s*"
_SETTINGS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("optim.lr", re.compile(rf"\b(?:learning[ -]rate|lr){_IS}{_NUMBER}")),
    ("grpo.group_size", re.compile(rf"\b(?:(?:grpo )?group[ -]size{_IS}|(?:grpo )?groups of\s+){_NUMBER}\b")),
    ("lora.rank", re.compile(rf"\b(?:lora[ -])?rank{_IS}{_NUMBER}\b|\brank[ -]{_NUMBER}[ -](?:lora|adapters?)\b")),
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


def without_settings(text: str, settings: tuple[TrainSetting, ...]) -> str:
    """`text` with each setting's words blanked (same length, so positions hold)."""
    for setting in settings:
        start, end = setting.span
        text = text[:start] + " " * (end - start) + text[end:]
    return text
