"""Which roles "villagers" means: the whole village side, or the three plain villagers.

Pure. "The villagers" is the village side (villager, seer, witch, hunter) unless the sentence says the plain ones:
"(the plain ones)", "the 3 villagers", or a list that names one or two other village roles beside them ("the
villagers and the hunter"), where the side would hold them twice.
"""

from __future__ import annotations

import re

from agentjet.vibe.plan.families import ROLE_ALIASES, ROLE_WORD, VILLAGE_ROLES

__all__ = ["POWER_ROLES", "plain_villagers"]

POWER_ROLES = VILLAGE_ROLES[1:]  # seer, witch, hunter: named beside "villagers", they make them the plain ones
_PLAIN_AFTER = re.compile(r"\s*(?:only\s*|alone\s*)?[(,-]\s*(?:just|only)?\s*(?:the\s+)?plain\b")  # "(the plain ones)"
_ROLE = re.compile(ROLE_WORD)


def plain_villagers(before: str, after: str, rest_of_list: re.Match[str] | None, on_models: bool) -> bool:
    """ "villagers" meaning the three plain ones: "(the plain ones)", "the 3 villagers", or listed beside one or two
    of seer, witch, hunter when no models are said ("the villagers and the hunter"; on models, `groups.py` reads
    "the villagers" as the rest of the side)."""
    if _PLAIN_AFTER.match(after) or re.search(r"\bthe\s+3\s+$", before):
        return True
    if re.search(r"\((?:just |only )?(?:the )?plain ones?(?: only)?\)", after):  # "... in werewolves (the plain ones)"
        return True
    if on_models or not (rest_of_list or re.search(r"(?:,|\band|&|\+|/)\s*(?:the\s+)?$", before)):
        return False
    beside = (rest_of_list.group(0) if rest_of_list else "") + " " + before[-40:]
    peers = {roles[0] for w in _ROLE.findall(beside) if len(roles := ROLE_ALIASES[w]) == 1 and roles[0] in POWER_ROLES}
    return 0 < len(peers) < 3  # all three beside them: the whole side either way
