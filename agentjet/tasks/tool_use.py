"""`ToolUse`: a multi-turn shopping task over OpenAI `tools`, rewarded from the final state.

"What is the total cost of 2 apples and 3 pens?" Prices are only known through the `lookup`
tool (a seeded table that also lists items not asked about); the agent should compute the
total (`calculator`), save it (`write_note`) and answer `Answer: <total>`. The agent loop sends
OpenAI `tools` through `framework` (the `openai` SDK by default, AgentScope or AutoGen:
`frameworks.TOOL_FRAMEWORKS`), up to `max_turns` calls, each with `seed = item.seed + turn`;
tool calls run in the pure `ToolEnv` (`tool_env.py`). Reward, from the final state:
0.4 when the last integer of the last note is the total, 0.4 when the final answer is the
total, 0.2 x the share of the asked-for items that were looked up; 0 for an episode that
gives no final answer. Difficulty 1-4 sets how many items, their quantities and prices (`LEVELS`):
level 1 is one item in a quantity ("3 pens": a lookup and a product), where SmolLM2-135M starts from
some right totals; from level 2 the prices of several items must be summed.

`tool_choice="required"` makes every turn a tool call (OpenAI's `tool_choice`, which the server
honours by opening the call) and offers a fifth tool, `answer`, whose call ends the episode with
the final answer: the loop of tool-calling agents that always act through tools. `shots=1` puts
one worked episode of the level's shape before the question, one call a turn ("3 candles" at
level 1, "1 candle and 1 ruler" above). A small model
that never calls a tool on its own (SmolLM2-135M) writes calls, and copies the example's, with both.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from agentjet.tasks.answers import find_answer, parse_int_answer
from agentjet.tasks.base import POLICY, Endpoint, Outcome, Split, TaskItem, check_level
from agentjet.tasks.frameworks import TOOL_FRAMEWORKS, ChatRequest, check_framework, complete_with_tools
from agentjet.tasks.splits import Draft, draw_items
from agentjet.tasks.tool_env import ANSWER_TOOL, TOOLS, ToolEnv

__all__ = [
    "CATALOGUE",
    "LEVELS",
    "MAX_SHOTS",
    "SYSTEM",
    "SYSTEM_REQUIRED",
    "TOOL_CHOICES",
    "Level",
    "ToolUse",
    "tool_use_reward",
    "worked_example",
]

NOTE_CREDIT, ANSWER_CREDIT, LOOKUP_CREDIT = 0.4, 0.4, 0.2
CATALOGUE = ("apple", "banana", "pear", "lemon", "mango", "pen", "pencil", "notebook", "eraser", "ruler", "candle")
SYSTEM = (
    "You are a careful assistant with tools. Prices are only known through the lookup tool. "
    "Look up every price, compute the total with the calculator, save the total with write_note, "
    "then reply with a final line `Answer: <total>`."
)
SYSTEM_REQUIRED = (
    "You are a careful assistant with tools. Prices are only known through the lookup tool. "
    "Look up every price, compute the total with the calculator, save the total with write_note, "
    "then give the total with the answer tool."
)
TOOL_CHOICES = ("auto", "required")
MAX_SHOTS = 1  # one worked episode (of the list's shape)
_ANSWER = ANSWER_TOOL["function"]["name"]
# The worked episodes of `shots=1`, by the number of items a list has: the question, each call with the result
# the environment gives it, the total. A list of one item gets an example of one, so a small model copies the
# product it needs rather than a sum it does not
_EXAMPLES: Mapping[int, tuple[str, tuple[tuple[str, dict[str, Any], str], ...], int]] = {
    1: (
        "What is the total cost of 3 candles?",
        (
            ("lookup", {"item": "candle"}, "candle: 4 dollars each"),
            ("calculator", {"expression": "3 * 4"}, "12"),
            ("write_note", {"text": "total: 12"}, "saved note 1"),
        ),
        12,
    ),
    2: (
        "What is the total cost of 1 candle and 1 ruler?",
        (
            ("lookup", {"item": "candle"}, "candle: 4 dollars each"),
            ("lookup", {"item": "ruler"}, "ruler: 3 dollars each"),
            ("calculator", {"expression": "1 * 4 + 1 * 3"}, "7"),
            ("write_note", {"text": "total: 7"}, "saved note 1"),
        ),
        7,
    ),
}
_MAX_CALLS_PER_TURN = 8
_INTEGER = re.compile(r"-?[0-9]+", re.ASCII)


@dataclass(frozen=True)
class Level:
    items: int  # items in the question
    max_quantity: int
    max_price: int
    distractors: int = 3  # extra items in the price table

    @property
    def turns(self) -> int:
        """The default `max_turns`: a lookup and a note an item, the sum, the total's note and the answer."""
        return 2 * self.items + 3

    @property
    def items_said(self) -> str:
        """How many items a list holds, in words for a plan's assumptions: "1 item", "3 items"."""
        return f"{self.items} item{'s' if self.items > 1 else ''}"


LEVELS: Mapping[int, Level] = {
    1: Level(items=1, max_quantity=5, max_price=10),
    2: Level(items=2, max_quantity=1, max_price=10),
    3: Level(items=3, max_quantity=5, max_price=20),
    4: Level(items=4, max_quantity=9, max_price=50),
}


def _draw(rng: random.Random, level: Level) -> Draft:
    names = rng.sample(CATALOGUE, level.items + level.distractors)
    prices = {name: rng.randint(1, level.max_price) for name in sorted(names)}
    order = {name: rng.randint(1, level.max_quantity) for name in names[: level.items]}
    parts = [f"{qty} {name}{'s' if qty > 1 else ''}" for name, qty in order.items()]
    listed = f"{', '.join(parts[:-1])} and {parts[-1]}" if len(parts) > 1 else parts[0]
    question = f"What is the total cost of {listed}?"
    total = sum(prices[name] * qty for name, qty in order.items())
    key = f"tool_use|{sorted(prices.items())}|{sorted(order.items())}"
    return Draft(key, {"question": question, "prices": prices, "order": order, "total": total})


def worked_example(tool_choice: str, items: int = 2) -> list[dict[str, Any]]:
    """The messages of the worked episode (`shots=1`) for a list of `items` (one, or several: an example of two),
    one call a turn, ending as `tool_choice` makes episodes end."""
    question, example_calls, total = _EXAMPLES[min(items, 2)]
    calls = [*example_calls, (_ANSWER, {"total": total}, "done")] if tool_choice == "required" else example_calls
    messages: list[dict[str, Any]] = [{"role": "user", "content": question}]
    for number, (name, arguments, result) in enumerate(calls, 1):
        call = {
            "id": f"example_{number}",
            "type": "function",
            "function": {"name": name, "arguments": json.dumps(arguments)},
        }
        messages.append({"role": "assistant", "content": None, "tool_calls": [call]})
        messages.append({"role": "tool", "tool_call_id": call["id"], "content": result})
    if tool_choice == "auto":
        messages.append({"role": "assistant", "content": f"Answer: {total}"})
    return messages


def _answer_reply(arguments: str) -> str | None:
    """The final reply an `answer` call gives, as the text `Answer: <total>` (None when it names no total)."""
    try:
        total = json.loads(arguments or "{}").get("total")
    except (json.JSONDecodeError, AttributeError):
        return None
    return None if total is None or isinstance(total, bool | dict | list) else f"Answer: {total}"


def tool_use_reward(env: ToolEnv, final_reply: str | None, order: Mapping[str, int], total: int) -> dict[str, float]:
    """The reward's parts (`note`, `answer`, `lookups`) from the final state; `reward` is their sum.

    An episode that gives no final answer (`final_reply` None: out of turns, or a required call that
    never came) scores 0 whatever it did: partial credit is for finished work, so a policy cannot
    earn by looking prices up until the turns run out."""
    if final_reply is None:
        return {"note": 0.0, "answer": 0.0, "lookups": 0.0, "reward": 0.0}
    note_numbers = _INTEGER.findall(env.notes[-1]) if env.notes else []
    note = NOTE_CREDIT if note_numbers and int(note_numbers[-1]) == total else 0.0
    answer_text = find_answer(final_reply)
    given = parse_int_answer(answer_text) if answer_text is not None else None
    answer = ANSWER_CREDIT if given == total else 0.0
    lookups = LOOKUP_CREDIT * len(set(order) & set(env.looked_up)) / len(order)
    return {"note": note, "answer": answer, "lookups": lookups, "reward": round(note + answer + lookups, 6)}


class ToolUse:
    """The shopping-total task. Params: `difficulty` (1-3), `max_turns` (default 2 x items + 3),
    each call's `max_tokens`, `temperature`, the `framework` that sends the turns, `tool_choice`
    ("auto": the model may answer in text; "required": every turn calls a tool, `answer` ends it)
    and `shots` (0-1: the worked episode first)."""

    name = "tool_use"
    servers: Sequence[str] = (POLICY,)

    def __init__(
        self,
        difficulty: int = 1,
        max_turns: int | None = None,
        max_tokens: int = 128,
        temperature: float = 1.0,
        timeout_s: float = 600.0,
        framework: str = "openai",
        tool_choice: str = "auto",
        shots: int = 0,
    ) -> None:
        self.difficulty = check_level(difficulty, LEVELS)
        self.framework = check_framework(framework, TOOL_FRAMEWORKS)
        if max_tokens < 1 or (max_turns is not None and max_turns < 1):
            raise ValueError(f"max_tokens and max_turns must be >= 1, got {max_tokens}, {max_turns}")
        if tool_choice not in TOOL_CHOICES:
            raise ValueError(f"tool_choice must be one of {', '.join(TOOL_CHOICES)}, got {tool_choice!r}")
        if shots not in range(MAX_SHOTS + 1):
            raise ValueError(f"shots must be 0-{MAX_SHOTS} (one worked example), got {shots!r}")
        self.tool_choice = tool_choice
        self.shots = shots
        self.max_turns = max_turns or LEVELS[difficulty].turns
        self.max_tokens = max_tokens
        self.temperature = temperature
        self.timeout_s = timeout_s

    def items(self, split: Split, *, count: int, seed: int) -> list[TaskItem]:
        level = LEVELS[self.difficulty]
        stream = f"tool_use-d{self.difficulty}"
        return draw_items(stream, split, count=count, seed=seed, draw=lambda rng: _draw(rng, level))

    def run(self, item: TaskItem, llms: Mapping[str, Endpoint]) -> Outcome:
        env = ToolEnv(prices={str(k): int(v) for k, v in item.data["prices"].items()})
        final_reply, turns = self._play(item, llms[POLICY], env)
        order = {str(k): int(v) for k, v in item.data["order"].items()}
        parts = tool_use_reward(env, final_reply, order, int(item.data["total"]))
        return Outcome.single(
            parts.pop("reward"), **parts, final_reply=final_reply, notes=env.notes, looked_up=env.looked_up, turns=turns
        )

    def _play(self, item: TaskItem, endpoint: Endpoint, env: ToolEnv) -> tuple[str | None, int]:
        """The agent loop: call, run the tool calls, repeat; (the final reply or None, turns used)."""
        import openai

        required = self.tool_choice == "required"
        tools = [*TOOLS, ANSWER_TOOL] if required else TOOLS
        messages: list[dict[str, Any]] = [
            {"role": "system", "content": SYSTEM_REQUIRED if required else SYSTEM},
            *(worked_example(self.tool_choice, LEVELS[self.difficulty].items) if self.shots else []),
            {"role": "user", "content": str(item.data["question"])},
        ]
        for turn in range(self.max_turns):
            request = ChatRequest((), self.temperature, self.max_tokens, item.seed + turn, self.timeout_s)
            try:
                reply = complete_with_tools(self.framework, endpoint, request, messages, tools, self.tool_choice)
            except openai.BadRequestError as exc:  # every tool framework here calls through the openai client
                if exc.code == "context_length_exceeded":  # the model talked too long: its loss
                    return None, turn
                raise
            calls = reply.calls[:_MAX_CALLS_PER_TURN]
            if not calls:  # the answer in text; where a call was required, no answer at all
                return (None if required else reply.text), turn + 1
            if required and (answer := next((i for i, c in enumerate(calls) if c[1] == _ANSWER), None)) is not None:
                calls = calls[: answer + 1]  # the answer ends the episode: calls after it are never run
            messages.append(
                {
                    "role": "assistant",
                    "content": reply.text or None,
                    "tool_calls": [
                        {"id": id_, "type": "function", "function": {"name": name, "arguments": arguments}}
                        for id_, name, arguments in calls
                    ],
                }
            )
            for id_, name, arguments in calls:
                if required and name == _ANSWER:
                    return _answer_reply(arguments), turn + 1
                result = env.call(name, arguments)
                messages.append({"role": "tool", "tool_call_id": id_, "name": name, "content": result})
        return None, self.max_turns
