"""Evaluate untrusted arithmetic (`(25 - 3) * 4 / 2`) exactly and safely, without `eval`.

The text is parsed with `ast` and only integer literals, `+ - * /`, parentheses and (when
asked) unary minus are accepted: no names, calls, attributes, `**`, `%` or `//`. Values are
exact `Fraction`s. Guards: at most `MAX_CHARS` characters and `_MAX_NODES` syntax nodes,
literals of at most 12 digits, every intermediate value within `MAX_ABS`, no division by
zero. The typographic `×`, `÷` and `−` models like to write are read as `*`, `/` and `-`;
any other non-ASCII character (unicode digits among them) is rejected.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from fractions import Fraction

__all__ = ["MAX_ABS", "MAX_CHARS", "Evaluation", "ExpressionError", "evaluate", "format_number"]

MAX_CHARS = 200
MAX_ABS = Fraction(10**15)
_MAX_NODES = 100
_MAX_LITERAL = 10**12
_TYPOGRAPHIC = str.maketrans({"×": "*", "÷": "/", "−": "-", "–": "-"})
_BINARY = (ast.Add, ast.Sub, ast.Mult, ast.Div)


class ExpressionError(ValueError):
    """The text is not an expression this evaluator accepts (the message says why)."""


@dataclass(frozen=True)
class Evaluation:
    value: Fraction
    literals: tuple[int, ...]  # the integer literals, in reading order


def evaluate(text: str, *, allow_unary_minus: bool = False) -> Evaluation:
    """The exact value of `text` and the literals it uses; ExpressionError if it is not allowed."""
    source = text.translate(_TYPOGRAPHIC).strip()
    if not source:
        raise ExpressionError("empty expression")
    if len(source) > MAX_CHARS:
        raise ExpressionError(f"expression longer than {MAX_CHARS} characters")
    if not source.isascii():
        raise ExpressionError("only ASCII digits, + - * / and parentheses are allowed")
    try:
        tree = ast.parse(source, mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        raise ExpressionError(f"not an arithmetic expression: {source!r}") from exc
    if sum(1 for _ in ast.walk(tree)) > _MAX_NODES:
        raise ExpressionError(f"expression has more than {_MAX_NODES} parts")
    literals: list[int] = []
    value = _value(tree.body, literals, allow_unary_minus)
    return Evaluation(value, tuple(literals))


def _value(node: ast.expr, literals: list[int], allow_unary_minus: bool) -> Fraction:
    if isinstance(node, ast.Constant) and type(node.value) is int:
        if node.value > _MAX_LITERAL:
            raise ExpressionError(f"number {node.value} is too large")
        literals.append(node.value)
        return Fraction(node.value)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and allow_unary_minus:
        return _checked(-_value(node.operand, literals, allow_unary_minus))
    if isinstance(node, ast.BinOp) and isinstance(node.op, _BINARY):
        left = _value(node.left, literals, allow_unary_minus)
        right = _value(node.right, literals, allow_unary_minus)
        if isinstance(node.op, ast.Add):
            return _checked(left + right)
        if isinstance(node.op, ast.Sub):
            return _checked(left - right)
        if isinstance(node.op, ast.Mult):
            return _checked(left * right)
        if right == 0:
            raise ExpressionError("division by zero")
        return _checked(left / right)
    what = type(node.op if isinstance(node, ast.BinOp | ast.UnaryOp) else node).__name__
    raise ExpressionError(f"{what} is not allowed: only integers and + - * / ( )")


def _checked(value: Fraction) -> Fraction:
    if abs(value) > MAX_ABS:
        raise ExpressionError("an intermediate value is too large")
    return value


def format_number(value: Fraction) -> str:
    """`7`, `-3`, or a decimal with up to 6 places (`2.333333`) for a non-integer."""
    if value.denominator == 1:
        return str(value.numerator)
    return f"{float(value):.6f}".rstrip("0")
