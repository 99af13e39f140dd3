"""Seeded arithmetic word problems from templates (shopping, sharing, baking, travel, ...).

A problem is a start quantity followed by `operations` steps, one sentence each (add, subtract,
multiply, divide evenly), then a question. Every intermediate value is a positive integer, so
the answer is one. `magnitude` bounds the start value and the added/subtracted amounts.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

__all__ = ["NAMES", "THEMES", "Problem", "Theme", "generate_problem"]

NAMES = ("Mia", "Omar", "Lena", "Ravi", "Sofia", "Jonas", "Aiko", "Tom", "Nora", "Diego", "Priya", "Ben")


@dataclass(frozen=True)
class Theme:
    """Sentence templates over `{name}` and `{n}`; the quantity is the one the question asks for."""

    name: str
    start: str
    add: str
    sub: str
    mul: str
    div: str
    question: str


THEMES: tuple[Theme, ...] = (
    Theme(
        "shopping",
        "{name} has {n} dollars.",
        "{name} earns {n} dollars doing chores.",
        "{name} spends {n} dollars on a book.",
        "A relative gives {name} enough money to make it {n} times as much.",
        "{name} splits the money into {n} equal parts and keeps only one part.",
        "How many dollars does {name} have now?",
    ),
    Theme(
        "sharing",
        "{name} has {n} candies.",
        "A friend gives {name} {n} more candies.",
        "{name} eats {n} candies.",
        "{name} gets more bags and now has {n} times as many candies.",
        "{name} shares the candies equally among {n} children, {name} included, and keeps one share.",
        "How many candies does {name} have now?",
    ),
    Theme(
        "baking",
        "{name} bakes {n} cookies.",
        "{name} bakes {n} more cookies.",
        "{name}'s family eats {n} of the cookies.",
        "{name} repeats the whole batch so there are {n} times as many cookies.",
        "{name} packs the cookies equally into {n} boxes and keeps just one box.",
        "How many cookies does {name} have now?",
    ),
    Theme(
        "travel",
        "A train carries {n} passengers.",
        "At a station {n} passengers get on.",
        "At a station {n} passengers get off.",
        "More carriages are added and the number of passengers becomes {n} times as large.",
        "The passengers split equally into {n} groups and only one group stays on the train.",
        "How many passengers are on the train now?",
    ),
    Theme(
        "savings",
        "{name}'s piggy bank holds {n} coins.",
        "{name} puts {n} more coins in it.",
        "{name} takes {n} coins out.",
        "{name}'s grandmother makes the number of coins {n} times as large.",
        "{name} divides the coins equally among {n} jars and keeps one jar.",
        "How many coins does {name} have now?",
    ),
    Theme(
        "farm",
        "A farmer collects {n} eggs.",
        "The farmer collects {n} more eggs.",
        "The farmer sells {n} eggs.",
        "By the end of the week the farmer has {n} times as many eggs.",
        "The farmer splits the eggs equally into {n} baskets and keeps one basket.",
        "How many eggs does the farmer have now?",
    ),
)
_MAX_FACTOR = 4


@dataclass(frozen=True)
class Problem:
    text: str
    answer: int
    theme: str
    steps: tuple[str, ...]  # "+7", "-3", "*2", "/4": the operations in order


def generate_problem(rng: random.Random, *, operations: int, magnitude: int) -> Problem:
    """A word problem of `operations` steps with amounts up to `magnitude`; its integer answer."""
    theme, name = rng.choice(THEMES), rng.choice(NAMES)
    value = rng.randint(2, magnitude)
    sentences = [theme.start.format(name=name, n=value)]
    steps: list[str] = []
    for _ in range(operations):
        op, n = _operation(rng, value, magnitude)
        template = {"+": theme.add, "-": theme.sub, "*": theme.mul, "/": theme.div}[op]
        sentences.append(template.format(name=name, n=n))
        steps.append(f"{op}{n}")
        value = {"+": value + n, "-": value - n, "*": value * n, "/": value // n}[op]
    sentences.append(theme.question.format(name=name))
    return Problem(" ".join(sentences), value, theme.name, tuple(steps))


def _operation(rng: random.Random, value: int, magnitude: int) -> tuple[str, int]:
    """A random step that keeps the value a positive integer (and within 10 x magnitude)."""
    options = ["+", "+"]
    if value > 1:
        options += ["-", "-"]
    if value * 2 <= 10 * magnitude:
        options.append("*")
    divisors = [d for d in range(2, 11) if value % d == 0 and value // d >= 1]
    if divisors:
        options.append("/")
    op = rng.choice(options)
    if op == "+":
        return op, rng.randint(1, magnitude)
    if op == "-":
        return op, rng.randint(1, min(magnitude, value - 1))
    if op == "*":
        return op, rng.randint(2, max(2, min(_MAX_FACTOR, (10 * magnitude) // value)))
    return op, rng.choice(divisors)
