"""The first-word reward: what the policy is trained to maximise.

`score(item, reply)`, where `item` is one dataset item's `data` (the word) and `reply` the model's
whole reply: 1.0 when the reply's first word (letters only, any case) is the item's word, else
0.0. Pure: no I/O, no clock, no randomness.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agentjet.tasks.word import first_word_reward


def score(item: Mapping[str, Any], reply: str) -> float:
    return first_word_reward(reply, str(item["word"]))
