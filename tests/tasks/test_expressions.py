"""The safe evaluator: exact values for allowed arithmetic, a clear error for everything else."""

from __future__ import annotations

import time
from fractions import Fraction

import pytest

from agentjet.tasks.expressions import ExpressionError, evaluate, format_number


@pytest.mark.parametrize(
    ("text", "value", "literals"),
    [
        ("(25 - 3) * 4 / 2", Fraction(44), (25, 3, 4, 2)),
        ("7 / 2", Fraction(7, 2), (7, 2)),  # exact, not float
        ("1 / 3 * 3", Fraction(1), (1, 3, 3)),
        ("6 × 4 ÷ 3 − 1", Fraction(7), (6, 4, 3, 1)),  # typographic operators
        (" ((8)) ", Fraction(8), (8,)),
    ],
)
def test_evaluates_exactly(text: str, value: Fraction, literals: tuple[int, ...]) -> None:
    result = evaluate(text)
    assert result.value == value
    assert result.literals == literals


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("2 ** 1000000", "Pow"),
        ("9 ** 9 ** 9", "Pow"),
        ("__import__('os').system('true')", "Call"),
        ("x + 1", "Name"),
        ("3 % 2", "Mod"),
        ("7 // 2", "FloorDiv"),
        ("1.5 + 2", "Constant"),
        ("True + 1", "Constant"),
        ("-3 + 5", "USub"),  # unary minus only when asked for
        ("5 / (3 - 3)", "division by zero"),
        ("٣ + ٤", "ASCII"),
        ("999999999999999 * 2", "too large"),
        ("1000000 * 1000000 * 1000000", "too large"),
        ("3 +", "not an arithmetic expression"),
        ("", "empty"),
        ("(" * 150 + "1" + ")" * 150, "longer than"),
        ("+".join(["1"] * 60), "more than"),
    ],
)
def test_rejects_with_a_reason(text: str, reason: str) -> None:
    with pytest.raises(ExpressionError, match=reason):
        evaluate(text)


def test_unary_minus_when_allowed() -> None:
    assert evaluate("-3 + 5", allow_unary_minus=True).value == 2


def test_hostile_input_is_rejected_fast() -> None:
    started = time.perf_counter()
    for text in ("9" * 199, "(" * 99 + ")" * 99, "1/" * 66 + "1"):
        with pytest.raises(ExpressionError):
            evaluate(text)
    assert time.perf_counter() - started < 1.0


def test_format_number() -> None:
    assert format_number(Fraction(7)) == "7"
    assert format_number(Fraction(-3)) == "-3"
    assert format_number(Fraction(7, 3)) == "2.333333"
    assert format_number(Fraction(1, 2)) == "0.5"
