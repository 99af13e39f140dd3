"""One episode of each family against a live server whose model is scripted: the expected reward,
and the calls the server recorded (sampling seed from the item, tools, turns)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from agentjet.core.backends.fakes import ScriptedBackend
from agentjet.core.testing import RunningServer
from agentjet.tasks.arithmetic import Arithmetic
from agentjet.tasks.countdown import Countdown
from agentjet.tasks.frameworks import FRAMEWORKS
from agentjet.tasks.tool_use import ToolUse
from tests.tasks.episodes import play

Serve = Callable[..., RunningServer]


@pytest.fixture
def serve(live_server: Callable[..., RunningServer], scripted_backend: Callable[..., ScriptedBackend]) -> Serve:
    """`serve(script, **backend_kwargs)` -> a live server whose model says what the script says."""
    return lambda script, **kwargs: live_server(scripted_backend(script, **kwargs))


@pytest.mark.parametrize(
    ("answer", "reward"), [("Answer: {solution}", 1.0), ("Answer: {a} + {b}", 0.1), ("no idea", 0.0)]
)
def test_countdown_episode(serve: Serve, answer: str, reward: float) -> None:
    item = Countdown(difficulty=2).items("eval", count=1, seed=0)[0]
    numbers = item.data["numbers"]
    reply = "Let me think.\n" + answer.format(solution=item.data["solution"], a=numbers[0], b=numbers[1])
    outcome, record = play(serve([reply]).url, Countdown(difficulty=2), item)
    if reward == 0.1:  # an honest wrong try: 0.1 plus 0.2 x how close it came to the target
        target = item.data["target"]
        total = numbers[0] + numbers[1]
        reward = 1.0 if total == target else round(0.1 + 0.2 * max(0.0, 1 - abs(total - target) / target), 4)
    assert outcome.rewards["policy"] == reward
    (call,) = record["calls"]
    assert call["completion_text"] == reply
    assert call["sampling"]["seed"] == item.seed
    assert call["sampling"]["max_tokens"] == 128
    assert f"make {item.data['target']}" in call["messages"][-1]["content"]
    assert call["messages"] == [dict(m) for m in Countdown(difficulty=2).request(item).messages]
    assert [m["role"] for m in call["messages"]] == ["user", "assistant", "user"]  # one worked example first


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_arithmetic_episode_in_every_framework(serve: Serve, framework: str) -> None:
    family = Arithmetic(difficulty=3, framework=framework, temperature=0.7, max_tokens=40)
    item = family.items("train", count=1, seed=11)[0]
    reply = f"Step by step it is {item.data['answer']}.\nAnswer: {item.data['answer']}"
    outcome, record = play(serve([reply]).url, family, item)
    assert outcome.rewards["policy"] == 1.0
    assert outcome.metadata["given"] == item.data["answer"]
    (call,) = record["calls"]
    # the same turns, one worked example first; each framework sends them in its own shape (AgentScope as
    # content parts, AgentScope and AutoGen with a `name`), which the server renders to the same prompt
    assert [(m["role"], _text(m["content"])) for m in call["messages"]] == [
        (m["role"], m["content"]) for m in family.request(item).messages
    ]
    assert [m["role"] for m in call["messages"]] == ["user", "assistant", "user"]
    assert (call["sampling"]["seed"], call["sampling"]["temperature"], call["sampling"]["max_tokens"]) == (
        item.seed,
        0.7,
        40,
    )


def _text(content: str | list[dict[str, Any]]) -> str:
    return content if isinstance(content, str) else "".join(part["text"] for part in content)


def _tool_call(name: str, **arguments: Any) -> str:
    return "<tool_call>" + json.dumps({"name": name, "arguments": arguments}) + "</tool_call>"


def test_tool_use_episode_solves_the_task_in_four_turns(serve: Serve) -> None:
    family = ToolUse(difficulty=3)
    item = family.items("eval", count=1, seed=0)[0]
    order, total = item.data["order"], item.data["total"]
    script = [
        "".join(_tool_call("lookup", item=name) for name in order),
        _tool_call("calculator", expression=" + ".join(f"{q} * {item.data['prices'][n]}" for n, q in order.items())),
        _tool_call("write_note", text=f"total: {total}"),
        f"The total is {total} dollars.\nAnswer: {total}",
    ]
    outcome, record = play(serve(script).url, family, item)
    assert outcome.rewards["policy"] == 1.0
    assert outcome.metadata["notes"] == [f"total: {total}"]
    assert outcome.metadata["looked_up"] == list(order)
    assert outcome.metadata["turns"] == 4
    calls = record["calls"]
    assert [c["sampling"]["seed"] for c in calls] == [item.seed + turn for turn in range(4)]
    assert all(c["tool_format"] == "fallback" and c["tools"] for c in calls)
    assert [len(c["tool_calls"] or []) for c in calls] == [len(order), 1, 1, 0]
    assert f"<tool_response>\n{total}\n</tool_response>" in calls[2]["prompt_text"]  # the calculator's result


def test_tool_use_episode_with_a_model_that_never_stops_calling_tools(serve: Serve) -> None:
    family = ToolUse(difficulty=2, max_turns=3)
    item = family.items("train", count=1, seed=0)[0]
    first = next(iter(item.data["order"]))
    outcome, record = play(serve([_tool_call("lookup", item=first)]).url, family, item)
    assert outcome.rewards["policy"] == 0.0  # one of two items looked up, but no final answer: no credit
    assert outcome.metadata["final_reply"] is None
    assert len(record["calls"]) == 3


def test_tool_use_episode_that_outgrows_the_context_is_scored_not_aborted(serve: Serve) -> None:
    family = ToolUse(difficulty=2, max_tokens=64)
    item = family.items("train", count=1, seed=1)[0]
    script = ["Let me think. " + _tool_call("write_note", text=str(item.data["total"]))]
    # the prompt grows ~61 tokens a turn from ~406: the 6th call (of 7 allowed) no longer fits 720
    outcome, record = play(serve(script, max_context=720).url, family, item)
    assert outcome.metadata["final_reply"] is None
    assert outcome.metadata["turns"] == 5 < family.max_turns
    assert len(record["calls"]) == 5
    assert outcome.metadata["notes"][-1] == str(item.data["total"])  # the note it kept writing is right,
    assert outcome.rewards["policy"] == 0.0  # but an episode without a final answer earns nothing
