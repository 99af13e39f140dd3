"""Find the final `Answer: ...` of a model's reply, and read an integer answer, robustly and strictly.

Robust to what small models do: any case, markdown bold (`**Answer:** 7`), the answer on the
next line, backticks, `$`, a trailing full stop, units after an integer (`42 apples`). Strict
about what could game a reward: several markers with different answers (`Answer: 1 Answer: 2`)
count as no answer, integers are ASCII digits only (no unicode digits), at most 15 of them, and
an answer line holding more than one number is not an integer answer.
"""

from __future__ import annotations

import re

__all__ = ["MAX_ANSWER_CHARS", "find_answer", "parse_int_answer"]

MAX_ANSWER_CHARS = 200
_MAX_INT_DIGITS = 15
_MARKER = re.compile(r"\banswer\s*\**\s*:\s*\**", re.IGNORECASE)
_STRIP = " \t*`$."
_INT = re.compile(
    r"\$?\s*(?P<sign>-?)\s*(?P<digits>[0-9]{1,3}(?:,[0-9]{3})+|[0-9]+)(?:\.0+)?\s*(?P<unit>[A-Za-z][A-Za-z \-]*)?",
    re.ASCII,
)


def find_answer(reply: str) -> str | None:
    """The text after the `Answer:` marker(s), or None when there is none or they disagree.

    Each marker's answer runs to the next marker or the end of its line (the next non-empty
    line when the marker ends its line). Repeating the same answer is fine; different ones
    (hedging) are no answer at all."""
    markers = list(_MARKER.finditer(reply))
    answers: set[str] = set()
    for i, marker in enumerate(markers):
        end = markers[i + 1].start() if i + 1 < len(markers) else len(reply)
        rest = reply[marker.end() : end]
        line, _, after = rest.partition("\n")
        if not line.strip(_STRIP):
            line = next((part for part in after.split("\n") if part.strip(_STRIP)), "")
        answer = line.strip(_STRIP)
        if answer:
            answers.add(answer[: MAX_ANSWER_CHARS + 1])
    if len(answers) != 1:
        return None
    (answer,) = answers
    return answer if len(answer) <= MAX_ANSWER_CHARS else None


def parse_int_answer(answer: str) -> int | None:
    """`"42"`, `"$1,234"`, `"-5"`, `"42 apples"`, `"42.0"` -> the integer; anything else -> None."""
    match = _INT.fullmatch(answer.strip(_STRIP))
    if match is None:
        return None
    digits = match.group("digits").replace(",", "")
    if len(digits) > _MAX_INT_DIGITS:
        return None
    value = int(digits)
    return -value if match.group("sign") else value
