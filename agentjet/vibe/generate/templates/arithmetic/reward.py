"""The arithmetic reward: what the policy is trained to maximise.

`score(item, reply)`, where `item` is one dataset item's `data` (problem, answer) and `reply` the
model's whole reply:
- 1.0 when the reply's `Answer: <integer>` is the item's answer;
- 0.1 when it is a well-formed integer answer that is wrong (right format, wrong result);
- 0.0 otherwise: no answer line, several different answers, a line with two numbers, an answer over
  200 characters, unicode digits, ...
The answer line is read by agentjet's robust reader (`agentjet.tasks.answers`). Pure: no I/O, no
clock, no randomness.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agentjet.tasks.arithmetic import arithmetic_reward


def score(item: Mapping[str, Any], reply: str) -> float:
    value, _given = arithmetic_reward(reply, int(item["answer"]))
    return value
