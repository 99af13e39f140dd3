"""`Countdown`: reach a target from given numbers with + - * /, each number at most once.

Every item is solvable: its target is the value of a random expression over (some of) its
numbers whose intermediate results are positive integers (the expression is kept as
`data["solution"]`). The model is asked to end with `Answer: <expression>`; the expression
is read by a safe evaluator (`expressions.py`, exact fractions, no `eval`). Reward (graded, so a
small model that never solves one still has something to climb): 1 when it uses only the given
numbers (each at most as often as given) and equals the target; 0.1-0.3 when it is such an
expression with another value (0.1 + 0.2 x its closeness to the target); below 0.1 when it also
uses numbers it was not given (0.1 x the share of its numbers that were given: SmolLM2 chains
its intermediate results, `6 * 3 = 18, Answer: 18 + 3`); 0 with no answer, several different
answers, no given number at all, `**`, division by zero... Difficulty 1-4 sets how many numbers and
how large the target is (`LEVELS`). `shots` worked examples come first as earlier turns: without
one SmolLM2-135M never ends in the asked format ("The answer is 11."), so its reward is flat 0.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from agentjet.tasks.answers import find_answer
from agentjet.tasks.base import POLICY, Endpoint, Outcome, Split, TaskItem, check_level, check_max_tokens
from agentjet.tasks.expressions import ExpressionError, evaluate
from agentjet.tasks.frameworks import ChatRequest, check_framework, complete
from agentjet.tasks.splits import Draft, draw_items

__all__ = ["EXAMPLES", "LEVELS", "PROMPT", "Countdown", "Level", "countdown_reward", "generate_puzzle"]

CORRECT, WELL_FORMED, CLOSENESS, FOREIGN = 1.0, 0.1, 0.2, 0.1
PROMPT = (
    "Use the numbers {numbers} to make {target}. You may use +, -, *, / and parentheses; each "
    "number at most once, and you do not need to use them all. Think briefly, then end your reply "
    "with one line of the form `Answer: <expression>`, for example `Answer: (6 + 4) * 3`."
)
# Worked examples for `shots` (hand-written). SmolLM2-135M copies the first one's shape into every answer, so it
# is the shape that solves the most puzzles: with the numbers in the order given, the sum of all three reaches 25
# of 192 level-1 training targets, `a + b` 20, `a * b` 17, `a * b + c` (the first example until 2026-12-07) 11
EXAMPLES: tuple[tuple[list[int], int, str], ...] = (
    ([3, 7, 2], 12, "3 + 7 = 10, and 10 + 2 = 12.\nAnswer: 3 + 7 + 2"),
    ([8, 5, 6, 9], 18, "8 - 5 = 3, and 3 * 6 = 18; 9 is not needed.\nAnswer: (8 - 5) * 6"),
)


@dataclass(frozen=True)
class Level:
    numbers: int  # how many numbers the model is given
    large: int  # how many of them come from 25, 50, 75, 100
    target_min: int
    target_max: int


LEVELS: Mapping[int, Level] = {
    1: Level(numbers=3, large=0, target_min=10, target_max=50),
    2: Level(numbers=4, large=1, target_min=20, target_max=200),
    3: Level(numbers=5, large=1, target_min=50, target_max=500),
    4: Level(numbers=6, large=2, target_min=100, target_max=999),
}
_LARGE = (25, 50, 75, 100)


def generate_puzzle(rng: random.Random, level: Level) -> tuple[list[int], int, str]:
    """(numbers, target, solution): the target is the solution's value, not one of the numbers."""
    while True:
        numbers = [rng.choice(_LARGE) for _ in range(level.large)]
        numbers += [rng.randint(1, 10) for _ in range(level.numbers - level.large)]
        rng.shuffle(numbers)
        used = rng.sample(numbers, rng.randint(max(2, level.numbers - 1), level.numbers))
        target, solution = _random_expression(rng, used, level.target_max)
        if level.target_min <= target <= level.target_max and target not in numbers:
            return numbers, target, solution


def _random_expression(rng: random.Random, numbers: list[int], limit: int) -> tuple[int, str]:
    """Combine random pairs until one value is left; intermediate values stay positive integers."""
    pool = [(n, str(n)) for n in numbers]
    while len(pool) > 1:
        (a, ea), (b, eb) = pool.pop(rng.randrange(len(pool))), pool.pop(rng.randrange(len(pool)))
        if a < b:
            (a, ea), (b, eb) = (b, eb), (a, ea)
        options = [(a + b, "+")]
        if a > b:
            options.append((a - b, "-"))
        if a * b <= 10 * limit and b > 1:
            options.append((a * b, "*"))
        if b > 1 and a % b == 0:
            options.append((a // b, "/"))
        value, op = rng.choice(options)
        pool.append((value, f"({ea} {op} {eb})"))
    value, expression = pool[0]
    return value, expression.removeprefix("(").removesuffix(")") if len(numbers) > 1 else expression


def countdown_reward(reply: str, numbers: list[int], target: int) -> tuple[float, str | None]:
    """(reward, the expression read from the reply or None)."""
    answer = find_answer(reply)
    if answer is None:
        return 0.0, None
    expression = answer.split("=", 1)[0]  # "3 + 4 = 7" -> "3 + 4"
    try:
        result = evaluate(expression)
    except ExpressionError:
        return 0.0, answer
    used, given = Counter(result.literals), Counter(numbers)
    if used - given:  # a number not given, or used too often: credit for the share that was given
        share = sum((used & given).values()) / sum(used.values())
        return round(FOREIGN * share, 4), answer
    if result.value == target:
        return CORRECT, answer
    closeness = max(0.0, 1.0 - abs(float(result.value) - target) / target)
    return round(WELL_FORMED + CLOSENESS * closeness, 4), answer


def _prompt(numbers: Sequence[int], target: int) -> str:
    return PROMPT.format(numbers=", ".join(map(str, numbers)), target=target)


class Countdown:
    """Countdown puzzles. Params: `difficulty` (1-4), `framework`, `shots` (worked examples shown first),
    the chat call's `max_tokens`, `temperature`."""

    name = "countdown"
    servers: Sequence[str] = (POLICY,)

    def __init__(
        self,
        difficulty: int = 1,
        max_tokens: int = 128,
        temperature: float = 1.0,
        framework: str = "openai",
        shots: int = 1,
        timeout_s: float = 600.0,
    ) -> None:
        self.difficulty = check_level(difficulty, LEVELS)
        self.max_tokens = check_max_tokens(max_tokens)
        if not 0 <= shots <= len(EXAMPLES):
            raise ValueError(f"shots must be 0-{len(EXAMPLES)}, got {shots}")
        self.temperature = temperature
        self.framework = check_framework(framework)
        self.shots = shots
        self.timeout_s = timeout_s

    def items(self, split: Split, *, count: int, seed: int) -> list[TaskItem]:
        level = LEVELS[self.difficulty]

        def draw(rng: random.Random) -> Draft:
            numbers, target, solution = generate_puzzle(rng, level)
            key = f"countdown|{sorted(numbers)}|{target}"
            return Draft(key, {"numbers": numbers, "target": target, "solution": solution})

        return draw_items(f"countdown-d{self.difficulty}", split, count=count, seed=seed, draw=draw)

    def request(self, item: TaskItem) -> ChatRequest:
        """The one chat call of an item, the same whichever framework sends it (`shots` worked
        examples first, as earlier user/assistant turns)."""
        messages: list[dict[str, str]] = []
        for numbers, target, worked in EXAMPLES[: self.shots]:
            messages += [
                {"role": "user", "content": _prompt(numbers, target)},
                {"role": "assistant", "content": worked},
            ]
        question = _prompt([int(n) for n in item.data["numbers"]], int(item.data["target"]))
        return ChatRequest(
            messages=(*messages, {"role": "user", "content": question}),
            temperature=self.temperature,
            max_tokens=self.max_tokens,
            seed=item.seed,
            timeout_s=self.timeout_s,
        )

    def run(self, item: TaskItem, llms: Mapping[str, Endpoint]) -> Outcome:
        numbers, target = [int(n) for n in item.data["numbers"]], int(item.data["target"])
        reply = complete(self.framework, llms[POLICY], self.request(item))
        reward, answer = countdown_reward(reply, numbers, target)
        return Outcome.single(reward, reply=reply, answer=answer, target=target, numbers=numbers)
