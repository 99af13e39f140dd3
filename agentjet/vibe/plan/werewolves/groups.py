"""The groups of werewolves roles a sentence puts on models ("the seer and the witch share a model, the wolves get
another one"): the role mentions before a phrase that places them on a model, after "one (model) for", or in a
list after "N models:". Pure; two groups or more say how to split the trained roles into policies.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence

from agentjet.vibe.plan.werewolves.model_cues import MODEL_WORDS, PLAYS
from agentjet.vibe.plan.werewolves.roles import RoleMention

__all__ = ["read_groups"]

_WHICH = (
    r"(?:the same|one|a|an|1|another|the other|a second|a third|a fourth|a different|a separate|its own|their own|"
    r"his own|her own|"
    r"separate|different|a single|single|a new)"
)
_PUT = (
    r"(?:shar(?:e|es|ed|ing)|(?:is|are|go|goes|sit|sits|stay|stays|run|runs|get|gets|be|live|lives)\s+on|on|with|"
    r"gets?|got|has|have|uses?|using|(?:trained|played|run|controlled|driven)\s+by|by|learn(?:s|ing)?\s+(?:with|on))"
)
_GAME_TAIL = r"\s+(?:in|at|for)\s+(?:the\s+)?(?:game|were[- ]?wol\w*|mafia|ww)\b"  # "... on another in werewolf"
# A phrase after a group that places it on a model of its own or shared
_PLACED = re.compile(
    rf"\b{_PUT}\s+{_WHICH}\s+(?:[\w.-]+\s+)?(?:{MODEL_WORDS}|one|1|set(?:\s+of\s+weights)?)\b|"
    r"\b(?:on|with)\s+an?\s+\d+(?:\.\d+)?\s*[bm]\b|"  # "the village on a 0.5B"
    rf"\b(?:gets?|has|have|with|on)\s+(?:its|their|his|her)\s+own\b|\bshar(?:e|es|ing)\s+(?:one|1|{MODEL_WORDS})\b|"
    r"\b(?:gets?|takes?)\s+(?:one|1)(?=\s*(?:$|[,.;!?]|and\b))|"  # "the seer gets one, ..."
    rf"(?<=[a-z] )(?:(?:an?|one)\s+{MODEL_WORDS}\s+of|(?=(?:its|their|his|her)\s+own\s+{MODEL_WORDS}))\s*"
    rf"(?:its|their|his|her)\s+own\b|"  # "give the hunter a model of its own", "give the seer its own model"
    rf"\b{_PUT}\s+(?:another|a second|a third|a fourth|a different|the other)(?:\s+(?:one|1))?"
    rf"(?=\s*(?:$|[,.;!?]|and\b|while\b|but\b)|{_GAME_TAIL})|"
    rf"(?<=[a-z] )(?:another|a second)(?:\s+(?:one|1|{MODEL_WORDS}))?(?=\s*(?:$|[,.;!?]))|"  # "the villagers another"
    r"\bas\s+(?:one|a|1)\s+(?:team|group|unit)\b|"
    r"\b(?:alone|by (?:itself|himself|herself|themselves)|on (?:its|his|her|their) own)(?=\s*(?:$|[,.;!?]))"
)
# "one model for the wolves and one for the village": the phrase comes before its group
_FOR = re.compile(
    rf"\b(?:one|a|an|1|another|the other|a second|a different|a separate|separate)\s+"
    rf"(?:(?:[\w-]+\s+)?(?P<model>{MODEL_WORDS})\s+)?(?:for|{PLAYS})\b"
)
_LISTED = re.compile(rf"\b[2-9]\s+(?:[\w-]+\s+)?{MODEL_WORDS}\s*[:\u2014-]\s*(?P<items>[^.;]+)")
_ITEM_BREAK = re.compile(r",\s*(?:and\s+)?|\s+and\s+|\s*&\s*")
_EACH = re.compile(r"\beach\b")
_APART = re.compile(r"\b(?:separate|different|their own|by themselves)\b")  # "the seer and the witch get separate ones"
_CLAUSE_BREAK = re.compile(r"\b(?:but|while|whereas)\b|[;:]")


def read_groups(text: str, mentions: Sequence[RoleMention]) -> list[tuple[str, ...]]:
    """The role groups `text` places on models, in the order said (each the roles of its trained mentions)."""
    trained = [m for m in mentions if m.trained and m.start >= 0]
    for reader in (_listed, _placed_after, _for_before):
        groups = [g for g in reader(text, trained) if g]
        if len(groups) >= 2:
            return groups
    return []


def _roles(mentions: Sequence[RoleMention]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(role for m in mentions for role in m.roles))


def _within(mentions: Sequence[RoleMention], start: int, end: int) -> list[RoleMention]:
    return [m for m in mentions if start <= m.start < end]


def _placed_after(text: str, mentions: Sequence[RoleMention]) -> list[tuple[str, ...]]:
    """Groups ended by a placing phrase ("... share a model", "... on another"), each the mentions since the previous
    phrase or clause break; "each" or "separate models" make one group per mention."""
    groups: list[tuple[str, ...]] = []
    previous = 0
    for placed in _PLACED.finditer(text):
        breaks = [b.end() for b in _CLAUSE_BREAK.finditer(text, previous, placed.start())]
        members = _listed_last(text, _within(mentions, max([previous, *breaks]), placed.start()))
        previous = placed.end()
        if joined := _JOINED_AFTER.match(text, placed.end()):  # "the seer shares a model with the witch"
            members += _within(mentions, placed.end(), joined.end())
            previous = joined.end()
        split = _EACH.search(text, members[0].start, placed.end()) if members else None  # "each", "separate models"
        if members and (split or _APART.search(placed.group(0))):
            groups.extend(_roles([m]) for m in members)
        else:
            groups.append(_roles(members))
    return groups


_JOINED_AFTER = re.compile(r"\s+with\s+[^,;.:]*")
_LIST_GLUE = re.compile(r"\s*(?:,\s*)?(?:(?:and|or|&|\+|/|with|together with|plus|as well as)\s+)?(?:the\s+|plain\s+)*")


def _listed_last(text: str, members: list[RoleMention]) -> list[RoleMention]:
    """The mentions of the role list that ends nearest the placing phrase: "the village should win more, give the
    seer its own model" places the seer alone; "the seer, the witch and the hunter share one" all three."""
    kept = members[-1:]
    for first, second in zip(reversed(members[:-1]), reversed(members[1:]), strict=True):
        if not _LIST_GLUE.fullmatch(text, first.start + len(first.word), second.start):
            break
        kept.insert(0, first)
    return kept


def _for_before(text: str, mentions: Sequence[RoleMention]) -> list[tuple[str, ...]]:
    """Groups after "one model for" / "one for", each up to the next such phrase (one of them names a model)."""
    found = list(_FOR.finditer(text))
    if len(found) < 2 or not any(m.group("model") for m in found):
        return []
    ends = [m.start() for m in found[1:]] + [len(text)]
    groups = []
    for m, end in zip(found, ends, strict=True):  # "..., and the rest of the village shares a third": its own group
        tail = _PLACED.search(text, m.end(), end)
        cut = text.rfind(",", m.end(), tail.start()) if tail else -1
        bounds = [m.end(), end] if cut < 0 else [m.end(), cut, end]
        groups += [_roles(_within(mentions, start, stop)) for start, stop in itertools.pairwise(bounds)]
    return groups


def _listed(text: str, mentions: Sequence[RoleMention]) -> list[tuple[str, ...]]:
    """Groups as the items of a list after "N models:" ("3 models: wolves, seer, and the rest of the village")."""
    found = _LISTED.search(text)
    if found is None:
        return []
    groups, start = [], found.start("items")
    for part in _ITEM_BREAK.split(found.group("items")):
        at = text.find(part, start)
        groups.append(_roles(_within(mentions, at, at + len(part))))
        start = at + len(part)
    return groups
