"""Arithmetic word problems: answers follow from the text, deterministic, shaped by difficulty; rewards."""

from __future__ import annotations

import re

import pytest

from agentjet.tasks.arithmetic import EXAMPLES, LEVELS, Arithmetic, arithmetic_reward
from agentjet.tasks.frameworks import FRAMEWORKS


def _replay(item_data: dict[str, object]) -> int:
    """The answer recomputed from the problem's start value and its recorded steps."""
    value = int(re.findall(r"[0-9]+", str(item_data["problem"]))[0])
    for step in item_data["steps"]:  # type: ignore[attr-defined]
        op, n = step[0], int(step[1:])
        value = {"+": value + n, "-": value - n, "*": value * n, "/": value // n}[op]
        assert value >= 1
    return value


@pytest.mark.parametrize("difficulty", sorted(LEVELS))
def test_answers_are_positive_integers_that_follow_from_the_steps(difficulty: int) -> None:
    operations, _ = LEVELS[difficulty]
    items = Arithmetic(difficulty=difficulty).items("train", count=40, seed=1)
    for item in items:
        data = dict(item.data)
        assert len(data["steps"]) == operations
        assert _replay(data) == data["answer"] >= 1
        assert str(data["problem"]).endswith("?")
    assert len({i.data["theme"] for i in items}) >= 4  # the templates are mixed


def test_division_steps_are_exact() -> None:
    for item in Arithmetic(difficulty=4).items("train", count=60, seed=2):
        value = int(re.findall(r"[0-9]+", str(item.data["problem"]))[0])
        for step in item.data["steps"]:
            n = int(step[1:])
            if step[0] == "/":
                assert value % n == 0
            value = {"+": value + n, "-": value - n, "*": value * n, "/": value // n}[step[0]]


def test_items_are_deterministic() -> None:
    assert Arithmetic().items("eval", count=8, seed=5) == Arithmetic(framework="httpx").items("eval", count=8, seed=5)
    assert Arithmetic().items("eval", count=8, seed=5) != Arithmetic().items("eval", count=8, seed=6)


def test_difficulty_changes_the_shape() -> None:
    lengths = {
        d: sum(len(str(i.data["problem"])) for i in Arithmetic(difficulty=d).items("train", count=30, seed=0))
        for d in LEVELS
    }
    assert lengths[1] < lengths[2] < lengths[3] < lengths[4] < lengths[5]
    biggest = {
        d: max(i.data["answer"] for i in Arithmetic(difficulty=d).items("train", count=30, seed=0)) for d in (1, 5)
    }
    assert biggest[1] < biggest[5]


@pytest.mark.parametrize(
    ("reply", "reward"),
    [
        ("7 + 5 = 12.\nAnswer: 12", 1.0),
        ("Answer: $12.", 1.0),
        ("**Answer:** 12 candies", 1.0),
        ("Answer: 13", 0.1),  # well-formed, wrong
        ("Answer: -12", 0.1),
        ("Answer: 1 Answer: 12", 0.0),  # hedging
        ("Answer: 12\nAnswer: 13", 0.0),
        ("Answer: 12 or 13", 0.0),
        ("Answer: １２", 0.0),  # fullwidth digits
        ("Answer: 1e1000000", 0.0),
        ("Answer: 10**1000000", 0.0),
        ("Answer: twelve", 0.0),
        ("The answer is 12", 0.0),  # no marker
    ],
)
def test_reward(reply: str, reward: float) -> None:
    assert arithmetic_reward(reply, 12)[0] == reward


def test_every_framework_is_accepted_and_others_are_not() -> None:
    assert [Arithmetic(framework=f).framework for f in FRAMEWORKS] == [
        "openai",
        "langchain",
        "langgraph",
        "httpx",
        "agentscope",
        "autogen",
    ]
    with pytest.raises(ValueError, match="openai, langchain, langgraph, httpx, agentscope, autogen; got 'crewai'"):
        Arithmetic(framework="crewai")
    with pytest.raises(ValueError, match="difficulty"):
        Arithmetic(difficulty=0)


def test_shots_put_worked_examples_first() -> None:
    item = Arithmetic().items("train", count=1, seed=0)[0]
    plain, shown = Arithmetic(shots=0).request(item), Arithmetic(shots=2).request(item)
    assert [m["role"] for m in plain.messages] == ["user"]
    assert [m["role"] for m in shown.messages] == ["user", "assistant", "user", "assistant", "user"]
    assert shown.messages[-1] == plain.messages[0]
    assert len(Arithmetic().request(item).messages) == 3  # one worked example by default
    assert [m["content"] for m in shown.messages[1::2]] == [worked for _, worked in EXAMPLES]
    for problem, worked in EXAMPLES:  # the examples earn full reward themselves
        assert arithmetic_reward(worked, int(worked.rsplit(" ", 1)[1]))[0] == 1.0
        assert problem.endswith("?")
    with pytest.raises(ValueError, match="shots"):
        Arithmetic(shots=3)
