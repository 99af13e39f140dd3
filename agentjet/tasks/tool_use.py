"""`ToolUse`: a multi-turn shopping task over OpenAI `tools`, rewarded from the final state.

"What is the total cost of 2 apples and 3 pens?" Prices are only known through the `lookup`
tool (a seeded table that also lists items not asked about); the agent should compute the
total (`calculator`), save it (`write_note`) and answer `Answer: <total>`. The agent loop sends
OpenAI `tools` through `framework` (the `openai` SDK by default, AgentScope or AutoGen:
`frameworks.TOOL_FRAMEWORKS`), up to `max_turns` calls, each with `seed = item.seed + turn`;
tool calls run in the pure `ToolEnv` (`tool_env.py`). Reward, from the final state:
0.4 when the last integer of the last note is the total, 0.4 when the final answer is the
total, 0.2 x the share of the asked-for items that were looked up. Difficulty 1-3 sets how
many items, their quantities and prices (`LEVELS`).
"""

from __future__ import annotations

import random
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from agentjet.tasks.answers import find_answer, parse_int_answer
from agentjet.tasks.base import POLICY, Endpoint, Outcome, Split, TaskItem, check_level
from agentjet.tasks.frameworks import TOOL_FRAMEWORKS, ChatRequest, check_framework, complete_with_tools
from agentjet.tasks.splits import Draft, draw_items
from agentjet.tasks.tool_env import TOOLS, ToolEnv

__all__ = ["CATALOGUE", "LEVELS", "SYSTEM", "Level", "ToolUse", "tool_use_reward"]

NOTE_CREDIT, ANSWER_CREDIT, LOOKUP_CREDIT = 0.4, 0.4, 0.2
CATALOGUE = ("apple", "banana", "pear", "lemon", "mango", "pen", "pencil", "notebook", "eraser", "ruler", "candle")
SYSTEM = (
    "You are a careful assistant with tools. Prices are only known through the lookup tool. "
    "Look up every price, compute the total with the calculator, save the total with write_note, "
    "then reply with a final line `Answer: <total>`."
)
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


LEVELS: Mapping[int, Level] = {
    1: Level(items=2, max_quantity=1, max_price=10),
    2: Level(items=3, max_quantity=5, max_price=20),
    3: Level(items=4, max_quantity=9, max_price=50),
}


def _draw(rng: random.Random, level: Level) -> Draft:
    names = rng.sample(CATALOGUE, level.items + level.distractors)
    prices = {name: rng.randint(1, level.max_price) for name in sorted(names)}
    order = {name: rng.randint(1, level.max_quantity) for name in names[: level.items]}
    parts = [f"{qty} {name}{'s' if qty > 1 else ''}" for name, qty in order.items()]
    question = f"What is the total cost of {', '.join(parts[:-1])} and {parts[-1]}?"
    total = sum(prices[name] * qty for name, qty in order.items())
    key = f"tool_use|{sorted(prices.items())}|{sorted(order.items())}"
    return Draft(key, {"question": question, "prices": prices, "order": order, "total": total})


def tool_use_reward(env: ToolEnv, final_reply: str | None, order: Mapping[str, int], total: int) -> dict[str, float]:
    """The reward's parts (`note`, `answer`, `lookups`) from the final state; `reward` is their sum."""
    note_numbers = _INTEGER.findall(env.notes[-1]) if env.notes else []
    note = NOTE_CREDIT if note_numbers and int(note_numbers[-1]) == total else 0.0
    answer_text = find_answer(final_reply) if final_reply is not None else None
    given = parse_int_answer(answer_text) if answer_text is not None else None
    answer = ANSWER_CREDIT if given == total else 0.0
    lookups = LOOKUP_CREDIT * len(set(order) & set(env.looked_up)) / len(order)
    return {"note": note, "answer": answer, "lookups": lookups, "reward": round(note + answer + lookups, 6)}


class ToolUse:
    """The shopping-total task. Params: `difficulty` (1-3), `max_turns` (default 2 x items + 3),
    each call's `max_tokens`, `temperature`, and the `framework` that sends the turns."""

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
    ) -> None:
        self.difficulty = check_level(difficulty, LEVELS)
        self.framework = check_framework(framework, TOOL_FRAMEWORKS)
        if max_tokens < 1 or (max_turns is not None and max_turns < 1):
            raise ValueError(f"max_tokens and max_turns must be >= 1, got {max_tokens}, {max_turns}")
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

        messages: list[dict[str, Any]] = [
            {"role": "system", "content": SYSTEM},
            {"role": "user", "content": str(item.data["question"])},
        ]
        for turn in range(self.max_turns):
            request = ChatRequest((), self.temperature, self.max_tokens, item.seed + turn, self.timeout_s)
            try:
                reply = complete_with_tools(self.framework, endpoint, request, messages, TOOLS)
            except openai.BadRequestError as exc:  # every tool framework here calls through the openai client
                if exc.code == "context_length_exceeded":  # the model talked too long: its loss
                    return None, turn
                raise
            calls = reply.calls[:_MAX_CALLS_PER_TURN]
            if not calls:
                return reply.text, turn + 1
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
                result = env.call(name, arguments)
                messages.append({"role": "tool", "tool_call_id": id_, "name": name, "content": result})
        return None, self.max_turns
