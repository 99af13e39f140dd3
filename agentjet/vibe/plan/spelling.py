"""Typos of the planner's keywords read as the keywords ("werwolves", "arithmatic", "whitch" where the game is named).

Pure. A word one slip from a long keyword is read as it, unless it is an English word of its own (found by
matching SmolLM2's vocabulary against the keywords); role words, shorter, only in a sentence that names the game.
"""

from __future__ import annotations

import difflib
import re

from agentjet.vibe.plan.families import GAME_NAMES

__all__ = ["spelled"]

# Words a typo is read as: long keywords that no common English word lies one slip from (not shopping: stopping).
_VOCABULARY = frozenset(
    "werewolf werewolves village villager villagers detective countdown arithmetic mathematics multiplication "
    "subtraction calculator difficulty difficult discussion".split()
)
# English words one slip from a keyword, kept as written ("calculation" is no misspelt "calculator"): found by
# matching every alphabetic token of SmolLM2's vocabulary (24k words) against `_VOCABULARY`
_REAL_WORDS = frozenset(
    "calculation calculations calculators defective detectives difficulties discussing discussions mathematic "
    "mathematical mathematicians subtracting tillage villages".split()
)
_LETTERS = re.compile(r"[a-z]{5,}")
_GAME_NAMED = re.compile(r"\b(?:" + "|".join(sorted(map(re.escape, GAME_NAMES), key=len, reverse=True)) + ")")
_ROLE_LETTERS = re.compile(r"\b[a-z]{4,}\b")
# Slips no English word shares, read wherever they stand ("8 stpes", "the town doesnt train")
_COMMON_SLIPS = {
    "stpes": "steps", "setps": "steps", "stesp": "steps", "stpe": "step", "steos": "steps", "minuts": "minutes",
    "mintues": "minutes", "doesnt": "doesn't", "dont": "don't", "isnt": "isn't", "arent": "aren't",
    "shouldnt": "shouldn't", "didnt": "didn't", "wouldnt": "wouldn't", "differnt": "different",
    "diffrent": "different", "seperate": "separate", "seprate": "separate", "separte": "separate",
    "seperately": "separately", "modles": "models", "modle": "model", "trian": "train", "tarin": "train",
    "trainig": "training", "traning": "training", "mathh": "math", "maht": "math", "problms": "problems",
    "probelms": "problems", "porblems": "problems", "problmes": "problems", "puzzels": "puzzles", "puzles": "puzzles",
    "puzzel": "puzzle", "stepz": "steps", "traine": "train", "lernrate": "learning rate", "learnrate": "learning rate",
    "learningrate": "learning rate",
}  # fmt: skip
_SLIPS = re.compile(r"\b(?:" + "|".join(_COMMON_SLIPS) + r")\b")
_SHORT_ROLE_SLIPS = {"sear": "seer", "wich": "witch"}  # four letters: too short for the ratio
_ROLE_WORDS = ("seer", "seers", "witch", "witches", "hunter", "hunters", "villager", "villagers")
# English words one slip from a role word, kept as written: SmolLM2's vocabulary matched against `_ROLE_WORDS`
_REAL_NEAR_ROLES = frozenset(
    "asers beers counters ditch ditches eers eners erers eters ezers hitch hunger hunt hunted hunts isers itch itches "
    "itchy kitchens oles olives olve olves ounter ounters oves peers pitch pitches seeds seekers seeks seems sees "
    "seller sellers sender serbs sers server servers setter sever severe sewer sexes sheer soever solves spers steer "
    "sters stitches swers switch switched switches swith tillage users uter uters village villages watch watches "
    "which wholes width with seen seem seed seek deer beer peer".split()
)


def spelled(text: str) -> str:
    """`text` with each long word that is a near miss of a keyword replaced by it ("werwolves" -> "werewolves")."""

    def _fix(match: re.Match[str]) -> str:
        word = match.group(0)
        if word in _VOCABULARY or word in _REAL_WORDS:
            return word
        close = difflib.get_close_matches(word, _VOCABULARY, n=1, cutoff=0.85)
        return close[0] if close else word

    text = _SLIPS.sub(lambda m: _COMMON_SLIPS[m.group(0)], _LETTERS.sub(_fix, text))
    if _GAME_NAMED.search(text):  # role words, only where the game is named ("whitch")
        text = _ROLE_LETTERS.sub(_role_fix, text)
    return text


def _role_fix(match: re.Match[str]) -> str:
    word = match.group(0)
    if word in _ROLE_WORDS or word in _REAL_NEAR_ROLES:
        return word
    close = difflib.get_close_matches(word, _ROLE_WORDS, n=1, cutoff=0.8)
    return close[0] if close else _SHORT_ROLE_SLIPS.get(word, word)
