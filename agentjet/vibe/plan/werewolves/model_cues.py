"""The words that say how werewolves roles go on models: separate or shared, one per side or per role, a role's own.

Pure patterns over the lowercased sentence (number words already digits), read by `roles.read_roles`;
`MODEL_WORDS` is also what `groups.py` calls a model.
"""

from __future__ import annotations

import re

__all__ = [
    "ALL_ROLES_APART", "EVERYONE_OWN", "MODEL_WORDS", "ONE_MORE_FOR", "OWN_AFTER", "PER_ROLE", "PER_SIDE", "PLAYS",
    "SEPARATE", "SEPARATE_FOR", "SHARED",
]  # fmt: skip

# "everyone gets their own model": every role trains, one model each
EVERYONE_OWN = r"\b(?:everyone|everybody)\s+(?:gets?|has|have|with|on)\s+(?:their|its|his|her|an?)\s+own\b"
ALL_ROLES_APART = (  # "all roles separate", "every role separate": separate models, one a role
    r"\b(?:all|every|each)\s+(?:the\s+)?roles?\s+(?:is\s+|are\s+|kept\s+|stays?\s+)?(?:separate|separately|apart)\b"
)
MODEL_WORDS = _MODEL = (
    r"(?:models?|polic(?:y|ies)|weights|networks?|nets?|llms?|loras?|adapters?|parameters|params|brains?|agents?)"
)
PLAYS = _PLAYS = r"(?:plays|play|playing|runs|controls|handles|drives)"  # "one model plays the wolves, another ..."
_NOT_RANK = r"(?<!rank )(?<!rank=)(?<!rank-)(?<!r=)"  # "rank 8 lora" is the adapter's rank, not 8 models
_GAME_AFTER = r"\s(?:in|at|for|of)\s+(?:the\s+)?(?:werewol\w*|mafia)\b"  # "... the village another in werewolves"
_SIZE = r"\d+(?:\.\d+)?\s*[bm]\b"
_SIZE_WORD = r"(?:billion|million|trillion|thousand|bn|[bmk])\b"  # "7 billion parameters", "7 billion-parameter model"
_GIVEN_A = r"(?:with|on|uses?|using|gets?|runs?)"  # "... use a 0.5B": a size given to a side
_FOR_A_ROLE = rf"{_SIZE}(?:\s+model)?\s+(?:for|playing|plays|to play|as)\b"  # "a 3B for the wolves"
SEPARATE = re.compile(
    r"\b(?:first|1st)\s+(?:\w+\s+)?(?:models?|polic(?:y|ies)|loras?|adapters?)\b.*\b(?:second|2nd)\b|"  # "first LoRA"
    rf"\b{_FOR_A_ROLE}.*\b{_FOR_A_ROLE}|"  # a model size per side: one size trains (the note says), two policies
    rf"\bon\s+(?:\w+\s+)?{_SIZE}.*\bon\s+(?:\w+\s+)?{_SIZE}|"  # "wolves on qwen 0.5B, seer on qwen 1.5B"
    rf"\b{_SIZE}\s+for\s+(?:the\s+)?\w+.*\b{_SIZE}\s+for\b|"
    r"\bseparate\s*[:=]\s*(?:true|yes|1)\b|"  # "separate: true"
    r"(?<!no )(?<!not )(?<!without )"
    r"\b(?:separate|distinct|independent|different|individual|non[- ]?shared|unshared|own|dedicated)\s+"
    rf"(?:\w+\s+)?{_MODEL}\b|"
    rf"{_NOT_RANK}\b(?:[2-9]|several|multiple)\s+(?!{_SIZE_WORD})(?:(?!(?:and|or|of|to|with|as)\b)[\w.-]+\s+)?"
    rf"{_MODEL}\b|"
    rf"\bper[- ](?:side|team|role)\s+{_MODEL}\b|"  # "per-side models"
    r"\b(?:1|one|a)\s+(?:\w+\s+)?per\s+(?:side|team|role)\b|"
    rf"\b(?:1|a|an)\s+{_MODEL}\s+(?:per|for each|for every|each)\b|\b{_MODEL}\s+per\s+(?:side|team|role|player)\b|"
    rf"\b(?:not|no|don'?t|do not|without)\s+shar(?:e|ed|ing)\b|\bnot\s+(?:in|on)\s+the\s+same\s+{_MODEL}\b|"
    rf"\b(?:one|{_MODEL}) for the\b.*\bone for\b|"
    rf"\b(?:its|their) own\b(?=\s*(?:$|[,.;!?]))|\b{_MODEL}\s+of\s+(?:its|their|his|her) own\b|"
    rf"\b{_MODEL}\s+for\b.*\b(?:another|a second|the other)(?:\s+{_MODEL}|\s+one)?(?:\s+for\b|\s*(?:$|[,.;!?]))|"
    rf"\b(?:in|on|with|as)\s+(?:1|one|a)\s+{_MODEL}\b.*\b(?:in|on|with|as)\s+(?:another|a second|the other)"
    rf"(?:\s+{_MODEL}|\s+(?:one|1))?\s*(?:$|[,.;!?]|{_GAME_AFTER})|"  # "the wolves in (as) one model, the village in
    # another"
    r"\b(?:train(?:ed|s|ing)?|learn(?:s|ing|ed)?),?\s+(?:\w+,?\s+){0,4}?(?:separately|independently)\b|"  # not "vote
    r"\b(?:separately|independently)\s+(?:trained|train|learn(?:s|ing)?)\b|" + ALL_ROLES_APART + "|"  # independently"
    rf"\b{_MODEL}\s*[:=]\s*(?:separate|distinct|independent|unshared|not shared|non-?shared|own|apart)\b|"  # "models:
    # separate"
    rf"\b{_GIVEN_A}\s+an?\s+{_SIZE}.*\b{_GIVEN_A}\s+an?\s+{_SIZE}|"  # "a 3B ... on a 7B", "wolves use a 0.5B and
    # villagers use a 1.5B"
    r"\b(?:a|an)\s+(?:separate|different|distinct|independent|second)\s+(?:one|1)\s+(?:as|for|to play|playing)\b|"
    rf"\b(?:1|one|a)\s+{_MODEL}\s+{_PLAYS}\b.*\b(?:another|a second|the other)\s+(?:{_MODEL}\s+|one\s+)?{_PLAYS}\b|"
    rf"\b(?:(?:gets?|has|have|with|on|be|is|are)\s+|(?:give|gives|giving)\s+(?:[\w-]+\s+){{1,4}}?)(?:1|one|a)\s+"
    rf"{_MODEL}\b.*\b(?:another|a second|the other)(?:\s+{_MODEL}|\s+(?:one|1))?\s*(?:$|[,.;!?]|{_GAME_AFTER})"
)
SHARED = re.compile(
    rf"{_NOT_RANK}\b(?:shared|same|single|1|one)\s+(?:shared\s+)?{_MODEL}\b(?!\s+(?:per|for each|for every|each)\b)|"
    rf"\bshar(?:e|es|ing)\s+(?:the\s+|one\s+|a\s+)?(?:same\s+)?{_MODEL}\b|"
    r"\b(?:1|one|a single|the same)\s+set\s+of\s+(?:weights|parameters|params)\b|"
    r"\bno\s+separate\s+(?:models|polic(?:y|ies)|loras|adapters)\b|"
    rf"\b{_MODEL}\s*[:=]\s*(?:shared|one|same|single|1)\b"  # "models: shared"
)
SEPARATE_FOR = re.compile(  # "a separate model for the seer": that role apart from the rest of its side
    rf"\b(?:separate|distinct|independent|different|individual|own|dedicated)\s+(?:\w+\s+)?{_MODEL}\s+"
    r"(?:for|of)\s+(?:the\s+|its\s+|their\s+)?(?P<role>[a-z' -]+)"
)
OWN_AFTER = re.compile(  # "the seer gets its own model", "give the seer its own model": that role apart
    r"^\s+(?:(?:gets?|has|have|with|takes?|getting|having|(?:should|must|will|can)\s+(?:get|have))\s+)?"
    rf"(?:(?:its|their|his|her|an?)\s+(?:own|separate|dedicated)\s+(?:\w+\s+)?{_MODEL}\b|"
    r"(?:its|their|his|her)\s+own\b(?=\s*(?:$|[,.;!?]|and\b|but\b))|"
    rf"(?:an?|one)\s+{_MODEL}\s+of\s+(?:its|their|his|her)\s+own\b)"  # "gets a model of his own"
)
ONE_MORE_FOR = re.compile(
    r"^\s*(?:,\s*|\band\s+|,\s*and\s+|&\s*)(?:(?:1|one|another)\s+(?:more\s+)?for\s+)?(?:the\s+)?(?P<role>[a-z' -]+)"
)
PER_ROLE = re.compile(
    r"\b(?:per|each|every)\s+(?:(?P<side>[\w-]+)\s+)?(?:roles?|players?|seats?)\b|\beach of them\b|"
    r"\b(?:all|every)\s+(?:the\s+)?(?:\w+\s+)?(?:roles|players)\b[^.;]*\b(?:(?:a|one|1)\s+(?:model|policy)\s+(?:each|"
    r"apiece)|each\s+(?:(?:with|on|gets?|getting|has|having)\s+)?(?:an?\s+|its\s+|their\s+|his\s+|her\s+)?"
    r"(?:own|separate|distinct|different)|"
    r"(?:on|with|in)\s+(?:\d+\s+)?(?:separate|distinct|different|individual|their own)\s+"
    r"(?:models|polic(?:y|ies)|loras|adapters))\b|"
    + ALL_ROLES_APART + "|" + EVERYONE_OWN
)
PER_SIDE = re.compile(r"\b(?:per|each|every|both)[\s-]+(?:\w+\s+)?(?:sides?|teams?|factions?|camps?)\b")
