"""The words that set how the werewolves reward treats an invalid answer: "a per-episode penalty", "penalty weight 5",
"no penalty for invalid moves".

Pure: `penalty_params(text, assumptions)` reads the lowercased sentence and gives the game's `penalty`,
`penalty_weight` and `invalid_tolerance` it asks for over the recipe's (a per-action penalty of weight 3, measured
to learn), with an assumption that says what changed; {} when it says nothing of a penalty.
"""

from __future__ import annotations

import re
from typing import Any

from agentjet.tasks.werewolves.family import MAX_PENALTY_WEIGHT

__all__ = ["penalty_params"]

_PENALTY = r"(?:penalt(?:y|ies)|punishment)"
_OTHER = r"(?!(?:kl|length|repetition|entropy|format)\b)"  # "no KL penalty" is a training setting, not the game's
_NOT_AFTER = r"(?<!kl )(?<!kl-)(?<!kl_)(?<!length )(?<!repetition )(?<!entropy )(?<!format )"  # "kl penalty 0.01"
_NONE = re.compile(
    rf"\b(?:no|without|zero|0)\s+{_OTHER}(?:\w+\s+)?{_PENALTY}\b|\b(?:don'?t|do not|never)\s+penali[sz]e\b|"
    rf"\b{_PENALTY}\s*[:=]?\s*(?:off|none|disabled)\b"
)
_EPISODE = re.compile(
    rf"\b(?:per[- ]episode|per[- ]game|episode[- ]level|game[- ]level|whole[- ]game|episode|flat)\s+{_PENALTY}\b|"
    rf"\b{_PENALTY}\s+(?:once\s+)?(?:per|for each|each|every|a)\s+(?:episode|game)\b|\bpenalty\s*[:=]\s*episode\b"
)
_ACTION = re.compile(
    rf"\b(?:per[- ](?:action|move|answer|turn|decision)|graded)\s+{_PENALTY}\b|"
    rf"\b{_PENALTY}\s+(?:per|for each|for every|on each|on every)\s+(?:invalid\s+|illegal\s+|bad\s+|wrong\s+)?"
    r"(?:action|move|answer|turn|decision)s?\b|\bpenali[sz](?:e|ed|es)\s+per\s+(?:invalid\s+|illegal\s+)?"
    r"(?:action|move|answer)\b|\bpenalty\s*[:=]\s*per[_ ]action\b"
)
_WEIGHT = re.compile(
    rf"{_NOT_AFTER}\b(?:penalty[ _]weight|penalty)\s*(?:of|=|:|at|weight(?:ed)?(?: of)?)?\s*(\d+(?:\.\d+)?)\b(?!\s*%)|"
    r"\bpenali[sz]e\s+(?:invalid|illegal|bad|wrong)\s+(?:actions?|moves?|answers?)\s+(\d+(?:\.\d+)?)\s*x\b"
)


def penalty_params(text: str, assumptions: list[str]) -> dict[str, Any]:
    """The werewolves reward's penalty settings `text` asks for (over the recipe's), each said in `assumptions`."""
    if found := _NONE.search(text):
        assumptions.append(
            f"'{found.group(0)}': an invalid answer costs nothing itself (the game plays the default move and counts "
            "it invalid), over the recipe's penalty of 3 x the share of invalid answers, which kept the model's "
            "answers valid; without it they drifted to invalid answers in 3 vibe runs of 4 (docs/vibe.md)"
        )
        return {"penalty": "episode", "invalid_tolerance": 1.0}
    if found := _EPISODE.search(text):
        assumptions.append(
            f"'{found.group(0)}' -> penalty='episode': -0.1 for a game with any invalid answer, over the recipe's "
            "graded penalty of 3 x the share of invalid answers (measured to learn)"
        )
        return {"penalty": "episode"}
    weight = _WEIGHT.search(text)
    if weight is not None:
        said = float(next(group for group in weight.groups() if group is not None))
        value = min(said, MAX_PENALTY_WEIGHT)
        most = f" ({said:g} is past the game's most, {MAX_PENALTY_WEIGHT:g})" if value < said else ""
        assumptions.append(
            f"'{weight.group(0)}' -> penalty_weight={value:g}{most}: the reward is win/loss minus {value:g} x the "
            "share of invalid answers (the recipe's weight is 3)"
        )
        return {"penalty": "per_action", "penalty_weight": value}
    if found := _ACTION.search(text):
        assumptions.append(f"'{found.group(0)}': the recipe's own penalty, 3 x the share of invalid answers")
    return {}
