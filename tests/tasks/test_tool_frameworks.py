"""The tool-use agent through the openai SDK, AgentScope and AutoGen: the same tool turns, token for token.

A scripted backend plays a perfect shopper (lookups with a sentence beside them, then the
calculator, a note and the answer), so every turn carries tool calls or tool results through each
framework's own message types and back. For the same items and seeds the server must capture the
same prompt and completion tokens from all three, and each must earn the full reward: a framework
that dropped a tool result, a call id or the text said beside the calls would change the next
prompt's tokens or the final state.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from typing import Any

import pytest

from agentjet.core.backends.fakes import ScriptedBackend
from agentjet.core.testing import RunningServer
from agentjet.tasks.base import TaskItem
from agentjet.tasks.frameworks import TOOL_FRAMEWORKS
from agentjet.tasks.tool_use import ToolUse
from tests.tasks.episodes import play


def _calls(*calls: tuple[str, dict[str, Any]]) -> str:
    return "\n".join(f'<tool_call>{{"name": "{n}", "arguments": {json.dumps(a)}}}</tool_call>' for n, a in calls)


def shopper(items: list[TaskItem]) -> Callable[[str], str]:
    """The completion a perfect agent writes for a prompt: which step it is at is told by the tool results so far."""
    by_question = {str(item.data["question"]): item for item in items}

    def reply(prompt: str) -> str:
        question, item = next((question, item) for question, item in by_question.items() if question in prompt)
        order: Mapping[str, int] = item.data["order"]
        total = int(item.data["total"])
        prompt = prompt.split(question, 1)[1]  # this episode's turns (not a worked example's before it)
        results = prompt.count("<tool_response>\n")
        if results == 0:  # text beside the calls: the frameworks must send it back as the turn's content
            return "Let me look up the prices.\n" + _calls(*(("lookup", {"item": name}) for name in order))
        if results == len(order):
            prices = {name: int(p) for name, p in re.findall(r"(\w+): (\d+) dollars each", prompt)}
            expression = " + ".join(f"{qty} * {prices[name]}" for name, qty in order.items())
            return _calls(("calculator", {"expression": expression}))
        if results == len(order) + 1:
            return _calls(("write_note", {"text": f"total {total}"}))
        return f"The total is {total}.\nAnswer: {total}"

    return reply


def _tokens(record: dict[str, Any]) -> list[tuple[list[int], list[int]]]:
    return [(c["prompt_ids"], c["completion_ids"]) for c in record["calls"]]


def test_tool_turns_are_token_identical_across_tool_frameworks(
    live_server: Callable[..., RunningServer], scripted_backend: Callable[..., ScriptedBackend]
) -> None:
    items = ToolUse(difficulty=3).items("eval", count=2, seed=3)
    backend = scripted_backend(shopper(items))
    server = live_server(backend)
    runs: dict[str, list[tuple[float, list[tuple[list[int], list[int]]]]]] = {}
    for framework in TOOL_FRAMEWORKS:
        family = ToolUse(difficulty=3, framework=framework, max_tokens=200)
        runs[framework] = []
        for item in items:
            outcome, record = play(server.url, family, item)
            assert outcome.rewards["policy"] == pytest.approx(1.0), (framework, outcome.metadata)
            assert outcome.metadata["notes"] == [f"total {item.data['total']}"]
            # lookups, calculator, note, answer; each turn's seed is the item's plus the turn
            assert [c["sampling"]["seed"] for c in record["calls"]] == [item.seed + t for t in range(4)]
            runs[framework].append((outcome.rewards["policy"], _tokens(record)))

    reference = runs["openai"]
    assert "Let me look up the prices." in backend.prompts[1]  # the sentence went back as content
    for framework in TOOL_FRAMEWORKS[1:]:
        assert runs[framework] == reference, f"{framework} differs from the openai SDK"


@pytest.mark.parametrize("framework", ["langchain", "httpx", "nope"])
def test_tool_use_refuses_a_framework_without_tool_turns(framework: str) -> None:
    with pytest.raises(ValueError, match="framework must be one of openai, agentscope, autogen"):
        ToolUse(framework=framework)


def _without_opening(reply: Callable[[str], str]) -> Callable[[str], str]:
    """The same shopper when every turn opens a call: it writes only what follows the forced opening."""
    opening = '<tool_call>{"name": "'

    def continue_call(prompt: str) -> str:
        text = reply(prompt)
        if "Answer: " in text:  # the text answer becomes the answer tool's call
            text = _calls(("answer", {"total": int(text.rsplit("Answer: ", 1)[1])}))
        text = text[text.index("<tool_call>") :]  # no text beside a forced call
        assert prompt.endswith(opening) and text.startswith(opening)
        return text[len(opening) :]

    return continue_call


@pytest.mark.parametrize("framework", TOOL_FRAMEWORKS)
def test_required_tool_choice_ends_with_the_answer_tool_in_every_framework(
    live_server: Callable[..., RunningServer], scripted_backend: Callable[..., ScriptedBackend], framework: str
) -> None:
    items = ToolUse(difficulty=3).items("eval", count=1, seed=5)
    backend = scripted_backend(_without_opening(shopper(items)))
    server = live_server(backend)
    family = ToolUse(difficulty=3, framework=framework, max_tokens=200, tool_choice="required", shots=1)
    outcome, record = play(server.url, family, items[0])
    assert outcome.rewards["policy"] == pytest.approx(1.0), outcome.metadata
    assert outcome.metadata["final_reply"] == f"Answer: {items[0].data['total']}"
    assert [c["forced_text"] for c in record["calls"]] == ['<tool_call>{"name": "'] * 4
    assert all(c["sampling"]["tool_choice"] == "required" for c in record["calls"])
    first_prompt = record["calls"][0]["prompt_text"]
    assert '"name": "answer"' in first_prompt and "1 candle and 1 ruler" in first_prompt  # the tool, the example
