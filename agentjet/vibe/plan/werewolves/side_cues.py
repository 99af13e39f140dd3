"""The words that say more than one side trains ("both sides", "everyone", "self-play"), or that a side does not.

Pure regexes, read by `roles.read_roles`: `BOTH_SIDES` (every role of both sides trains), `BOTH_NAMED` (what is
named trains, opponents too: "the seer vs the wolves, train both") and `ASKED_TO_TRAIN` (a training verb is said,
so roles of both sides named are asked to train, not a lineup: "werewolves with 3 wolves and a seer"); and
`NONE_OF_BEFORE` + `TRAINS_AFTER`, the words around a side said not to train ("nobody on the wolf side trains").
"""

from __future__ import annotations

import re

from agentjet.vibe.plan.werewolves.model_cues import EVERYONE_OWN

__all__ = ["ASKED_TO_TRAIN", "BOTH_NAMED", "BOTH_SIDES", "NONE_OF_BEFORE", "TRAINS_AFTER"]

BOTH_SIDES = re.compile(
    r"\b(?:both|each|either|all|every|the two)\s+(?:of the\s+)?(?:sides?|teams?|factions?|camps?)\b|"
    r"(?<!for )(?<!per )\b(?:all|every|each)\s+(?:single\s+|of the\s+)?(?:(?:werewol\w*|mafia)\s+)?"
    r"(?:roles?|players?|seats?)\b"
    r"(?!\s+(?:gets?\s+|getting\s+|has\s+|having\s+|with\s+|on\s+)?(?:its|their|an?|one|1)\s+(?:own|separate|model|"
    r"polic))|"  # a split
    r"(?:\+|&|\band|\bfor|\bto)\s*(?:everyone|everybody)\s+else\b"
    r"(?!\s+(?:in|of|from|is|are|stays?|scripted|run|played|controlled|driven|handled|as\s+bots?|bots?)\b)"
    r"(?!\s+on\s+(?!another|a second|the other|their own|its own|one\b|a\s+\w+\s+(?:model|lora)))|"
    r"\bself[- ]play\b|\bagainst each other\b|" + EVERYONE_OWN + "|"
    r"\b(?:train|training|trains|teach|teaching|improve|improving)\s+(?:as\s+)?(?:everyone|everybody|all of them)\b"
    r"(?!\s+(?:in|on|of|from)\s+(?:the|this|that|my|our)\s+(?:village|town|team|side|wolf|wolves|pack)\b)|"
    r"\b(?:all|every one of the)\s+\d+\s+(?:(?:werewol\w*|mafia)\s+)?(?:players|seats|roles)\b|"
    r"\b(?:everyone|everybody)(?:\s+else)?\s+(?:but|except|other than|apart from|besides|save for|bar|excluding)\b"
    r"(?!\s+(?:the\s+)?[\w' -]{1,30}?\s+(?:is|are|stays?|remains?)\s+(?:\w+\s+)?(?:scripted|frozen|fixed|bots?|"
    r"heuristic|rule-based|untrained|random)\b)|"  # not "everyone but the seer is scripted": the seer alone
    r"\b(?:everyone|everybody)\s+else\s+(?:shares?|sharing|gets?|uses?|trains?|learns?|(?:is|are|gets?)\s+trained)\b|"
    r"\b(?:everyone|everybody|all (?:the )?players)\s+(?:(?:should|must|will)\s+)?(?:trains?|learns?|improves?|"
    r"(?:is|are|gets?|be)\s+trained)\b|"  # "everyone trains on one shared model"
    r"\btrain\s+(?:all\s+)?(?:the\s+)?(?:rest|others)\b(?!\s+of\s+(?:the\s+)?(?:village|town|team|side|pack))|"
    r"\b(?:2|both)\s+(?:sides|teams|factions|camps)\b"
)
# "train them both", "the seer and the wolves should both improve": both of what is named (both sides if nothing is)
BOTH_NAMED = re.compile(
    r"\b(?:train|training|trains|learn|improve|teach)\s+(?:them\s+)?both\b|"
    r"\bboth\s+(?:of them|(?:(?:should|must|will|can|to)\s+)?(?:learn|train|improve|get better)|"
    r"(?:are\s+|get\s+)?trained)\b|"
    r"\beach\s+(?:trained|train|learns?|learning|improves?|improving|gets? better)\b|"
    r"\b(?:against|vs|versus)\s+(?:the\s+)?(?:trained|learning|learned)\s+"
)
ASKED_TO_TRAIN = re.compile(r"\b(?:train|trains|training|teach|teaches|improve|improves|fine-?tune|rl|learn|learns)\b")
# "nobody on the wolf side trains", "none of the villagers should learn": that side left out (the words before and
# after the role word)
NONE_OF_BEFORE = re.compile(r"\b(?:nobody|no one|noone|none|neither)\s+(?:on|of|in|from|among)\s+(?:the\s+)?$")
TRAINS_AFTER = re.compile(
    r"^(?:\s+(?:side|team|pack|camp|roles?|players?))?\s+(?:(?:should|will|must|may|can|gets? to)\s+)?"
    r"(?:trains?|learns?|improves?|(?:is|are|gets?|be)\s+trained)\b"
)
