"""The groups of werewolves roles a sentence puts on models ("the seer and the witch share a model, the wolves get
another one"): the role mentions before a phrase that places them on a model, after "one (model) for", or in a
list after "N models:". Pure; two groups or more say how to split the trained roles into policies.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence

from agentjet.vibe.plan.werewolves.model_cues import MODEL_WORDS, PER_ROLE, PLAYS
from agentjet.vibe.plan.werewolves.roles import RoleMention

__all__ = ["REST", "read_groups"]

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
    r"\bshare\b(?=\s*(?:$|[,.;!?]))|"  # "the seer and witch share."
    rf"(?:=|->|\b(?:on|with|using|uses?|gets?)\s+(?:{MODEL_WORDS})\s*)\s*(?:[a-z]|\d|#\d)(?=\s*(?:$|[,.;!?)]|and\b))|"
    r"\b(?:alone|by (?:itself|himself|herself|themselves)|on (?:its|his|her|their) own)(?=\s*(?:$|[,.;!?]))"
)
# "one model for the wolves and one for the village": the phrase comes before its group
_FOR = re.compile(
    rf"\b(?:one|a|an|1|another|the other|a second|a different|a separate|separate)\s+"
    rf"(?:(?:[\w-]+\s+)?(?P<model>{MODEL_WORDS})\s+)?(?:for|{PLAYS})\b"
)
_LISTED = re.compile(rf"\b(?P<n>[2-9])\s+(?:[\w-]+\s+)?{MODEL_WORDS}\s*[:\u2014-]\s*(?P<items>[^.;]+)")
_ITEM_BREAK = re.compile(r",\s*(?:and\s+)?|\s+and\s+|\s*&\s*")
_COMMA_BREAK = re.compile(r",\s*(?:and\s+)?")
_EACH = re.compile(r"\beach\b")
_EACH_AFTER = re.compile(r"\s+(?:each|apiece)\b")
_EACH_ROLE = re.compile(r"\beach\s+(?:\w+\s+)?roles?\b")  # a side's roles split too, not only the mentions
_THE_REST = re.compile(r"\b(?:the\s+)?(?:others|rest|remaining ones)\b|\b(?:everyone|everybody)\s+else\b")
REST = ("*",)  # a group said as "the others": the trained roles no other group took
_APART = re.compile(r"\b(?:separate|different|their own|by themselves)\b")  # "the seer and the witch get separate ones"
_CLAUSE_BREAK = re.compile(r"\b(?:but|while|whereas)\b|[;:]|\.(?=\s)")


def read_groups(text: str, mentions: Sequence[RoleMention]) -> list[tuple[str, ...]]:
    """The role groups `text` places on models, in the order said (each the roles of its trained mentions)."""
    trained = [m for m in mentions if m.trained and m.start >= 0]
    for reader in (_listed, _placed_after, _for_before, _clauses):
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
        window = max([previous, *breaks])  # since the previous phrase or clause break
        members = _listed_last(text, _within(mentions, window, placed.start()))
        previous = placed.end()
        if joined := _JOINED_AFTER.match(text, placed.end()):  # "the seer shares a model with the witch"
            members += _within(mentions, placed.end(), joined.end())
            previous = joined.end()
        split = _EACH.search(text, window, placed.end()) or _EACH_AFTER.match(text, placed.end())  # "each", "... each"
        if members and (split or _APART.search(placed.group(0))):  # "each village role gets its own": per role
            if _EACH_ROLE.search(text, window, placed.end()):
                groups.extend((role,) for m in members for role in m.roles)
            else:
                groups.extend(_roles([m]) for m in members)
        elif members:
            groups.append(_roles(members))
        elif _THE_REST.search(text, window, placed.start()):  # "the others share one": whatever no group took
            groups.append(REST)
    return groups


_JOINED_AFTER = re.compile(r"\s+with\s+[^,;.:]*")
_LIST_GLUE = re.compile(
    r"\s*(?:,\s*)?(?:(?:and|or|with|together with|plus|as well as)\s+|[&+/]\s*)?(?:[()]\s*)?(?:the\s+|plain\s+)*"
)


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
    """Groups as the items of a list after "N models:" ("3 models: wolves, seer, and the rest of the village"); the
    items are split at commas when that gives N of them ("..., one for the seer and the witch together, ...")."""
    found = _LISTED.search(text)
    if found is None:
        return []
    by_comma = _items(text, found, mentions, _COMMA_BREAK)
    return by_comma if len(by_comma) == int(found.group("n")) else _items(text, found, mentions, _ITEM_BREAK)


def _items(
    text: str, found: re.Match[str], mentions: Sequence[RoleMention], breaks: re.Pattern[str]
) -> list[tuple[str, ...]]:
    groups, start = [], found.start("items")
    for part in breaks.split(found.group("items")):
        at = text.find(part, start)
        groups.append(_roles(_within(mentions, at, at + len(part))))
        start = at + len(part)
    return [g for g in groups if g]


_PART_BREAK = re.compile(r"\s*[;.]\s+|\s*;\s*|\s+(?:while|whereas|but)\s+")
_PLACING_WORD = re.compile(
    rf"{MODEL_WORDS}|\b(?:alone|shared?|sharing|together|separate|separately|own|another|apart|itself|himself|"
    r"herself|themselves)\b"
)
_APART_WORD = re.compile(r"\b(?:separate|separately|apart|each|different)\b")
_BARE_LIST = re.compile(r"(?:\s|[,&+:]|\b(?:the|and|with|plus|werewol\w*|mafia|in|for)\b)*")


def _clauses(text: str, mentions: Sequence[RoleMention]) -> list[tuple[str, ...]]:
    """Groups as clauses that each place the roles they name ("one model shared by the witch and seer, the hunter
    alone"; "seer, witch: separate; hunter and villagers: shared"); a clause that only lists roles ("the witch with
    the hunter") is a group too when another clause places its roles. A clause split by a colon is one list."""
    groups: list[tuple[str, ...]] = []
    placed = clauses = 0
    if PER_ROLE.search(text):  # "a model per role for the village": a split within a side, not a group
        return []
    for part in _spans(text, _PART_BREAK):
        head, colon, tail = text[part[0] : part[1]].rpartition(":")  # "seer, witch: separate", not "werewolves: ..."
        listed = colon and _PLACING_WORD.search(tail) and not _PLACING_WORD.search(head)
        listed = listed and len(_within(mentions, part[0], part[0] + len(head))) > 1
        for start, end in [part] if listed else _merged_lists(text, mentions, _spans(text, re.compile(","), *part)):
            members, said = _within(mentions, start, end), text[start:end]
            if not members:
                continue
            if _PLACING_WORD.search(said):
                placed, clauses = placed + 1, clauses + 1
                apart = _APART_WORD.search(said) and len(members) > 1
                groups += [_roles([m]) for m in members] if apart else [_roles(members)]
            elif len(members) > 1 and _BARE_LIST.fullmatch(_without_words(said, start, members)):
                clauses += 1
                groups.append(_roles(members))
    return groups if placed and clauses > 1 else []  # one clause alone is no grouping ("separate models for ...")


_AND_JOINED = re.compile(r"\s*(?:,\s*)?(?:and|or|&|\+)\s+(?:the\s+)?")


def _merged_lists(text: str, mentions: Sequence[RoleMention], spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Comma spans, with a role list's items put back together: a span that goes on a list the previous span ended
    ("... for seer, witch and hunter", "the villagers, seer, witch and hunter share one") joins it; "the witch with
    the hunter, the seer alone" stays two."""
    merged: list[tuple[int, int]] = []
    for start, end in spans:
        members = _within(mentions, start, end)
        if merged and members and _goes_on_a_list(text, mentions, merged[-1], (start, end), members):
            merged[-1] = (merged[-1][0], end)
        else:
            merged.append((start, end))
    return merged


def _goes_on_a_list(
    text: str, mentions: Sequence[RoleMention], before: tuple[int, int], span: tuple[int, int],
    members: list[RoleMention],
) -> bool:  # fmt: skip
    last = _within(mentions, *before)[-1:]
    if not last or text[last[0].start + len(last[0].word) : before[1]].strip():
        return False  # the span before does not end on a role
    if len(members) == 1:  # a bare item: "seer" in "the villagers, seer, witch and hunter"
        return bool(_BARE_LIST.fullmatch(_without_words(text[span[0] : span[1]], span[0], members)))
    return all(  # the items joined by "and": "witch and hunter ..."
        _AND_JOINED.fullmatch(text, a.start + len(a.word), b.start) for a, b in itertools.pairwise(members)
    )


def _spans(text: str, breaks: re.Pattern[str], start: int = 0, end: int | None = None) -> list[tuple[int, int]]:
    stop = len(text) if end is None else end
    cuts = [(m.start(), m.end()) for m in breaks.finditer(text, start, stop)]
    edges = [start, *(c for cut in cuts for c in cut), stop]
    return list(zip(edges[::2], edges[1::2], strict=True))


def _without_words(said: str, start: int, members: Sequence[RoleMention]) -> str:
    for m in sorted(members, key=lambda m: -m.start):
        at = m.start - start
        said = said[:at] + " " + said[at + len(m.word) :]
    return said
