"""The tool environment (pure, deterministic, never raising on model input) and ToolUse's items and reward."""

from __future__ import annotations

import json
import re

import pytest

from agentjet.tasks.tool_env import MAX_NOTES, TOOLS, ToolEnv
from agentjet.tasks.tool_use import LEVELS, ToolUse, _answer_reply, tool_use_reward, worked_example


def _env() -> ToolEnv:
    return ToolEnv(prices={"apple": 3, "pen": 4, "lemon": 7})


def test_lookup_finds_prices_and_records_them() -> None:
    env = _env()
    assert env.call("lookup", json.dumps({"item": "Apple"})) == "apple: 3 dollars each"
    assert env.call("lookup", json.dumps({"item": " pens "})) == "pen: 4 dollars each"  # plural, spaces
    assert env.call("lookup", json.dumps({"item": "car"})).startswith("error: no price for 'car'; known items: apple")
    assert env.looked_up == ["apple", "pen"]
    assert env.calls == 3


def test_calculator_is_exact_and_safe() -> None:
    env = _env()
    assert env.call("calculator", '{"expression": "2 * 3 + 3 * 4"}') == "18"
    assert env.call("calculator", '{"expression": "-7 / 2"}') == "-3.5"
    assert env.call("calculator", '{"expression": "9 ** 9 ** 9"}').startswith("error: Pow is not allowed")
    assert env.call("calculator", '{"expression": "open(\'/etc/passwd\')"}').startswith("error:")
    assert env.call("calculator", '{"expression": "1 / 0"}') == "error: division by zero"


def test_notes_pad_keeps_order_and_a_cap() -> None:
    env = _env()
    assert env.call("read_notes", "{}") == "(no notes)"
    assert env.call("write_note", '{"text": "total 18"}') == "saved note 1"
    assert env.call("write_note", '{"text": 18}') == "saved note 2"  # a bare number is a note too
    assert env.call("read_notes", "") == "total 18\n18"
    for _ in range(MAX_NOTES):
        env.call("write_note", '{"text": "x"}')
    assert len(env.notes) == MAX_NOTES
    assert env.call("write_note", '{"text": "y"}').startswith("error: the notes pad is full")


@pytest.mark.parametrize(
    ("name", "arguments", "error"),
    [
        ("lookup", "not json", "arguments must be a JSON object"),
        ("lookup", "[1, 2]", "arguments must be a JSON object"),
        ("lookup", '{"thing": "apple"}', "lookup needs"),
        ("calculator", '{"expression": 5}', "calculator needs"),
        ("write_note", '{"text": null}', "write_note needs"),
        ("rm_rf", "{}", "unknown tool 'rm_rf'"),
    ],
)
def test_bad_calls_come_back_as_errors(name: str, arguments: str, error: str) -> None:
    env = _env()
    assert error in env.call(name, arguments)
    assert env.notes == [] and env.looked_up == []


def test_tool_schemas_are_openai_functions() -> None:
    assert [t["function"]["name"] for t in TOOLS] == ["lookup", "calculator", "write_note", "read_notes"]
    assert all(t["type"] == "function" and t["function"]["parameters"]["type"] == "object" for t in TOOLS)


@pytest.mark.parametrize("difficulty", sorted(LEVELS))
def test_items_are_consistent_and_shaped_by_difficulty(difficulty: int) -> None:
    level = LEVELS[difficulty]
    items = ToolUse(difficulty=difficulty).items("train", count=20, seed=4)
    assert items == ToolUse(difficulty=difficulty).items("train", count=20, seed=4)
    for item in items:
        prices, order = item.data["prices"], item.data["order"]
        assert len(order) == level.items and len(prices) == level.items + level.distractors
        assert set(order) <= set(prices)
        assert item.data["total"] == sum(prices[name] * qty for name, qty in order.items())
        assert all(1 <= qty <= level.max_quantity for qty in order.values())
        assert all(name in item.data["question"] for name in order)


ORDER, TOTAL = {"apple": 2, "pen": 3}, 18


def _played(notes: list[str], looked_up: list[str]) -> ToolEnv:
    return ToolEnv(prices={"apple": 3, "pen": 4, "lemon": 7}, notes=notes, looked_up=looked_up)


@pytest.mark.parametrize(
    ("notes", "looked_up", "reply", "reward"),
    [
        (["total: 18"], ["apple", "pen"], "Answer: 18", 1.0),
        (["apple 2 x 3, pen 3 x 4, total 18"], ["pen", "apple", "lemon"], "**Answer:** 18 dollars", 1.0),
        (["18"], ["apple", "pen"], "The total is 18.", 0.6),  # no Answer line
        ([], ["apple", "pen"], "Answer: 18", 0.6),  # nothing written
        (["18", "oops 17"], ["apple", "pen"], "Answer: 17", 0.2),  # the last note counts
        ([], ["apple"], "Answer: 18 Answer: 17", 0.1),  # hedging, half the lookups
        ([], [], "Answer: 18", 0.4),  # a lucky guess still only gets the answer's part
        ([], [], None, 0.0),  # ran out of turns
        (["total: 18"], ["apple", "pen"], None, 0.0),  # all done but the answer: no final answer, no credit
        ([], ["apple", "pen"], None, 0.0),  # looked up until the turns ran out
        ([], ["apple", "pen"], "", 0.2),  # an empty final reply is an answer (a wrong one)
        (["٩"], [], "Answer: ١٨", 0.0),  # unicode digits
    ],
)
def test_reward_from_final_state(notes: list[str], looked_up: list[str], reply: str | None, reward: float) -> None:
    parts = tool_use_reward(_played(notes, looked_up), reply, ORDER, TOTAL)
    assert parts["reward"] == pytest.approx(reward)
    assert parts["reward"] == pytest.approx(parts["note"] + parts["answer"] + parts["lookups"])


@pytest.mark.parametrize("items", [1, 2, 4])
@pytest.mark.parametrize("tool_choice", ["auto", "required"])
def test_the_worked_episode_shows_what_the_environment_answers(tool_choice: str, items: int) -> None:
    """Each example call's result is what ToolEnv gives for it, the example earns the full reward, lists of one item
    get an example of one item (several: of two), and the example ends as `tool_choice` ends episodes."""
    messages = worked_example(tool_choice, items)
    question = messages[0]["content"]
    order = {name: int(qty) for qty, name in re.findall(r"([0-9]+) ([a-z]+?)s?\b(?= and|\?)", question)}
    assert len(order) == min(items, 2)
    env = ToolEnv(prices={"candle": 4, "ruler": 3})
    calls = [m["tool_calls"][0] for m in messages if m.get("tool_calls")]
    results = [m["content"] for m in messages if m["role"] == "tool"]
    for call, result in zip(calls, results, strict=True):
        if call["function"]["name"] != "answer":
            assert env.call(call["function"]["name"], call["function"]["arguments"]) == result
    total = sum(env.prices[name] * qty for name, qty in order.items())
    assert tool_use_reward(env, f"Answer: {total}", order, total)["reward"] == pytest.approx(1.0)
    assert sorted(env.looked_up) == sorted(order)
    if tool_choice == "auto":
        assert messages[-1]["content"] == f"Answer: {total}"
    else:
        assert calls[-1]["function"] == {"name": "answer", "arguments": json.dumps({"total": total})}


def test_a_list_of_one_item_is_asked_without_a_dangling_and() -> None:
    (item,) = ToolUse(difficulty=1).items("eval", count=1, seed=2)
    ((name, qty),) = item.data["order"].items()
    assert item.data["question"] == f"What is the total cost of {qty} {name}{'s' if qty > 1 else ''}?"


@pytest.mark.parametrize(
    ("arguments", "reply"),
    [
        ('{"total": 18}', "Answer: 18"),
        ('{"total": "18"}', "Answer: 18"),
        ('{"total": 18.5}', "Answer: 18.5"),
        ("{}", None),
        ('{"total": null}', None),
        ('{"total": [18]}', None),
        ('{"total": true}', None),
        ("[18]", None),
        ("not json", None),
        ("", None),
    ],
)
def test_the_answer_tool_gives_the_final_reply(arguments: str, reply: str | None) -> None:
    assert _answer_reply(arguments) == reply


@pytest.mark.parametrize(
    ("kwargs", "message"), [({"tool_choice": "any"}, "tool_choice must be"), ({"shots": 2}, "shots must be")]
)
def test_bad_tool_use_params_are_refused(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        ToolUse(**kwargs)  # type: ignore[arg-type]
