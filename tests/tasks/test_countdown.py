"""Countdown: every generated puzzle is solvable, deterministic, shaped by difficulty; rewards by hand."""

from __future__ import annotations

import random
import re
from collections import Counter

import pytest

from agentjet.tasks.countdown import EXAMPLES, LEVELS, Countdown, countdown_reward, generate_puzzle
from agentjet.tasks.expressions import evaluate


@pytest.mark.parametrize("difficulty", sorted(LEVELS))
def test_every_item_is_solvable_with_its_own_numbers(difficulty: int) -> None:
    level = LEVELS[difficulty]
    for split in ("train", "eval"):
        for item in Countdown(difficulty=difficulty).items(split, count=40, seed=3):
            numbers, target = item.data["numbers"], item.data["target"]
            solution = evaluate(item.data["solution"])
            assert solution.value == target
            assert not Counter(solution.literals) - Counter(numbers)
            assert len(numbers) == level.numbers
            assert level.target_min <= target <= level.target_max
            assert target not in numbers
            # the stored solution earns full reward through the same path a model's reply takes
            assert countdown_reward(f"Answer: {item.data['solution']}", numbers, target)[0] == 1.0


def test_items_are_deterministic_and_seeds_differ() -> None:
    family = Countdown(difficulty=2)
    first = family.items("train", count=10, seed=7)
    assert first == Countdown(difficulty=2).items("train", count=10, seed=7)
    assert first[:4] == family.items("train", count=4, seed=7)  # a longer list extends a shorter one
    assert [i.data for i in first] != [i.data for i in family.items("train", count=10, seed=8)]
    assert len({i.task_id for i in first}) == 10


def test_difficulty_changes_the_shape() -> None:
    sizes = {
        d: {len(i.data["numbers"]) for i in Countdown(difficulty=d).items("train", count=20, seed=0)} for d in LEVELS
    }
    assert sizes == {d: {LEVELS[d].numbers} for d in LEVELS}
    mean_target = {
        d: sum(i.data["target"] for i in Countdown(difficulty=d).items("train", count=50, seed=0)) / 50 for d in LEVELS
    }
    assert mean_target[1] < mean_target[2] < mean_target[3] < mean_target[4]


NUMBERS, TARGET = [25, 3, 4, 2], 44


@pytest.mark.parametrize(
    ("reply", "reward"),
    [
        ("(25 - 3) * 4 = 88, so half: Answer: (25 - 3) * 4 / 2", 1.0),
        ("Answer: (25 - 3) * 2 = 44", 1.0),  # "= value" after the expression is fine
        ("**Answer:** `(25-3)*2`", 1.0),
        ("Answer: 25 × 2 − 3 − 3", 0.075),  # 3 used twice but given once: 3 of its 4 numbers were given
        ("Answer: 25 + 3 + 4", 0.2455),  # well-formed, wrong value: 0.1 + 0.2 x (1 - |32 - 44| / 44)
        ("Answer: 25 + 3 + 4 + 2", 0.2545),  # 34: closer, so more
        ("Answer: 25 * 4 * 3 * 2", 0.1),  # 600: too far for any closeness credit
        ("Answer: 44", 0.0),  # 44 is not a given number (and nothing else is used)
        ("Answer: 11 * 4", 0.05),  # nor is 11: half of its numbers were given
        ("Answer: 1000 - 999", 0.0),
        ("Answer: 2 ** 25", 0.0),  # no exponents
        ("Answer: 4 / (2 - 2)", 0.0),  # division by zero (2 is given once, too)
        ("Answer: (25 - 3) * 2 Answer: 25 + 3", 0.0),  # hedging
        ("Answer: ٢٥ + ٣", 0.0),  # unicode digits
        ("I think it is 44.", 0.0),
        ("", 0.0),
    ],
)
def test_reward(reply: str, reward: float) -> None:
    assert countdown_reward(reply, NUMBERS, TARGET)[0] == reward


def test_the_graded_reward_orders_solved_above_well_formed_above_foreign_numbers() -> None:
    """Every solution outranks every wrong expression of the given numbers, which outranks every
    expression that uses a number not given: the grading never pays a hack more than an honest try."""
    rng = random.Random(3)
    for level in LEVELS.values():
        for _ in range(40):
            numbers, target, solution = generate_puzzle(rng, level)
            a, b = numbers[:2]
            honest = [f"Answer: {a} + {b}", f"Answer: {a} * {b}", f"Answer: {' + '.join(map(str, numbers))}"]
            foreign = [f"Answer: {a} + {target}", f"Answer: {a} * {a} * {a} * {a} * {a} * {a} * {a}"]
            solved = countdown_reward(f"Answer: {solution}", numbers, target)[0]
            wrong = [countdown_reward(r, numbers, target)[0] for r in honest if evaluate(r[8:]).value != target]
            hacks = [countdown_reward(r, numbers, target)[0] for r in foreign if numbers.count(a) < 7]
            assert solved == 1.0 and all(0.1 <= w < 0.3 for w in wrong) and all(0 <= h < 0.1 for h in hacks)


def test_bad_params_are_value_errors() -> None:
    with pytest.raises(ValueError, match="difficulty"):
        Countdown(difficulty=9)
    with pytest.raises(ValueError, match="framework"):
        Countdown(framework="crewai")


@pytest.mark.parametrize("shots", [0, 1, 2])
def test_shots_put_worked_examples_first_and_each_example_earns_the_full_reward(shots: int) -> None:
    family = Countdown(difficulty=1, shots=shots)
    item = family.items("eval", count=1, seed=0)[0]
    messages = family.request(item).messages
    assert [m["role"] for m in messages] == ["user", "assistant"] * shots + ["user"]
    assert f"make {item.data['target']}" in messages[-1]["content"]
    for numbers, target, worked in EXAMPLES[:shots]:
        assert countdown_reward(worked, numbers, target) == (1.0, worked.rsplit("Answer: ", 1)[1])
    with pytest.raises(ValueError, match="shots must be 0-2"):
        Countdown(shots=3)


def _shape(numbers: list[int], answer: str) -> str:
    """An example's answer with each literal replaced by its position among the example's numbers: `{0} + {1}`."""
    return re.sub(r"\d+", lambda m: "{" + str(numbers.index(int(m.group()))) + "}", answer)


def test_the_first_worked_example_has_the_shape_that_solves_the_most_easy_puzzles() -> None:
    # SmolLM2-135M writes the first example's shape with the puzzle's numbers in the order given, so that shape
    # is the one that must reach the most level-1 targets (the sum of all three: 25 of 192)
    puzzles = Countdown(difficulty=1).items("train", count=192, seed=0)
    numbers, _, worked = EXAMPLES[0]
    first = _shape(numbers, worked.rsplit("Answer: ", 1)[1])
    others = ["{0} * {1} + {2}", "{0} * {1} - {2}", "{0} * {1}", "{0} + {1}", "({0} + {1}) * {2}", "({0} - {1}) * {2}"]

    def solved(shape: str) -> int:
        return sum(evaluate(shape.format(*p.data["numbers"])).value == p.data["target"] for p in puzzles)

    assert first not in others
    assert solved(first) >= len(puzzles) // 10
    assert all(solved(first) > solved(other) for other in others)
