"""The constructor checks the built-in families share (`tasks/base.py`): a difficulty that names a level, max_tokens."""

from __future__ import annotations

import pytest

from agentjet.tasks.arithmetic import Arithmetic
from agentjet.tasks.base import check_level, check_max_tokens
from agentjet.tasks.countdown import Countdown
from agentjet.tasks.tool_use import ToolUse


def test_a_difficulty_must_name_a_level() -> None:
    assert check_level(2, {1: "easy", 2: "hard"}) == 2
    with pytest.raises(ValueError, match=r"difficulty must be one of \[1, 2\], got 3"):
        check_level(3, {1: "easy", 2: "hard"})


def test_max_tokens_must_be_at_least_one() -> None:
    assert check_max_tokens(1) == 1
    with pytest.raises(ValueError, match="max_tokens must be >= 1, got 0"):
        check_max_tokens(0)


@pytest.mark.parametrize("family", [Arithmetic, Countdown, ToolUse])
def test_the_families_refuse_a_bad_difficulty_before_anything_else(family: type) -> None:
    with pytest.raises(ValueError, match="difficulty must be one of"):
        family(difficulty=9, max_tokens=0)
    assert family(difficulty=2).difficulty == 2
