"""Roles said by what they do, read as the role's name: "the role that checks identities at night" is the seer.

Pure. `named_roles(text)` rewrites each description into the role word the rest of the planner reads ("the
seer", "the witch", "the hunter", "the wolves"), and "Town of Salem" into the game it is played as, with a note
for each that quotes the words as written.
"""

from __future__ import annotations

import re

__all__ = ["named_roles"]

_WHO = (  # "the role that ...", "the one who ...", "whoever gets to ..."
    r"(?:\bthe\s+(?:(?:werewol\w*|mafia|game's|village's)\s+)?(?:one|role|player|person|guy|girl|character|card)\s+"
    r"(?:who|that|which|with)\s+|\bwhoever\s+)(?:gets?\s+to\s+|can\s+)?"
)
_VILLAGE = "the village side"
_DESCRIBED: tuple[tuple[re.Pattern[str], str, str], ...] = (
    (re.compile(rf"{_WHO}(?:checks?|inspects?|investigates?|sees?|learns?|peeks?\s+at|looks?\s+at|finds?\s+out)\b"
                r"[^,.;]*?\b(?:identit(?:y|ies)|roles?|sides?|cards?|(?:at|each|every)\s+night)\b"),
     "the seer", "the seer"),  # fmt: skip
    (re.compile(rf"{_WHO}(?:(?:has|holds|uses|owns|carries|brews|gets)\s+)?(?:the\s+)?(?:[\w-]+\s+){{0,4}}?potions?\b"),
     "the witch", "the witch"),  # fmt: skip
    (re.compile(rf"{_WHO}(?:shoots?|fires?|takes?\s+(?:someone|somebody|a player|another player|one player|a wolf))"
                r"\b[^,.;]*?\b(?:when|if|as)\s+(?:he|she|they|it)\s+(?:dies|die|is killed|gets killed)\b"),
     "the hunter", "the hunter"),  # fmt: skip
    (re.compile(r"\bthe\s+(?:side|team|roles?|players?|ones?)\s+(?:who|that|which)\s+(?:kills?|eats?|murders?|hunts?)"
                r"\s+(?:\w+\s+){0,2}?(?:at|by|each|every)\s+night\b"),
     "the wolves", "the werewolves"),  # fmt: skip
    (re.compile(r"\btown of salem\b"), "werewolves", "the built-in werewolves game"),
    (re.compile(r"\bthe\s+(?:roles?|players?|ones?|villagers?)\s+(?:that|who|which|with)\s+(?:have|has)\s+no\s+"
                r"(?:special\s+)?(?:powers?|abilit(?:y|ies))\b|\bthe\s+(?:roles?|players?)\s+without\s+(?:a\s+)?"
                r"(?:special\s+)?(?:powers?|abilit(?:y|ies))\b"),
     "the plain villagers", "the plain villagers"),  # fmt: skip
    (re.compile(r"\bthe\s+(?:players|side|ones|team|people)\s+(?:(?:that|who|whom)\s+)?the\s+(?:wolves|werewolves|"
                r"godfather|mafia|killers)\s+(?:are|is)\s+(?:trying\s+to\s+)?(?:eat|kill|hunt|murder)\w*|"
                r"\bthe\s+(?:side|team|players|ones)\s+(?:that|who)\s+wins?\s+when\s+(?:every|each|all(?:\s+the)?|the\s+"
                r"last)\s+(?:wol\w+|werewol\w+)\s+(?:is|are)\s+(?:dead|gone|killed|out)"),
     "the village", _VILLAGE),  # fmt: skip
    (re.compile(r"\bfewer\s+(?:wolves|werewolves)\s+(?:should\s+)?surviv\w*|\b(?:more|most)\s+games\s+(?:of\s+"
                r"werewol\w+\s+)?(?:should\s+)?end\s+with\s+(?:every|each|all(?:\s+the)?)\s+(?:wol\w+|werewol\w+)\s+"
                r"dead"),
     "the village should win", _VILLAGE),  # fmt: skip
)


def named_roles(text: str) -> tuple[str, tuple[str, ...]]:
    """`text` with each role said by what it does replaced by the role's name, and a note for each."""
    notes: list[str] = []
    for pattern, name, meaning in _DESCRIBED:

        def named(found: re.Match[str], name: str = name, meaning: str = meaning) -> str:
            notes.append(f"'{found.group(0)}' read as {meaning}")
            return name

        text = pattern.sub(named, text)
    return text, tuple(notes)
