"""The tool-use reward: what the policy is trained to maximise, from the episode's final state.

`score(item, outcome)`, where `item` is one dataset item's `data` (question, prices, order, total)
and `outcome` describes the finished episode: `{"final_reply": str | None, "notes": [str],
"looked_up": [str]}` (the agent's last reply, the notes it saved, the items it looked up). Partial
credit, at most 1.0:
- 0.4 when the last integer of the last note is the total;
- 0.4 when the final reply's `Answer: <integer>` is the total;
- 0.2 x the share of the asked-for items whose price was looked up;
and 0 for an episode that gave no final answer (`final_reply` None: partial credit is for finished work).
Pure: no I/O, no clock, no randomness.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from agentjet.tasks.answers import find_answer, parse_int_answer

NOTE_CREDIT, ANSWER_CREDIT, LOOKUP_CREDIT = 0.4, 0.4, 0.2
_INTEGER = re.compile(r"-?[0-9]+", re.ASCII)


def score(item: Mapping[str, Any], outcome: Mapping[str, Any]) -> float:
    if outcome.get("final_reply") is None:
        return 0.0
    total = int(item["total"])
    asked = {str(name) for name in item["order"]}
    notes = [str(note) for note in outcome.get("notes") or []]
    note_numbers = _INTEGER.findall(notes[-1]) if notes else []
    note = NOTE_CREDIT if note_numbers and int(note_numbers[-1]) == total else 0.0
    answer_text = find_answer(str(outcome.get("final_reply") or ""))
    given = parse_int_answer(answer_text) if answer_text is not None else None
    answer = ANSWER_CREDIT if given == total else 0.0
    looked_up = {str(name) for name in outcome.get("looked_up") or []}
    lookups = LOOKUP_CREDIT * len(asked & looked_up) / len(asked)
    return round(note + answer + lookups, 6)
