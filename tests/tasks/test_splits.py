"""Train and eval never share an item, for any family and any seeds."""

from __future__ import annotations

import pytest

from agentjet.tasks.arithmetic import Arithmetic
from agentjet.tasks.base import TaskFamily
from agentjet.tasks.countdown import Countdown
from agentjet.tasks.splits import Draft, draw_items, split_of
from agentjet.tasks.tool_use import ToolUse

FAMILIES: list[TaskFamily] = [Countdown(difficulty=1), Arithmetic(difficulty=1), ToolUse(difficulty=1)]


def _content(data: object) -> str:
    return repr(sorted(dict(data).items()))  # type: ignore[call-overload]


@pytest.mark.parametrize("family", FAMILIES, ids=lambda f: f.name)
def test_train_and_eval_never_overlap(family: TaskFamily) -> None:
    train = [i for seed in range(3) for i in family.items("train", count=60, seed=seed)]
    evals = [i for seed in range(3) for i in family.items("eval", count=30, seed=seed)]
    assert {i.task_id for i in train}.isdisjoint(i.task_id for i in evals)
    assert {_content(i.data) for i in train}.isdisjoint(_content(i.data) for i in evals)
    assert isinstance(family, TaskFamily)
    assert list(family.servers) == ["policy"]


def test_split_of_is_a_fixed_cut_of_the_key_space() -> None:
    keys = [f"k{i}" for i in range(2000)]
    share = sum(split_of(k) == "eval" for k in keys) / len(keys)
    assert 0.15 < share < 0.25
    assert [split_of(k) for k in keys] == [split_of(k) for k in keys]


def test_draw_items_says_when_the_space_is_too_small() -> None:
    with pytest.raises(ValueError, match="distinct train items"):
        draw_items("tiny-space", "train", count=5, seed=0, draw=lambda rng: Draft(f"k{rng.randint(0, 2)}", {}))
    with pytest.raises(ValueError, match="split"):
        draw_items("s", "test", count=1, seed=0, draw=lambda rng: Draft("k", {}))  # type: ignore[arg-type]
    assert draw_items("s", "train", count=0, seed=0, draw=lambda rng: Draft("k", {})) == []
