"""Reading `Answer: ...` from replies: what small models write is accepted, what games a reward is not."""

from __future__ import annotations

import pytest

from agentjet.tasks.answers import MAX_ANSWER_CHARS, find_answer, parse_int_answer


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ("So 3 + 4 is 7.\nAnswer: 7", "7"),
        ("answer:  (6 + 4) * 3.", "(6 + 4) * 3"),
        ("**Answer:** 12", "12"),
        ("**Answer**: `12`", "12"),
        ("Final answer: $5$", "5"),
        ("Answer:\n\n  42\nthanks", "42"),
        ("Answer: 7\nLet me double check... Answer: 7", "7"),  # repeating the same answer is fine
    ],
)
def test_find_answer_accepts_common_shapes(reply: str, expected: str) -> None:
    assert find_answer(reply) == expected


@pytest.mark.parametrize(
    "reply",
    [
        "The result is 7.",  # no marker
        "Answer: 1 Answer: 2",  # hedging on one line
        "Answer: 1\nAnswer: 2",  # hedging on two lines
        "Answer:",  # nothing after it
        "Answer the question: what is 3 + 4?",  # the word, not the marker
        "Answer: " + "1" * (MAX_ANSWER_CHARS + 5),  # absurdly long
    ],
)
def test_find_answer_rejects_missing_or_ambiguous(reply: str) -> None:
    assert find_answer(reply) is None


@pytest.mark.parametrize(
    ("text", "expected"),
    [("42", 42), ("$1,234", 1234), ("-5", -5), ("42 apples", 42), ("42.0", 42), ("7 dollars.", 7), ("0", 0)],
)
def test_parse_int_answer_reads_integers(text: str, expected: int) -> None:
    assert parse_int_answer(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "٤٢",  # Arabic-Indic digits
        "４２",  # fullwidth digits
        "42 or 43",  # two numbers
        "3.5",  # not an integer
        "1" * 16,  # more than 15 digits (and would be slow to int() at scale)
        "9" * 5000,
        "forty-two",
        "1e3",
        "2**10",
        "",
    ],
)
def test_parse_int_answer_rejects_non_integers_and_exploits(text: str) -> None:
    assert parse_int_answer(text) is None
