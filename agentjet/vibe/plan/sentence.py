"""Read a task sentence by keywords: which built-in families it names and the parameters it states.

Pure and deterministic: the same sentence always gives the same `Reading`. The planner turns a
reading into a spec; everything here is what the sentence *said*, never a default.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from agentjet.vibe.plan.families import VILLAGE_ROLES

__all__ = ["ROLE_ALIASES", "Reading", "read_sentence"]

# Family keywords, in priority order: the first family that matches wins (a calculator agent
# solving word problems is tool use; a countdown puzzle is not plain arithmetic).
_FAMILY_PATTERNS: dict[str, tuple[str, ...]] = {
    "werewolves": (r"\bwere[- ]?wol(?:f|ves)\b", r"\bwolves\b", r"\bmafia\b", r"\bsocial[- ]deduction\b"),
    "tool_use": (
        r"\btools?\b",
        r"\btool[- ]?(?:use|using|calling|calls?)\b",
        r"\bcalculators?\b",
        r"\blook[- ]?ups?\b",
        r"\blook (?:things|facts|it|them) up\b",
        r"\b(?:take|taking|keep|keeping) notes?\b",
        r"\bnote[- ]?taking\b",
        r"\bfunction[- ]?call",
        r"\bshopping\b",
    ),
    "countdown": (
        r"\bcount[- ]?down\b",
        r"\bnumbers game\b",
        r"\breach (?:the|a) target\b",
        r"\btarget numbers?\b",
        r"\b(?:24 game|game of 24|make 24)\b",
    ),
    "arithmetic": (
        r"\barithmetics?\b",
        r"\bmaths?\b",
        r"\bmathematics\b",
        r"\bword problems?\b",
        r"\bgsm(?:8k)?\b",
        r"\bgrade[- ]school\b",
        r"\b(?:addition|subtraction|multiplication|division|times tables?|equations?|sums?)\b",
        r"\b(?:add|adding|multiply|multiplying) (?:up )?(?:two |the )?numbers\b",
    ),
    "word": (r"\bsay (?:the|a|one) word\b", r"\bfirst word\b", r"\bone[- ]word (?:answers?|repl(?:y|ies))\b"),
}

_TEXT_REQUEST = re.compile(
    r"^(?:please\s+)?(?:write|compose|draw|paint|tell|explain|summari[sz]e|translate|what|who|why|when|where|"
    r"how (?:do|does|can|is|are))\b"
)
_SIZE = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)\s*(b|bn|billion|m|million)\b")
_MODEL_NAME = re.compile(r"\b(qwen|llama|mistral|gemma|phi|smollm|deepseek|olmo|gpt-?2)[\w.-]*")
_SMALL = re.compile(r"\b(?:small|tiny|little|smallest|toy)\s+(?:\w+\s+)?(?:model|llm|lm|agent)\b")
_STEPS = re.compile(r"\b(\d+)[\s-]*(?:training\s+|rl\s+|grpo\s+|gradient\s+)?(?:steps?|iterations?|updates?)\b")
_MINUTES = re.compile(r"\b(\d+(?:\.\d+)?)\s*(minutes?|mins?|hours?|hrs?|h)\b")
_LEVEL = re.compile(r"\b(?:level|difficulty|lvl)[\s:=-]*(\d+)\b")
_LEVEL_WORDS: tuple[tuple[str, str], ...] = (
    ("hardest", r"\b(?:hardest|very hard|very difficult|extremely hard|max(?:imum)? difficulty)\b"),
    ("hard", r"\b(?:hard|harder|difficult|challenging|tough|advanced)\b"),
    ("medium", r"\b(?:medium|moderate|intermediate)\b"),
    ("easy", r"\b(?:easy|easier|simple|basic|beginner)\b"),
)
_NO_TALK = re.compile(r"\b(?:without|no)\s+(?:any\s+)?(?:discussion|talk(?:ing)?|chat(?:ting)?|speech)\b|\bsilent\b")
_TALK = re.compile(r"\bwith\s+(?:discussion|talk(?:ing)?|chat)\b")

# Role words -> the werewolves roles they mean (a plural of the village means the whole side).
_SIDE = VILLAGE_ROLES
ROLE_ALIASES: dict[str, tuple[str, ...]] = {
    "seer": ("seer",),
    "detective": ("seer",),
    "cop": ("seer",),
    "witch": ("witch",),
    "doctor": ("witch",),
    "hunter": ("hunter",),
    "villager": ("villager",),
    "villagers": _SIDE,
    "village": _SIDE,
    "town": _SIDE,
    "townsfolk": _SIDE,
    "townspeople": _SIDE,
    "werewolf": ("werewolf",),
    "werewolves": ("werewolf",),
    "were-wolves": ("werewolf",),
    "wolf": ("werewolf",),
    "wolves": ("werewolf",),
    "mafia": ("werewolf",),
}
_ROLE = "(?:" + "|".join(sorted(map(re.escape, ROLE_ALIASES), key=len, reverse=True)) + ")"
_ONE_ROLE = rf"(?:the |a |an )?{_ROLE}"
_ROLE_LIST = rf"{_ONE_ROLE}(?:\s*(?:,|and|&|\+)\s*{_ONE_ROLE})*"
_ROLE_PHRASES = (
    re.compile(rf"\bas (?:one of )?({_ROLE_LIST})\b"),
    re.compile(rf"\b({_ROLE_LIST})(?:'s)? (?:side|team|faction|camp)\b"),
    re.compile(
        rf"\b(?:train|teach|play|playing|plays|for|on|with) ((?:the|a|an) {_ROLE}(?:\s*(?:,|and|&)\s*{_ONE_ROLE})*)"
        rf"\b(?!\s+(?:games?|side|team|{_ROLE})\b)"
    ),
    re.compile(rf"\b(?:train|teach|coach) ({_ROLE_LIST})\b(?!\s+(?:games?|side|team)\b)"),  # "train villagers"
    re.compile(rf"\b(?:and|&) ((?:the|a|an) {_ROLE})\b(?!\s+games?\b)"),  # "the village side and the wolves"
)


@dataclass(frozen=True)
class Reading:
    """What a sentence states, word for word (None/empty when it does not say)."""

    text: str  # lowercased, whitespace collapsed
    families: tuple[str, ...]  # matched families, best first
    size: str | None  # "7B", "0.5B", "135M"
    model_name: str | None  # "qwen", "llama", "smollm", ...
    small: bool  # "a small model"
    steps: int | None
    minutes: float | None
    level: int | None  # "level 3", "difficulty 2"
    level_word: str | None  # "easy", "medium", "hard", "hardest"
    role_words: tuple[str, ...]  # role words as written, in order ("detective", "village")
    discussion: bool | None
    is_text_request: bool  # "write me a poem": asks for text, not training

    @property
    def requested_model(self) -> str | None:
        """What model the sentence asked for, in its words ("qwen 7B", "7B", "a small model")."""
        parts = [p for p in (self.model_name, self.size) if p]
        if parts:
            return " ".join(parts)
        return "a small model" if self.small else None

    @property
    def understood(self) -> list[str]:
        """The facts found, for a refusal message."""
        facts = [f"model {self.requested_model}"] if self.requested_model else []
        facts += [f"{self.steps} steps"] if self.steps else []
        facts += [f"{self.minutes:g} minutes"] if self.minutes else []
        facts += [f"difficulty {self.level or self.level_word}"] if self.level or self.level_word else []
        facts += [f"roles {', '.join(self.role_words)}"] if self.role_words else []
        return facts


def read_sentence(sentence: str) -> Reading:
    """The facts a sentence states; pure."""
    text = " ".join(sentence.lower().split())
    families = tuple(f for f, pats in _FAMILY_PATTERNS.items() if any(re.search(p, text) for p in pats))
    name = _MODEL_NAME.search(text)
    return Reading(
        text=text,
        families=families,
        size=_size(text),
        model_name=name.group(1).replace("-", "") if name else None,
        small=bool(_SMALL.search(text)),
        steps=_int(_STEPS, text),
        minutes=_minutes(text),
        level=_int(_LEVEL, text),
        level_word=next((word for word, pat in _LEVEL_WORDS if re.search(pat, text)), None),
        role_words=_role_words(text),
        discussion=False if _NO_TALK.search(text) else True if _TALK.search(text) else None,
        is_text_request=bool(_TEXT_REQUEST.search(text)) and not re.search(r"\b(?:train|teach|rl)\b", text),
    )


def _int(pattern: re.Pattern[str], text: str) -> int | None:
    match = pattern.search(text)
    return int(match.group(1)) if match else None


def _size(text: str) -> str | None:
    for match in _SIZE.finditer(text):
        value, unit = float(match.group(1)), match.group(2)[0]
        if unit == "b" and 0.01 <= value <= 2000:
            return f"{value:g}B"
        if unit == "m" and 10 <= value < 1000:
            return f"{value:g}M"
    return None


def _minutes(text: str) -> float | None:
    match = _MINUTES.search(text)
    if match:
        return float(match.group(1)) * (60.0 if match.group(2).startswith("h") else 1.0)
    if re.search(r"\bhalf an hour\b", text):
        return 30.0
    if re.search(r"\b(?:an|one) hour\b", text):
        return 60.0
    return None


def _role_words(text: str) -> tuple[str, ...]:
    """Role words in role phrases, the clearest phrase kind first ("as the seer", then "village side", ...)."""
    found: list[tuple[int, int, str]] = []
    for rank, phrase in enumerate(_ROLE_PHRASES):
        for match in phrase.finditer(text):
            start = match.start(1)
            for word in re.finditer(_ROLE, match.group(1)):
                found.append((rank, start + word.start(), word.group(0)))
    ordered = [word for _, _, word in sorted(set(found))]
    return tuple(dict.fromkeys(ordered))
