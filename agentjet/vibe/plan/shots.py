"""The worked examples a sentence asks for before each problem: "zero-shot", "2-shot", "no examples in the prompt".

Pure. `shots_said(text)` reads the lowercased sentence (number words already digits: "one-shot" is "1-shot") and
gives what it says, or None; `plan_shots` maps that onto the `shots` setting of the families that show worked
examples first (countdown and arithmetic, up to as many as the task has written) and says so in an assumption.
A count of examples without a word of the prompt ("train on 200 examples") is a dataset's size, not shots.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from agentjet.tasks import arithmetic, countdown, tool_use
from agentjet.vibe.plan.numbers import as_written

__all__ = ["SHOT_FAMILIES", "Shots", "plan_shots", "shots_said"]

SHOT_FAMILIES: dict[str, int] = {
    "countdown": len(countdown.EXAMPLES),
    "arithmetic": len(arithmetic.EXAMPLES),
    "tool_use": tool_use.MAX_SHOTS,  # one worked episode
}
_EXAMPLE = r"(?:worked\s+|solved\s+|in-context\s+|demo\s+|example\s+)?(?:examples?|demonstrations?|demos?|exemplars?)"
_NONE = re.compile(  # "no examples in the prompt", "without few-shot examples", "zero-shot"
    rf"\b(?:no|without|0)\s+(?:any\s+)?(?:few[\s-]?shot\s+)?{_EXAMPLE}\b(?!\s+of\b)|"
    r"\b(?:no|without)\s+(?:few[\s-]?shot|shots|prompting examples)\b|\b0[\s-]*shots?\b"
)
_COUNT = re.compile(  # "2-shot", "shots=2", "with 2 worked examples", "1 example in the prompt"
    r"\b(\d+)[\s-]*shots?\b|\bshots?\s*[:=]\s*(\d+)\b|"
    r"\b(\d+)\s+(?:worked|solved|in-context|demo)\s+(?:examples?|demonstrations?)\b|"
    r"\b(\d+)\s+(?:examples?|demonstrations?|exemplars?)\s+(?:in the prompt|in each prompt|first|up front|upfront|"
    r"before each|before every|shown first)\b|"
    r"\b(?:an?|with a)\s+(worked|solved)\s+example\b"
)
_FEW = re.compile(r"\b(?:few|many)[\s-]?shot\b|\bwith\s+(?:worked|solved)\s+examples\b")


@dataclass(frozen=True)
class Shots:
    """What the sentence said: `count` worked examples (None: "few-shot", as many as there are), in `words`."""

    count: int | None
    words: str


def shots_said(text: str, written: str = "") -> Shots | None:
    """The worked examples `text` asks for, or None when it says nothing of them; with `written` (the sentence
    before its number words became digits) the words are quoted as written ("zero-shot", not "0-shot")."""
    if found := _NONE.search(text):
        count: int | None = 0
    elif found := _COUNT.search(text):
        value = next(group for group in found.groups() if group is not None)
        count = int(value) if value.isdigit() else 1
    elif found := _FEW.search(text):
        count = None
    else:
        return None
    return Shots(count, as_written(found.group(0), written) if written else found.group(0))


def plan_shots(family: str, said: Shots | None, assumptions: list[str]) -> dict[str, int]:
    """The `shots` setting for `family` from what was said ({} when nothing was, or the family shows no examples)."""
    if said is None or family == "werewolves":  # "the hunter's 2 shots" are no prompt's examples
        return {}
    most = SHOT_FAMILIES.get(family)
    if most is None:
        assumptions.append(f"'{said.words}' ignored: the {family} family shows no worked examples in its prompts")
        return {}
    if said.count is None:
        assumptions.append(f"'{said.words}' -> shots={most}: every worked example the {family} task has")
        return {"shots": most}
    if said.count > most:
        examples = "1 worked example" if most == 1 else f"{most} worked examples"
        assumptions.append(f"'{said.words}': the {family} task has {examples}, so shots={most}")
        return {"shots": most}
    what = {0: "no worked example before the problem", 1: "1 worked example first"}.get(
        said.count, f"{said.count} worked examples first"
    )
    assumptions.append(f"'{said.words}' -> shots={said.count}: {what}")
    return {"shots": said.count}
