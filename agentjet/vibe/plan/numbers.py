"""Numbers in a task sentence: number words as digits, and the numeric cues of difficulty a sentence states.

Pure. `with_digits("five numbers, twenty-one steps")` -> "5 numbers, 21 steps". `read_cues` finds what a
sentence says about the size of a puzzle, never what it means for a family (`difficulty.py` maps that):
counts of things ("with 6 numbers", "a 4-item list", "two-step problems", "multi-step": 2), digits
("3-digit targets"), bounds ("up to 100", "targets over 200", "in the thousands"), how many of each thing
("up to 5 of each"), grid sizes ("5x5"), werewolves rounds and players, an agent's turns ("at most 6 turns"),
and a school grade ("5th grade", "class 3": `read_grade`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

__all__ = [
    "LISTED_NUMBERS", "PROBLEM_NOUNS", "STEPS_OF_A_PROBLEM", "STEPS_OF_THE_SKILL", "Cue", "CueKind", "as_written",
    "read_cues", "read_grade", "with_digits",
]  # fmt: skip

_UNITS = {
    "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
    "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14, "fifteen": 15, "sixteen": 16,
    "seventeen": 17, "eighteen": 18, "nineteen": 19, "half a dozen": 6, "a dozen": 12, "dozen": 12, "a couple of": 2,
    "a couple": 2, "a few": 3, "single": 1, "double": 2, "triple": 3,
}  # fmt: skip
_TENS = {"twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90}
_UNIT_WORD = "|".join(sorted((w for w in _UNITS if " " not in w), key=len, reverse=True))
_TENS_WORD = "|".join(_TENS)
_NUMBER_WORDS = re.compile(
    rf"\b(?:(?P<tens>{_TENS_WORD})(?:[\s-](?P<ones>one|two|three|four|five|six|seven|eight|nine))?"
    rf"|(?P<few>half a dozen|a dozen|a couple(?: of)?|a few)|(?P<unit>{_UNIT_WORD}))"
    r"(?:\s+(?P<hundred>hundred|thousand))?\b"
)
_DOZENS = re.compile(rf"\b(\d+|{_UNIT_WORD})\s+dozens?\b")
_A_HUNDRED = re.compile(r"\ba (hundred|thousand)\b")
_HUNDREDS = re.compile(r"\b(\d+) (hundred|thousand)\b")
# "one" stays a word where it is no count: "one of the", "the one", "one-word", "one another", "no one", "someone"
_KEEP_ONE = re.compile(
    r"(?:\bone(?=\s+of\b|\s+another\b|[\s-]+word\b|\s+side\b|\s+for\b)|(?<=\bthe )one\b|(?<=\bno )one\b)"
)

CueKind = Literal[
    "count", "digits", "at_most", "at_least", "grid", "rounds", "players", "operations", "quantity", "turns", "listed",
    "size", "target", "total",
]  # fmt: skip
_COUNT_NOUNS = r"(?:numbers?|operands?|cards?|items?|things|products|goods|ingredients|terms)"
PROBLEM_NOUNS = _PROBLEM_NOUNS = (  # "word problems", "story problems", "sums": what one problem is called
    r"(?:(?:word\s+|story\s+|math\s+|maths\s+|arithmetic\s+|homework\s+)?"
    r"(?:problems?|questions?|puzzles?|sums?|calculations?|exercises?))"
)
# "problems that need 3 steps", "puzzles with a few steps": the steps of one problem, not a training budget
STEPS_OF_A_PROBLEM = re.compile(
    rf"{_PROBLEM_NOUNS}\s+(?:(?:that|which)\s+)?(?:need|needs|needing|require|requires|requiring|take|takes|taking|"
    r"with|of|having|have|in)\s+(?:(?:exactly|just|only|about|around|at most|at least|up to|no more than)\s+)?"
    r"(?:(?:[1-9]|10)\s*(?:-|–|or|to)\s*)?"  # "that take 2 or 3 steps": the top of the range
    r"([1-9]|10)[\s-]*(?:steps?|operations?|ops)\b"  # a problem of 100 steps is a training budget
)
# "2-step arithmetic", "math that takes 3 steps": the skill's name for one problem (a singular "step" before it,
# as in "two-step"; "50 steps arithmetic" stays a training budget, and so does the ambiguous "arithmetic in 2 steps")
_SKILL_NAMES = r"(?:arithmetic|math|maths|mathematics|reasoning)"
STEPS_OF_THE_SKILL = re.compile(
    rf"\b([1-9]|10)[\s-]step(?=\s+{_SKILL_NAMES}\b)|"
    rf"\b{_SKILL_NAMES}\s+(?:that|which)\s+(?:needs?|requires?|takes?)\s+"
    r"(?:(?:exactly|just|only|about|around|at most|up to)\s+)?([1-9]|10)\s+steps?\b"
)
_CUES: tuple[tuple[CueKind, re.Pattern[str]], ...] = (
    ("operations", STEPS_OF_A_PROBLEM),
    ("operations", STEPS_OF_THE_SKILL),
    ("grid", re.compile(r"\b(\d+)\s*(?:x|by|×)\s*(\d+)\b(?!\s*(?:steps?|minutes?))")),
    ("digits", re.compile(r"\b(\d+)[\s-]*digits?\b")),
    ("operations", re.compile(
        rf"\b(\d+)[\s-]*(?:steps?|operations?|ops)\b(?=\s+{_PROBLEM_NOUNS}|\s+(?:each|apiece)|"
        rf"\s+(?:per|a|an|in each|for each)\s+{_PROBLEM_NOUNS})"
    )),
    ("operations", re.compile(r"\b(\d+)[\s-]+(?:arithmetic\s+)?(?:operations?|ops)\b")),
    ("count", re.compile(
        rf"\b(\d+)[\s-]+(?:(?:given|different|starting|input|source|small|big|random)\s+)?{_COUNT_NOUNS}\b|"
        r"\b(?:items|numbers|operands)\s*[:=]\s*(\d+)\b"  # "items: 4"
    )),
    ("rounds", re.compile(r"\b(\d+)[\s-]*rounds?\b(?!\s+of\s+(?:[\w-]+\s+)?(?:training|rl|grpo|updates?))")),
    ("rounds", re.compile(
        r"\brounds?\s*[:=]?\s*(?:to|of|at most|up to|<=?|max(?:imum)?|(?:cap(?:ped)?|limit(?:ed)?)(?:\s+(?:at|to|of))?"
        r")?"
        r"\s*(\d+)\b"
    )),
    ("rounds", re.compile(  # a werewolves round is a night and a day: "3 nights max", "at most 4 days"
        r"\b(\d+)[\s-]*(?:nights?|days?)\s+(?:max(?:imum)?|at most|per game|a game|each game|cap|limit)\b|"
        r"\bcap(?:ped)?\s+(?:each\s+game\s+|every\s+game\s+|games?\s+|it\s+)?at\s+(\d+)\s+(?:nights?|days?)\b|"
        r"\b(?:at most|max(?:imum)?(?: of)?|up to|no more than|within|only|capped at|caps at|cap(?:ped)? of|limited to|"
        r"limit of)\s+(\d+)\s+(?:nights?|days?|"
        r"night[- ]day cycles?)\b"
    )),
    ("players", re.compile(  # not "two people a night"
        r"\b(\d+)[\s-]*(?:players?|people|seats)\b(?!\s+(?:a|per|each|every)\s+(?:night|day|round))"
    )),
    ("turns", re.compile(  # how many calls an agent gets: "at most 6 turns", "10 turns max"
        r"\bmax[_ ]turns\s*[=:]?\s*(\d+)\b|"  # "max_turns 9"
        r"\b(?:max(?:imum)?(?: of)?|at most|up to|no more than|limit(?:ed)? to|within)\s+(\d+)\s+"
        r"(?:turns?|tool calls?|model calls?|calls?)\b|\b(\d+)[\s-]*turns?\s+(?:max(?:imum)?|at most|limit)\b|"
        r"\b(\d+)[\s-]*(?:turns?|tool calls?|model calls?)(?:\s+(?:per|an|a|each)\s+(?:episode|task|list|game))?\b"
    )),
    ("quantity", re.compile(  # how many of each thing: "up to 5 of each", "quantities up to 9"
        r"\b(?:up to|at most|no more than|max(?:imum)?(?: of)?)\s+(\d+)\s+"
        r"(?:of each|each|apiece|of every \w+|per item)\b|"
        r"\bquantit(?:y|ies)\s+(?:of\s+)?(?:up to|at most|below|under|of at most|no more than|<=?)\s+(\d+)\b"
    )),
    ("total", re.compile(  # "a total under 100": the answer's size (arithmetic's amounts; no tool_use knob)
        r"\b(?:totals?|bills?|sums?)\s+(?:is\s+|are\s+|of\s+)?(?:under|below|up to|at most|less than|no more than|<=?)"
        r"\s+(\d+)\b"
    )),
    ("at_most", re.compile(
        r"\b(?:up to|under|below|less than|at most|no more than|not above|not over|max(?:imum)?(?: of)?|within|"
        r"smaller than|(?:no|not) (?:bigger|larger|greater|more) than|to|until|till|<=?)\s+(\d+)\b"
        r"(?![\s-]*(?:steps?|minutes?|mins?|hours?|hrs?|turns?|tokens?|calls?|"
        rf"seconds?|secs?|iterations?|updates?|rounds?|players?|b\b|m\b|billion|million|%|{_COUNT_NOUNS}))"
    )),
    ("at_least", re.compile(
        r"(?<!not )(?<!no )\b(?:over|above|more than|at least|bigger than|larger than|greater than|exceeding|>=?)\s+"
        r"(\d+)\b"
        rf"(?![\s-]*(?:steps?|minutes?|mins?|hours?|hrs?|seconds?|iterations?|updates?|rounds?|players?|turns?|tokens?|"
        rf"calls?|%|{_COUNT_NOUNS}))"
    )),
)  # fmt: skip
# Counts said without a number: "multi-step problems" (2 or more), "several operations" (about 3)
_VAGUE_COUNTS: tuple[tuple[int, re.Pattern[str]], ...] = (
    (3, re.compile(r"\b(?:several|multiple|many)\s+steps?\b")),
    (2, re.compile(r"(?<!not )(?<!no )(?<!non-)(?<!non )\bmulti[\s-]?step\b")),  # not "not multi-step"
    (3, re.compile(r"\b(?:several|multiple|many)\s+(?:arithmetic\s+)?(?:operations?|ops)\b")),
)
# "long shopping lists", "many items": a list of the most items tool_use deals (4)
_MANY_ITEMS = re.compile(
    r"\b(?:long|longer|big|bigger|large|larger)\s+(?:shopping|grocery)\s+lists?\b|\b(?:long|longer)\s+lists\b|"
    r"\b(?:many|lots of|a lot of|more)\s+items\b"
)
# "numbers up to 100, 5 of them": a count said after its noun
_OF_THEM = re.compile(
    r"\b(numbers|operands|cards|items|products|goods|ingredients|terms)\b[^;.]{0,40}?\b(\d+)\s+of\s+(?:them|those|these)\b"
)
# A puzzle spelled out: "using 3, 7, 25, 50, 75 and 100" (how many numbers), "the target 250" / "reach 952 from"
LISTED_NUMBERS = re.compile(r"\b\d+(?:\s*,\s*\d+)+(?:\s*,?\s*(?:and|&)\s*\d+)?\b")
_TARGET = re.compile(
    r"\btarget(?:\s+(?:number|value|total))?\s*(?:of|is|=|:)?\s*(?:always\s+|fixed at\s+)?(\d+)\b|"
    r"\b(?:reach|make|get to|hit)\s+(\d+)\s+(?:from|with|using|out of)\b|"
    r"\b(?:reach|make|get to|hit)\s+exactly\s+(\d+)\b|"  # "countdown to hit exactly 1000"
    r"\bnumbers\s+\d+(?:\s*,\s*\d+)+(?:\s*,?\s*and\s+\d+)?\s+to\s+(?:make|reach|get|hit)\s+(\d+)\b"  # numbers first
)
_SIZE_WORDS = re.compile(
    r"\b(big|bigger|large|larger|huge|small|smaller|tiny|little)\s+(?:numbers?|amounts?|targets?|values?|sums?)\b|"
    r"\b(?:numbers?|amounts?|targets?)\s+(?:are\s+|stay\s+)?(small|big|large)\b"
)
_MAGNITUDE = re.compile(r"\b(?:in|into|up in) the (hundreds|thousands|millions)\b")  # "numbers in the thousands"
_MAGNITUDES = {"hundreds": 100, "thousands": 1000, "millions": 1_000_000}
_NEAR = re.compile(  # "targets near 1000", "amounts around 300": a range about the number, +-20%
    r"\b(?:targets?|numbers?|amounts?|prices?|values?|answers?|results?)\s+(?:of\s+)?(?:near|around|about|roughly|"
    r"approximately|close to)\s+(\d+)\b"
)
_BETWEEN = re.compile(
    rf"\b(?:between|from)\s+(\d+)\s+(?:and|to)\s+(\d+)\b(?!\s*(?:steps?|minutes?|hours?|{_COUNT_NOUNS}))|"
    r"\b(?:targets?|numbers?|prices?|amounts?|values?|answers?)\s+(?:of\s+|from\s+|in\s+)?(\d+)\s*[-\u2013]\s*(\d+)\b"
)  # "targets 100-999"


@dataclass(frozen=True)
class Cue:
    """One numeric cue as the sentence wrote it: `kind`, its value(s) and the words it came from."""

    kind: CueKind
    value: int
    words: str
    second: int | None = None  # the other side of a grid ("5x6"), or a range's upper end

    @property
    def noun(self) -> str:
        """The counted noun of a count cue ("numbers", "items"), else ''."""
        found = re.search(r"[a-z]+$|^[a-z]+(?=\s*[:=]\s*\d+$)", self.words)  # "6 numbers", "items: 4"
        return found.group(0) if found and self.kind == "count" else ""


def with_digits(text: str) -> str:
    """`text` with number words written as digits ("twenty-five" -> 25, "a hundred" -> 100, "two-digit" -> 2-digit).

    "one" stays where it is no count ("one of the villagers", "one-word answers")."""
    text = _A_HUNDRED.sub(lambda m: "1 " + m.group(1), text).replace("a million", "1000000")
    text = re.sub(r"\b\d{1,3}(?:,\d{3})+\b(?!,\d)", lambda m: m.group(0).replace(",", ""), text)  # "1,000 steps"
    text = re.sub(r"\$\s?(\d+(?:\.\d+)?)\b", r"\1 dollars", text)  # "prices under $5"
    text = _KEEP_ONE.sub("\0", text)

    def _value(match: re.Match[str]) -> str:
        if match.group("tens"):
            number = _TENS[match.group("tens")] + (_UNITS[match.group("ones")] if match.group("ones") else 0)
        else:
            number = _UNITS[match.group("few") or match.group("unit")]
        if match.group("hundred"):
            number *= 100 if match.group("hundred") == "hundred" else 1000
        return str(number)

    text = re.sub(r"\b(every|each)\s+single\b", r"\1", text)  # "every single player": no count
    text = _DOZENS.sub(_dozens, text)
    text = _NUMBER_WORDS.sub(_value, text)
    text = _HUNDREDS.sub(_times, text).replace("\0", "one")
    return _with_exponents(_THOUSANDS_K.sub(_thousands, text))


# "1 e minus 4", "3 x 10^-5", "10^-4": a rate as written in words or maths -> "1e-4", "3e-5", "1e-4"
_E_MINUS = re.compile(r"\b(\d+(?:\.\d+)?)\s*e\s*(?:minus\s*|-\s*|negative\s*)(\d+)\b")
_TIMES_TEN = re.compile(
    r"\b(\d+(?:\.\d+)?)\s*(?:x|\*|\u00d7|times)\s*10\s*(?:\^|\*\*|to the(?: power of)?)\s*\(?\s*"
    r"(?:-|minus\s*|negative\s*)(\d+)\)?"
)
_TEN_TO = re.compile(r"(?<![\d.])\b10\s*(?:\^|\*\*)\s*\(?\s*-\s*(\d+)\)?")
_THOUSANDS_K = re.compile(  # "2k steps", "1.5k games", "10 million steps": a count in thousands or millions
    r"\b(\d+(?:\.\d+)?)\s*(k|million|mil)\b(?=\s+(?:more\s+)?(?:training\s+)?(?:steps?|iterations?|updates?|episodes?|games?|items?|"
    r"problems?|puzzles?|questions?|samples?))"
)


def _dozens(match: re.Match[str]) -> str:
    """"2 dozen", "three dozen" -> 24, 36 (before the number words, where "dozen" alone is 12)."""
    count = match.group(1)
    return str((int(count) if count.isdigit() else _UNITS[count]) * 12)


def _thousands(match: re.Match[str]) -> str:
    return str(round(float(match.group(1)) * (1000 if match.group(2) == "k" else 1_000_000)))


def _with_exponents(text: str) -> str:
    text = _E_MINUS.sub(r"\1e-\2", text)
    text = _TIMES_TEN.sub(r"\1e-\2", text)
    return _TEN_TO.sub(r"1e-\1", text)


def _times(match: re.Match[str]) -> str:
    return str(int(match.group(1)) * (100 if match.group(2) == "hundred" else 1000))


_NUMBER_AS_WRITTEN = r"(?:\d+|a (?:hundred|thousand)|" + re.sub(r"\(\?P<\w+>", "(?:", _NUMBER_WORDS.pattern) + ")"


def _quoted(words: str, said: str | None) -> str:
    return as_written(words, said) if said is not None else words


def as_written(words: str, said: str) -> str:
    """`words` of the digit-form text as `said` wrote them ("1 digits" -> "single digits"); `words` if not found."""
    parts = re.split(r"(\d+)", words)
    pattern = "".join(_NUMBER_AS_WRITTEN if part.isdigit() else re.escape(part) for part in parts)
    candidates = list(re.finditer(r"(?<![\w-])" + pattern, said))
    same = [m for m in candidates if with_digits(m.group(0)) == words]  # "one-digit", not the "two-digit" before it
    found = same or candidates
    return found[0].group(0) if found else words


def _bound(words: str) -> CueKind:
    """A range said of targets ("targets near 1000") bounds a countdown target, not a price or an amount."""
    return "target" if words.startswith("target") else "at_least"


def read_cues(text: str, said: str | None = None) -> tuple[Cue, ...]:
    """The numeric cues of `text` (lowercase, number words already digits), in the order written; with `said`
    (the same text before `with_digits`) each cue's `words` are quoted as the sentence wrote them."""
    found: list[tuple[int, Cue]] = []
    taken: list[tuple[int, int]] = []
    for kind, pattern in _CUES:
        for match in pattern.finditer(text):
            if any(start <= match.start() < end for start, end in taken):
                continue
            second = int(match.group(2)) if kind == "grid" else None
            value = int(next(group for group in match.groups() if group is not None))
            words = _quoted(match.group(0), said)
            found.append((match.start(), Cue(kind, value, words, second)))
            taken.append(match.span())
    for value, pattern in _VAGUE_COUNTS:
        for match in pattern.finditer(text):
            words = _quoted(match.group(0), said)
            found.append((match.start(), Cue("operations", value, words)))
    for match in _MANY_ITEMS.finditer(text):
        found.append((match.start(), Cue("count", 4, f"{_quoted(match.group(0), said)}: 4 items")))
    for match in _OF_THEM.finditer(text):
        count, noun = int(match.group(2)), match.group(1)
        words = _quoted(text[match.start(2) : match.end()], said)
        found.append((match.start(2), Cue("count", count, f"{words}: {count} {noun}")))
    for match in LISTED_NUMBERS.finditer(text):
        count = len(re.findall(r"\d+", match.group(0)))
        if count >= 3 and not any(start <= match.start() < end for start, end in taken):
            found.append((match.start(), Cue("listed", count, f"{_quoted(match.group(0), said)}: {count} numbers")))
    for match in _TARGET.finditer(text):
        target = int(next(group for group in match.groups() if group))
        found.append((match.start(), Cue("target", target, _quoted(match.group(0), said), target)))
    for match in _SIZE_WORDS.finditer(text):  # "big numbers", "large targets": the ends of the ranges
        if any(start <= match.start() < end for start, end in taken):
            continue  # "6 small numbers": a count of numbers already
        small = (match.group(1) or match.group(2)) in ("small", "smaller", "tiny", "little")
        low, high = (1, 10) if small else (100, 999)
        sized: CueKind = "target" if "target" in match.group(0) else "size"  # countdown sizes only its targets
        found.append((match.start(), Cue(sized, low, _quoted(match.group(0), said), high)))
    for match in _MAGNITUDE.finditer(text):
        low = _MAGNITUDES[match.group(1)]
        found.append((match.start(), Cue("at_least", low, match.group(0), low * 10 - 1)))
    for match in _NEAR.finditer(text):
        near = int(match.group(1))
        words = _quoted(match.group(0), said)
        found.append((match.start(), Cue(_bound(words), max(1, near * 4 // 5), words, near * 6 // 5)))
    for match in _BETWEEN.finditer(text):
        found = [(at, cue) for at, cue in found if not match.start() <= at < match.end()]  # "from 1 to 9", not "to 9"
        low, high = sorted(int(group) for group in match.groups() if group)
        words = _quoted(match.group(0), said)
        found.append((match.start(), Cue(_bound(words), low, words, high)))
    return tuple(cue for _, cue in sorted(found, key=lambda pair: pair[0]))


_GRADE_ORDINALS = {
    "first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5, "sixth": 6, "seventh": 7, "eighth": 8, "ninth": 9,
    "tenth": 10,
}  # fmt: skip
_AGE = re.compile(  # "for a 10 year old", "kids aged 7": a child's age, read as the grade of that age
    r"\b([5-9]|1[0-7])[- ]years?[- ]olds?\b|\b(?:aged?|age of)\s+([5-9]|1[0-7])\b(?!\s*(?:steps?|minutes?))"
)
_GRADE = re.compile(  # "grade 5", "class 3 level", "year 4", "5th grade", "fifth graders": a school grade
    r"\b(?:grade|class|year|standard)\s+(\d{1,2})\b(?![\s-]*(?:steps?|minutes?|hours?|levels?\s+\d))|"
    rf"\b(\d{{1,2}}(?=st|nd|rd|th)|{'|'.join(_GRADE_ORDINALS)})(?:st|nd|rd|th)?[- ](?:grade|graders?|class)\b"
)

_SCHOOL = re.compile(  # "math for high schoolers", "middle school word problems": the school's first grade
    r"\b(?:(high|secondary)[- ]school(?:ers?)?|(?:middle[- ]school(?:ers?)?|junior[- ]high))\b"
)


def read_grade(text: str) -> tuple[int, str] | None:
    """A school grade the sentence names and its words ("5th grade" -> (5, "5th grade")), if any; a child's age
    is the grade of that age ("for a 10 year old": grade 5), and a school its first grade ("high school": 9)."""
    if age := _AGE.search(text):
        return max(1, min(12, int(age.group(1) or age.group(2)) - 5)), age.group(0)
    if not (match := _GRADE.search(text)):
        school = _SCHOOL.search(text)
        return (9 if school.group(1) else 7, school.group(0)) if school else None
    number = match.group(1) or match.group(2)
    return (int(number) if number.isdigit() else _GRADE_ORDINALS[number]), match.group(0)
