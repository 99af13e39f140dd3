"""The countdown reward: what the policy is trained to maximise.

`score(item, reply)`, where `item` is one dataset item's `data` (numbers, target) and `reply` the
model's whole reply:
- 1.0 when the reply's `Answer: <expression>` uses only the given numbers (each at most as often
  as given) and equals the target;
- 0.1 + 0.2 x closeness (1 - |value - target| / target, at least 0) when it is such an expression
  with another value (right format, wrong result);
- 0.1 x the share of its numbers that were given when it uses numbers it was not given (or uses
  one too often): always below an honest wrong try, but a step towards one;
- 0.0 otherwise: no answer, several different answers, no given number, `**`, division by zero, ...
The expression is read by agentjet's safe evaluator (exact fractions, no `eval`). Pure: no I/O,
no clock, no randomness.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agentjet.tasks.countdown import countdown_reward


def score(item: Mapping[str, Any], reply: str) -> float:
    value, _expression = countdown_reward(reply, [int(n) for n in item["numbers"]], int(item["target"]))
    return value
