"""The werewolves reward: what each trained side is trained to maximise, from a finished game.

`score(item, outcome)`, where `item` is one dataset item's `data` (the deal) and `outcome` describes
the finished game from one trained side's seat: `{"winner": "wolves" | "village" | "draw", "side":
"wolves" | "village", "invalid": int, "actions": int}` (the side's action answers that were
unreadable or illegal, out of all it gave):
- 1.0 when the side won, 0.0 when it lost or the game hit the round cap (a draw is a loss for all);
- -0.1 when more than INVALID_TOLERANCE of its action answers were invalid (PENALTY "episode"), or,
  with PENALTY "per_action", win/loss minus PENALTY_WEIGHT x the invalid share (a graded signal for
  a model that rarely answers in format yet), divided by PENALTY_WEIGHT when that is above 1 so the
  reward stays in [-1, 1] (a won game with no invalid answer then pays 1 / PENALTY_WEIGHT; GRPO's
  advantages are scaled by the group's spread, so the division changes no update).
Whether the side won is reported apart (the game's `won` flag), so a success is a won game whatever
this reward pays. Pure: no I/O, no clock, no randomness.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agentjet.tasks.werewolves.family import side_reward
from agentjet.tasks.werewolves.state import Side

INVALID_TOLERANCE = 0.0  # vibe: params.invalid_tolerance
PENALTY = "episode"  # vibe: params.penalty
PENALTY_WEIGHT = 0.1  # vibe: params.penalty_weight


def score(item: Mapping[str, Any], outcome: Mapping[str, Any]) -> float:
    winner = None if outcome["winner"] == "draw" else Side(outcome["winner"])
    value = side_reward(
        winner,
        Side(outcome["side"]),
        invalid=int(outcome["invalid"]),
        actions=int(outcome["actions"]),
        invalid_tolerance=INVALID_TOLERANCE,
        penalty="per_action" if PENALTY == "per_action" else "episode",
        penalty_weight=float(PENALTY_WEIGHT),
    )
    weighted = PENALTY == "per_action" and float(PENALTY_WEIGHT) > 1.0
    return value / float(PENALTY_WEIGHT) if weighted else value
