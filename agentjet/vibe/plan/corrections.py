"""A sentence that corrects itself: "train the seer, no wait, the witch", "level 4, no wait, level 2", "10 steps,
no wait, 20", "... Actually make that the hunter".

Pure. `corrected(text)` runs on the lowercased text with number words as digits, before anything else is
read: what follows a correction marker (a role, a level, a count with its unit, or a bare number) replaces the
last thing of the same kind said before the marker, in its place (so "train the seer" becomes "train the
witch" and keeps its verb), and the correction itself is blanked. A marker followed by nothing said before it
("actually, train the wolves") changes nothing. Each correction comes back as a note for the assumptions.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from agentjet.vibe.plan.families import GAME_NAMES, ROLE_WORD

__all__ = ["Corrected", "corrected"]

_MARKER = re.compile(
    r"\b(?:no,?\s+wait|wait,?\s+no|no,?\s+sorry|i mean|i meant|or rather|scratch that|correction)\b\s*[,:]?|"
    r"(?:\.{2,}|\u2026|[,;-])\s*(?=make (?:that|it)\s+\d)|"  # "4 steps... make that 6"
    r"(?:^|(?<=[.,;!?])|(?<=[.,;!?]\s)|(?<=\s[\u2013\u2014-]\s))(?:no|sorry)\s*,|"  # "the seer. no, the hunter",
    # "12 steps - no, 16"
    r"(?:^|(?<=[.,;!?\u2013\u2014-])|(?<=[.,;!?\u2013\u2014-]\s)|(?<=\bbut\s))actually\b\s*,?"
)
_FILLER = re.compile(  # "..., scratch that, train the village": a verb before the new words is no new thing said
    r"\s*,?\s*(?:(?:make|making)\s+(?:that|it)|it'?s|it is|let'?s say|say|rather|instead|no\s*,|"
    r"(?:train|teach|coach|use|pick|choose|go with)(?:\s+only)?(?:\s+for)?)?\s*(?P<only>(?:just|only)\s+)?"
)
_LIST_GLUE = re.compile(r"\s*(?:,|and|or|&|\+|/|,\s*and|,\s*or)\s*(?:the\s+)?")  # between two roles of a list
_ROLE = ROLE_WORD
_END = r"(?=\s*(?:$|[,.;!?\u2013\u2014-]|\band\b|\bthen\b|\bones?\b|\bproblems?\b|\bpuzzles?\b))"
_QUOTES = re.compile("[\"'\u2018\u2019\u201c\u201d]")  # a quoted word's marks, left out of a note's quote
_LEVEL_WORD = r"\b(?:easy|easier|easiest|medium|hard|harder|hardest|difficult)\b"
# What may follow a marker, each with the pattern that finds the same kind of thing before it (`{n}`: the number)
_KINDS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(rf"(?:the\s+)?(?P<role>{_ROLE})"), _ROLE),
    (re.compile(rf"(?P<level>{_LEVEL_WORD}){_END}"), _LEVEL_WORD),  # "easy, no wait, hard"
    (re.compile(r"(?:level|difficulty)\s*(?P<n>\d+)\b"), r"\b(?:level|difficulty)\s*\d+\b"),
    (re.compile(r"(?P<n>\d+)-(?P<unit>[a-z]+)\b"), r"\b\d+-{unit}\b"),  # "3-step", "4-digit"
    (re.compile(r"(?P<n>\d+)\s+(?P<unit>[a-z]+)\b"), r"\b\d+\s+{unit}s?\b"),
    # "10 steps, no wait, 20": a bare number takes the place of the last number said with its unit or level
    (re.compile(rf"(?P<n>\d+){_END}"), r"\b(?:(?:level|difficulty)\s*\d+|\d+(?:\s+|-)[a-z]+)\b"),
    # "make it say banana, no wait, apple": a bare word takes the place of the word to say
    (
        re.compile(rf"(?:say\s+)?[\"'\u2018\u201c]?(?P<word>[a-z]+)[\"'\u2019\u201d]?{_END}"),  # "..., actually 'okay'"
        r"\b(?:say|says|saying|repl(?:y|ies)(?: with)?|answer(?:s)?(?: with)?|respond(?:s)? with)\s+[\"'\u2018\u201c]?"
        r"[a-z]+\b",
    ),
)


@dataclass(frozen=True)
class Corrected:
    """The text with each correction applied, and what was corrected, as written ("the seer" -> "the witch")."""

    text: str
    notes: tuple[str, ...]


def corrected(text: str) -> Corrected:
    """`text` with every self-correction applied (the later words win); pure."""
    notes: list[str] = []
    start = 0
    while marker := _MARKER.search(text, start):
        start = marker.end()
        fix = _apply(text, marker)
        if fix is not None:
            text, note, start = fix
            notes += [note] if note else []
    return Corrected(text, tuple(notes))


def _apply(text: str, marker: re.Match[str]) -> tuple[str, str, int] | None:
    """The text with the words after `marker` put in place of the same kind of thing before it, or None."""
    at = _FILLER.match(text, marker.end())
    begin = at.end() if at else marker.end()
    for after, before_pattern in _KINDS:
        new = after.match(text, begin)
        if new is None:
            continue
        unit = re.escape(new.group("unit").rstrip("s")) if "unit" in new.groupdict() else ""
        olds = [
            m
            for m in re.finditer(before_pattern.format(unit=unit), text[: marker.start()])
            if m.group(0) not in GAME_NAMES or text[: m.start()].endswith("the ")  # "the werewolves": a role
        ]
        if not olds:
            return None
        old = olds[-1]
        start = old.start()
        if "role" in new.groupdict() and at is not None and at.group("only"):  # "the seer and the witch, no wait,
            for earlier in reversed(olds[:-1]):  # just the witch": the new role takes the whole list's place
                if not _LIST_GLUE.fullmatch(text[earlier.end() : start]):
                    break
                start = earlier.start()
        if "n" in new.groupdict() and new.group("n") is not None:
            replacement = re.sub(r"\d+", new.group("n"), old.group(0), count=1)
        elif "word" in new.groupdict():
            replacement = re.sub(r"[a-z]+$", new.group("word"), old.group(0))
        else:
            replacement = new.group("role") if "role" in new.groupdict() else new.group("level")
        said = text[start : old.end()]
        note = f"'{_QUOTES.sub('', said)}' corrected to '{_QUOTES.sub('', replacement)}' (the later words are planned)"
        note = "" if replacement == said else note  # "the hunter, no wait, the hunter and the witch"
        blanked = text[: marker.start()] + " " * (new.end() - marker.start()) + text[new.end() :]
        fixed = blanked[:start] + replacement + blanked[old.end() :]
        return fixed, note, new.end() + len(replacement) - len(said)
    return None
