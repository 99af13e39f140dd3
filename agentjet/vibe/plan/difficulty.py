"""A sentence's numeric difficulty cues -> a family's difficulty level, with the words that say how.

Pure. Each family's knobs are read from the family's own `LEVELS` (agentjet/tasks), so a level
always means what the task generates: countdown's count of given numbers and target range,
arithmetic's operations and amount size, tool use's items, quantities and prices. A cue the family has no
knob for ("5x5" for countdown, "12 players" anywhere) is named as ignored, never dropped silently.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from agentjet.tasks import arithmetic, countdown, tool_use
from agentjet.vibe.plan.numbers import Cue

__all__ = ["CueLevel", "level_from_cues"]

_NUMBER_NOUNS = frozenset({"number", "numbers", "operand", "operands", "term", "terms", "card", "cards"})
_ITEM_NOUNS = frozenset({"item", "items", "things", "products", "goods", "ingredients"})
_RANGE_KINDS = frozenset({"digits", "at_most", "at_least"})
_ANSWER_KINDS = frozenset({"target", "total"})  # bounds of a countdown target or an answer: no shop price


@dataclass(frozen=True)
class CueLevel:
    """The level the cues ask for (None when none fits the family), why, and the cues the family ignores."""

    level: int | None
    reasons: tuple[str, ...]  # "'6 numbers' -> level 4 (6 numbers, targets 100-999)"
    ignored: tuple[str, ...]  # "5x5"


def _span(cue: Cue) -> tuple[int, int]:
    """The range of magnitudes a range cue asks for: 3-digit -> 100-999, up to 50 -> 1-50, over 100 -> 100-1000."""
    if cue.kind == "digits":
        return (1 if cue.value <= 1 else 10 ** (cue.value - 1), 10**cue.value - 1)
    if cue.kind in ("at_most", "total"):
        return (1, cue.value)
    return (cue.value, cue.second if cue.second is not None else cue.value * 10)


def _closest(want: tuple[int, int], ranges: Mapping[int, tuple[int, int]]) -> tuple[int, str]:
    """The level whose range overlaps `want` most (intersection over union; ties go to the easier level); where no
    level's range reaches `want` (4-digit amounts, the top level's go to 500), the nearest end, and a note saying so."""

    def overlap(level: int) -> float:
        low, high = ranges[level]
        inter = max(0, min(high, want[1]) - max(low, want[0]) + 1)
        return inter / (max(high, want[1]) - min(low, want[0]) + 1)

    if any(overlap(level) > 0 for level in ranges):
        level = max(sorted(ranges), key=lambda level: (overlap(level), -level))
        past = want[1] > max(high for _, high in ranges.values()) and level == max(ranges)
        return level, ": the most there is" if past else ""
    if want[0] > max(high for _, high in ranges.values()):
        return max(ranges), ": the most there is"
    return min(ranges), ": the least there is"


def _nearest(count: int, counts: Mapping[int, int]) -> int:
    """The level whose count is nearest `count` (ties go to the easier level)."""
    return min(sorted(counts), key=lambda level: (abs(counts[level] - count), level))


def _beyond(wanted: int, counts: Mapping[int, int]) -> str:
    """': the most there is' when a count asked for is past every level's (5 items where level 3 has 4)."""
    return ": the most there is" if wanted > max(counts.values()) else ""


def _countdown(cue: Cue) -> tuple[int, str] | None:
    levels = countdown.LEVELS
    more = ""
    if cue.kind == "count" and cue.noun in _NUMBER_NOUNS or cue.kind in ("operations", "listed"):
        wanted = cue.value if cue.kind != "operations" else cue.value + 1
        counts = {k: v.numbers for k, v in levels.items()}
        level, more = _nearest(wanted, counts), _beyond(wanted, counts)
    elif cue.kind in _RANGE_KINDS | _ANSWER_KINDS:
        level, more = _closest(_span(cue), {k: (v.target_min, v.target_max) for k, v in levels.items()})
    else:
        return None
    found = levels[level]
    return level, f"{found.numbers} given numbers, targets {found.target_min}-{found.target_max}{more}"


def _arithmetic(cue: Cue) -> tuple[int, str] | None:
    levels = arithmetic.LEVELS
    more = ""
    if cue.kind == "operations" or cue.kind == "count" and cue.noun in _NUMBER_NOUNS:
        wanted = cue.value if cue.kind == "operations" else max(cue.value - 1, 1)
        counts = {k: ops for k, (ops, _) in levels.items()}
        level, more = _nearest(wanted, counts), _beyond(wanted, counts)
    elif cue.kind in _RANGE_KINDS | _ANSWER_KINDS or cue.kind in ("grid", "size"):
        want = (1, max(cue.value, cue.second or 0)) if cue.kind == "grid" else _span(cue)
        level, more = _closest(want, {k: (1, size) for k, (_, size) in levels.items()})
    else:
        return None
    ops, size = levels[level]
    return level, f"{ops} operation{'s' if ops > 1 else ''}, amounts up to {size}{more}"


def _tool_use(cue: Cue) -> tuple[int, str] | None:
    levels = tool_use.LEVELS
    more = ""
    if cue.kind == "count" and cue.noun in _ITEM_NOUNS:
        counts = {k: v.items for k, v in levels.items()}
        level, more = _nearest(cue.value, counts), _beyond(cue.value, counts)
    elif cue.kind == "quantity":
        counts = {k: v.max_quantity for k, v in levels.items()}
        level, more = _nearest(cue.value, counts), _beyond(cue.value, counts)
    elif cue.kind in _RANGE_KINDS:
        level, more = _closest(_span(cue), {k: (1, v.max_price) for k, v in levels.items()})
    else:
        return None
    found = levels[level]
    return level, f"{found.items_said}, quantities up to {found.max_quantity}, prices up to {found.max_price}{more}"


_KNOBS: dict[str, Callable[[Cue], tuple[int, str] | None]] = {
    "countdown": _countdown,
    "arithmetic": _arithmetic,
    "tool_use": _tool_use,
}


def level_from_cues(family: str, cues: Sequence[Cue]) -> CueLevel:
    """The hardest level any cue asks for in `family`; werewolves' rounds and players and tool use's turns are left
    to the planner."""
    knob = _KNOBS.get(family)
    levels, reasons, ignored = [], [], []
    for cue in cues:
        if family == "werewolves" and cue.kind in ("rounds", "players") or family == "tool_use" and cue.kind == "turns":
            continue  # not a level: the planner sets these params itself
        found = knob(cue) if knob is not None else None
        if found is None:
            ignored.append(cue.words)
            continue
        levels.append(found[0])
        reasons.append(f"'{cue.words}' -> level {found[0]} ({found[1]})")
    return CueLevel(max(levels) if levels else None, tuple(reasons), tuple(ignored))
