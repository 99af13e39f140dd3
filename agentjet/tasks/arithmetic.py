"""`Arithmetic`: generated word problems with an integer answer, in any of six agent frameworks.

Problems come from seeded templates (`arithmetic_problems.py`). The model is asked to end
with `Answer: <integer>`. Reward: 1 for the exact answer, 0.1 for a well-formed integer answer
that is wrong, 0 otherwise (see `answers.py` for what is well-formed). Difficulty 1-5 sets the
number of operations and the size of the amounts (`LEVELS`). `framework` picks how the one
chat call is written (`openai`, `langchain`, `langgraph`, `httpx`, `agentscope`, `autogen`); the
request is the same in each, so the captured tokens are too.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence

from agentjet.tasks.answers import find_answer, parse_int_answer
from agentjet.tasks.arithmetic_problems import generate_problem
from agentjet.tasks.base import POLICY, Endpoint, Outcome, Split, TaskItem, check_level, check_max_tokens
from agentjet.tasks.frameworks import ChatRequest, check_framework, complete
from agentjet.tasks.splits import Draft, draw_items

__all__ = ["EXAMPLES", "LEVELS", "PROMPT", "Arithmetic", "arithmetic_reward"]

CORRECT, WELL_FORMED = 1.0, 0.1
PROMPT = "{problem}\nSolve the problem step by step, then end your reply with one line of the form `Answer: <integer>`."
EXAMPLES: tuple[tuple[str, str], ...] = (  # worked examples for `shots` (hand-written, not generated)
    (
        "Lena has 9 apples. Lena buys 4 more apples. How many apples does Lena have now?",
        "Lena starts with 9 apples and buys 4 more: 9 + 4 = 13.\nAnswer: 13",
    ),
    (
        "A shop has 30 pens. It sells 12 pens. It packs the rest equally into 3 boxes and keeps one box. "
        "How many pens does the shop have now?",
        "30 - 12 = 18 pens are left. 18 / 3 = 6 pens in one box.\nAnswer: 6",
    ),
)
LEVELS: Mapping[int, tuple[int, int]] = {1: (1, 10), 2: (2, 20), 3: (3, 50), 4: (4, 100), 5: (5, 500)}  # ops, size


def arithmetic_reward(reply: str, answer: int) -> tuple[float, int | None]:
    """(reward, the integer read from the reply or None)."""
    text = find_answer(reply)
    given = None if text is None else parse_int_answer(text)
    if given is None:
        return 0.0, None
    return (CORRECT if given == answer else WELL_FORMED), given


class Arithmetic:
    """Word problems. Params: `difficulty` (1-5), `framework`, `shots` (worked examples shown first),
    the chat call's `max_tokens`, `temperature`."""

    name = "arithmetic"
    servers: Sequence[str] = (POLICY,)

    def __init__(
        self,
        difficulty: int = 1,
        framework: str = "openai",
        max_tokens: int = 128,
        temperature: float = 1.0,
        shots: int = 1,
        timeout_s: float = 600.0,
    ) -> None:
        self.difficulty = check_level(difficulty, LEVELS)
        self.max_tokens = check_max_tokens(max_tokens)
        if not 0 <= shots <= len(EXAMPLES):
            raise ValueError(f"shots must be 0-{len(EXAMPLES)}, got {shots}")
        self.framework = check_framework(framework)
        self.shots = shots
        self.temperature = temperature
        self.timeout_s = timeout_s

    def items(self, split: Split, *, count: int, seed: int) -> list[TaskItem]:
        operations, magnitude = LEVELS[self.difficulty]

        def draw(rng: random.Random) -> Draft:
            problem = generate_problem(rng, operations=operations, magnitude=magnitude)
            data = {"problem": problem.text, "answer": problem.answer, "theme": problem.theme}
            return Draft(f"arithmetic|{problem.text}", {**data, "steps": list(problem.steps)})

        return draw_items(f"arithmetic-d{self.difficulty}", split, count=count, seed=seed, draw=draw)

    def request(self, item: TaskItem) -> ChatRequest:
        """The one chat call of an item, the same whichever framework sends it (`shots` worked
        examples first, as earlier user/assistant turns)."""
        messages: list[dict[str, str]] = []
        for problem, worked in EXAMPLES[: self.shots]:
            messages += [
                {"role": "user", "content": PROMPT.format(problem=problem)},
                {"role": "assistant", "content": worked},
            ]
        return ChatRequest(
            messages=(*messages, {"role": "user", "content": PROMPT.format(problem=item.data["problem"])}),
            temperature=self.temperature,
            max_tokens=self.max_tokens,
            seed=item.seed,
            timeout_s=self.timeout_s,
        )

    def run(self, item: TaskItem, llms: Mapping[str, Endpoint]) -> Outcome:
        reply = complete(self.framework, llms[POLICY], self.request(item))
        reward, given = arithmetic_reward(reply, int(item.data["answer"]))
        return Outcome.single(reward, reply=reply, given=given, answer=int(item.data["answer"]))
