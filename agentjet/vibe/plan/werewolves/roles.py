"""Which werewolves roles a sentence trains, which it names only as opponents, and whether it asks for separate models.

Pure. Roles are read in any ordinary phrasing: "as the seer", "make the seer better", "teach the villagers to find
the wolves" (villagers trained, wolves the opponents), "the seer and the doctor", "improve the wolf", "wolves should
win more". The game's own name ("play werewolves", "at mafia") is no role. A mention is an opponent when a verb or
preposition of opposition governs it ("against", "beat", "find", "catch", "vote out", "fool", "protect", ...), or
when it is called scripted. A mention is left out ("but not the wolves", "everyone except the seer", "don't train
the witch"): the planner trains the rest of its side, or the other side.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Literal

from agentjet.vibe.plan.families import GAME_NAMES, OPPOSING_WORDS, OTHER_ROLES, ROLE_ALIASES, ROLE_WORDS, VILLAGE_ROLES
from agentjet.vibe.plan.werewolves.model_cues import (
    MODEL_WORDS,
    ONE_MORE_FOR,
    OWN_AFTER,
    PER_ROLE,
    PER_SIDE,
    SEPARATE,
    SEPARATE_FOR,
    SHARED,
)
from agentjet.vibe.plan.werewolves.role_cues import (
    ALL_BUT_BEFORE,
    CREW_AFTER,
    LEAVE_BEFORE,
    LEFT_OUT_AFTER,
    LEFT_OUT_BEFORE,
    LOSES_AFTER,
    NO_BEFORE,
    ONLY_BEFORE,
    ONLY_MARK_AFTER,
    ONLY_MARK_BEFORE,
    OUT_AFTER,
    REST_SCRIPTED_AFTER,
    SCRIPTED_AFTER,
    SCRIPTED_BEFORE,
    SO_IS_BEFORE,
    TRAINING_AFTER,
)
from agentjet.vibe.plan.werewolves.side_cues import ASKED_TO_TRAIN, BOTH_NAMED, BOTH_SIDES, NONE_OF_BEFORE, TRAINS_AFTER
from agentjet.vibe.plan.werewolves.villagers import POWER_ROLES, plain_villagers

__all__ = ["MODEL_WORDS", "ROLE_ALIASES", "RoleMention", "RoleReading", "read_roles"]

_SIDE = VILLAGE_ROLES
_WOLVES = ("werewolf",)

_ROLE = re.compile(rf"\b(?:{ROLE_WORDS})\b")
# Words a role list is glued with, skipped when looking for the word that governs a mention.
_GLUE = frozenset(
    "the a an all both each every its their our my your his her this these those other whole entire 1 2 3 4 5 and or "
    "& + , / scripted heuristic rule-based fixed frozen enemy opposing rival evil good bad clever smart sneaky actual "
    "better best stronger strong great sharper smarter more of team side roles role players player to real right "
    "wrong correct".split()
)
_DETERMINED = re.compile(
    r"(?:\b(?:the|a|an|as|each|every|both|all|other|one|vs|versus|against|\d+)|[,&+]|\band|\bor)\s+(?:(?:better|best|"
    r"good|great|strong|stronger|smart|smarter|clever|sneaky|cunning|sharper|deceptive|ruthless|actual|real|trained|"
    r"learning|scripted|untrained)\s+)?$"
)
_ONE_PLAYER_AFTER = re.compile(r"^\s+player\b(?!s)")
_GAME_BEFORE = re.compile(  # "of the werewolf", "task=werewolves": the game
    r"\b(?:(?:in|at|of|on|for|playing|play|plays|played|into)|of the)\s+$|\b(?:task|game|family|env)\s*[:=]\s*$"
)
_NOT_A_ROLE_AFTER = re.compile(
    r"^\s+(?:(?:party|board|card|social|deduction|video|online)\s+)*"
    r"(?:games?|match(?:es)?|rounds?|models?|agents?|bots?|polic(?:y|ies)|tasks?|env(?:ironment)?s?|"
    r"benchmark|setting|village|town|rules|simulation|variant|runs?|sessions?|experiments?|jobs?|tournaments?|"
    r"leagues?|thing|stuff)\b|"
    r"^(?:-|\s+)(?:style|like|type|esque|inspired|themed|flavou?red)\b|"  # "a mafia-style game": the game's kind
    r"^-(?:playing|player|players|bot|bots|agent|agents|game|games)\b"  # "a werewolf-playing LLM": the game
)
_ROLE_AFTER = re.compile(
    r"^(?:'s)?\s+(?:side|team|faction|camp|players?|roles?|pack|should|must|need|needs|learn|learns|to|get|gets|"
    r"become|win|wins|can|could|will|would|are|is|lie|play|plays|vote|members?)\b"
)
_SIDE_AFTER = re.compile(r"^(?:'s)?\s+(?:side|team|faction|camp)\b")
# "the mafia members stay scripted": the words for a group of players, skipped to read what is said of them
_GROUP_AFTER = re.compile(r"^(?:'s)?\s+(?:side|team|faction|camp|members?|players?|roles?|pack|crew)\b")
# ", the witch and (the) hunter": the rest of a role list that ends in and/or, skipped to read what is said of all
_ROLE_WORD = (  # a role, or the rest of them ("the wolves and the others are bots")
    r"(?:the\s+)?(?:" + ROLE_WORDS
    + r"|others|rest(?:\s+of\s+(?:them|the\s+\w+))?|other\s+(?:roles|players|villagers))\b"
)
_REST_OF_LIST = re.compile(rf"^(?:\s*[,/]\s*{_ROLE_WORD})*\s*,?\s*(?:(?:\band|\bor|&)\s+|/\s*){_ROLE_WORD}")
_AND_CHAIN = re.compile(rf"^(?:\s+(?:and|or|&)\s+{_ROLE_WORD})+")  # "the hunter and witch and villagers untrained"
# "the hunter, who is on the village side": a side named to describe a role, not to train it
_DESCRIBES_BEFORE = re.compile(r"\b(?:who|which|that)(?:'s|\s+is|\s+are)\s+(?:on|in|with|part of|from)\s+(?:the\s+)?$")
# "teach the seer to share its findings with the town", "... to guide the village": who is told or helped, not trained
_AUDIENCE_BEFORE = re.compile(
    r"(?:\bshar(?:e|es|ing)\s+(?:[\w']+\s+){1,3}?with|\b(?:tell(?:s|ing)?|report(?:s|ing)?|explain(?:s|ing)?|"
    r"pass(?:es|ing)?|signal(?:s|ing)?|communicat\w*)\s+(?:[\w']+\s+){0,3}?(?:with|to))\s+"
    r"(?:the\s+|its\s+|their\s+|her\s+|his\s+)?$|"
    r"\bto\s+(?:better\s+)?(?:guide|help|lead|warn|inform|tell|assist|steer)\s+(?:the\s+|its\s+|their\s+)?$"
)
_PLAYS_THE_ROLE = re.compile(r"^\s+(?:agents?|ais?|llms?|models?|polic(?:y|ies))\b")
_ROLE_MODEL = re.compile(r"\s+(?:models?|polic(?:y|ies)|loras?|adapters?)\b")
_A_BEFORE = re.compile(r"\b(?:a|an|one|1|its own|a separate|another|a second)\s+$")
_PLAYED_BY = re.compile(r"\b(?:shared|used|played|run|controlled|driven|trained)\s+by$")
_DOWN_AFTER = re.compile(r"^\s+down\b")  # "take a wolf down", "bring the wolves down": an opponent
_NEW_CLAUSE_BEFORE = re.compile(r"(?:,\s*|\b)and\s+(?:the\s+|a\s+|its\s+|their\s+)?$")
_OWN_VERB_AFTER = re.compile(  # "..., and the witch to heal them", "... and the seer practise checking"
    r"^\s+(?:to\s+(?!the\b|a\b|an\b)[a-z]+|(?:practi[sc]es?|learns?|should|must|needs?|gets?\s+better|improves?)\b)"
)
# "lower the wolves' win rate": a side's wins made fewer (not "reduce the seer's mistakes", which trains the seer)
_LOWER = frozenset("lower lowering reduce reducing decrease decreasing cut cutting minimise minimize drop hurt".split())
_WINS_AFTER = re.compile(r"^(?:'s|')?\s+(?:win(?:ning)?\s+(?:rate|chances?|percentage)|wins|chances|odds|success)\b")
Grouping = Literal["side", "role"]


@dataclass(frozen=True)
class RoleMention:
    """One role word as written, and whether the sentence trains it, names it as an opponent, or leaves it out."""

    word: str
    roles: tuple[str, ...]
    trained: bool
    left_out: bool = False  # "but not the wolves": neither trained nor called the opponent
    scripted: bool = False  # "the seer is scripted": played by the heuristic player, whatever else trains
    start: int = -1  # where the word stands in the text (`read_groups` reads what lies between mentions)


@dataclass(frozen=True)
class RoleReading:
    """What a sentence says about werewolves roles and models (empty/False when it does not say)."""

    mentions: tuple[RoleMention, ...]
    both_sides: bool  # "both sides", "every role", "self-play"
    both_named: bool  # "the wolves and the seer should both improve", "the seer vs the wolves, train both": what is
    # named trains, as named, opponents too
    asked_to_train: bool  # a training verb is said ("train the wolves and the seer"), not a lineup ("with a seer")
    separate: bool  # "separate models", "each side its own model", "two policies", "not shared"
    shared: bool  # "one shared model", "the same model"
    grouping: Grouping | None  # "a model per side" / "each role its own": how separate models are split
    apart: tuple[str, ...] = ()  # roles given a model of their own by name ("a separate model for the seer")
    split_within_side: bool = False  # "each villager role its own model": the split is within one side
    unknown: tuple[str, ...] = ()  # roles of other variants the built-in game does not deal ("cupid")

    @property
    def trained(self) -> tuple[RoleMention, ...]:
        return tuple(m for m in self.mentions if m.trained)

    @property
    def opponents(self) -> tuple[RoleMention, ...]:
        return tuple(m for m in self.mentions if not m.trained and not m.left_out)

    @property
    def left_out(self) -> tuple[RoleMention, ...]:
        return tuple(m for m in self.mentions if m.left_out)

    @property
    def left_out_roles(self) -> set[str]:
        """Roles left out; a side left out keeps roles named alone to train ("the seer; villagers untrained")."""
        named = {r for m in self.mentions if m.trained and len(m.roles) == 1 for r in m.roles}
        plain = any(m.roles[0] in POWER_ROLES for m in self.left_out if len(m.roles) == 1) or any(
            m.trained and (m.roles == _SIDE or set(m.roles) <= set(POWER_ROLES)) for m in self.mentions
        )  # "except the villagers and the hunter", "not the villagers, just the special roles": the plain ones

        def meant(m: RoleMention) -> tuple[str, ...]:
            return ("villager",) if plain and m.word == "villagers" else m.roles

        return {r for m in self.left_out for r in meant(m) if len(meant(m)) == 1 or r not in named}

    @property
    def scripted_roles(self) -> set[str]:
        """Single roles called scripted ("the seer is scripted"); a side called scripted is the opponent instead."""
        return {r for m in self.mentions if m.scripted and len(m.roles) == 1 for r in m.roles}


def read_roles(text: str) -> RoleReading:
    """The role mentions of `text` (lowercase), trained or opposed, and the model cues; pure."""
    mentions = []
    own_model: list[str] = []  # "the seer gets its own model": apart from the rest of its side
    role_models: list[str] = []  # "a doctor model and a cop model": a model for each (the game's name too, then)
    two_models = len(re.findall(r"\b(?:a|an|one)\s+[\w-]+\s+(?:model|policy)\b", text)) > 1
    on_models = bool(re.search(rf"\b{MODEL_WORDS}|\bshar(?:e|es|ed|ing)\b", text))
    for match in _ROLE.finditer(text):
        word, before, after = match.group(0), text[: match.start()], text[match.end() :]
        role_model = (word not in GAME_NAMES or two_models) and _ROLE_MODEL.match(after) and _A_BEFORE.search(before)
        if word in GAME_NAMES and not role_model and not _is_role_use(before, after):
            continue
        if _NOT_A_ROLE_AFTER.match(after) and word not in ("wolf", "wolves") and not role_model:
            if word in GAME_NAMES or not _PLAYS_THE_ROLE.match(after):
                continue  # "a werewolf agent" plays the game; "a seer agent" plays the seer
        if word in ("village", "town") and re.match(r"\s+(?:talk|discussions?|chat|debates?)\b", after):
            continue  # "village talk off": the day's talk, no side
        if _DESCRIBES_BEFORE.search(before):
            continue
        rest_of_list = _AND_CHAIN.match(after) or _REST_OF_LIST.match(after)
        rest_of_list = rest_of_list or CREW_AFTER.match(after)  # "the godfather and his crew are scripted"
        listed = after[rest_of_list.end() :] if rest_of_list else after  # what is said of the whole list
        roles = ROLE_ALIASES[word]
        if word == "villagers" and plain_villagers(before, after, rest_of_list, on_models):
            roles = ("villager",)
        if len(roles) == 1 and roles != _WOLVES and (OWN_AFTER.match(after) or role_model):  # a side's own model
            own_model.append(roles[0])
        role_models += [word] if role_model else []
        every_role = re.search(r"\b(?:every|each|all(?:\s+the)?)\s+$", before) and re.match(r"\s+roles?\b", after)
        if _SIDE_AFTER.match(after) or every_role:  # "the villager team", "every villager role": the role's side
            roles = _WOLVES if roles == _WOLVES else _SIDE
        head = _up_to_governor(before)
        if ONLY_BEFORE.search(head) or (ALL_BUT_BEFORE.search(head) and REST_SCRIPTED_AFTER.match(listed)):
            mentions.append(RoleMention(word, roles, trained=True, start=match.start()))
            continue
        left_out = LEFT_OUT_BEFORE.search(head) or LEFT_OUT_AFTER.match(listed)
        left_out = left_out or (NO_BEFORE.search(before) and TRAINING_AFTER.match(after))  # "no wolves training"
        left_out = left_out or (NONE_OF_BEFORE.search(before) and TRAINS_AFTER.match(after))
        if left_out or (LEAVE_BEFORE.search(before) and OUT_AFTER.match(after)):
            mentions.append(RoleMention(word, roles, trained=False, left_out=True, start=match.start()))
            continue
        trained = _is_trained(before, listed, _last_word(head))
        scripted = not trained and _is_scripted(before, listed)
        mentions.append(RoleMention(word, roles, trained=trained, scripted=scripted, start=match.start()))
    mentions = _without_descriptions(text, _only_marked(text, _named_members(text, mentions)))
    separate = bool(SEPARATE.search(text)) or len(role_models) > 1  # "a doctor model and a cop model"
    both_named = bool(BOTH_NAMED.search(text))
    per_role = PER_ROLE.search(text)
    grouping: Grouping | None = "side" if PER_SIDE.search(text) else "role" if per_role else None
    split_within_side = bool(per_role and ROLE_ALIASES.get(per_role.group("side") or ""))  # "each villager role"
    apart: list[str] = []
    for found in SEPARATE_FOR.finditer(text):
        end = found.start("role")
        while (named := _ROLE.match(text, end)) and not _NOT_A_ROLE_AFTER.match(text[named.end() :]):
            if len(ROLE_ALIASES[named.group(0)]) > 1:
                break  # "... for the town and the mafia": a side is no role split off its side
            apart.extend(r for r in ROLE_ALIASES[named.group(0)] if r not in apart)
            more = ONE_MORE_FOR.match(text[named.end() :])  # "... for the witch and one for the hunter"
            if more is None:
                break
            end = named.end() + more.start("role")
    apart += [role for role in dict.fromkeys(own_model) if role not in apart]
    return RoleReading(
        unknown=tuple(dict.fromkeys(m.group(0) for m in OTHER_ROLES.finditer(text))),
        apart=tuple(apart),
        split_within_side=split_within_side,
        mentions=tuple(mentions),
        both_sides=bool(BOTH_SIDES.search(text)) or (both_named and _sides(mentions) == 0),
        both_named=both_named and _sides(mentions) == 2,
        asked_to_train=bool(ASKED_TO_TRAIN.search(text)) and not _lineup_only(text, mentions),
        separate=separate,
        shared=bool(SHARED.search(text)) and not separate,
        grouping=grouping,
    )


_BETWEEN_GROUP_AND_MEMBERS = re.compile(r"\s*(?:[:,(-]\s*)?(?:(?:like|such as|namely|i\.?e\.?|the)\s+)*")


def _named_members(text: str, mentions: list[RoleMention]) -> list[RoleMention]:
    """A group of roles followed by the roles it means ("the two special roles seer and witch", "the power roles:
    the seer"): the roles named, not the whole group."""
    kept = list(mentions)
    for group, member in zip(mentions, mentions[1:], strict=False):
        gap = text[group.start + len(group.word) : member.start] if group.start >= 0 <= member.start else "?"
        within = group.word.endswith("roles") and len(member.roles) == 1 and set(member.roles) <= set(group.roles)
        if within and group.trained == member.trained and _BETWEEN_GROUP_AND_MEMBERS.fullmatch(gap):
            kept.remove(group)
    return kept


_TOLD = re.compile(r"\b(?:train|teach|improve|coach|fine-?tune)\w*(?:\s*:)?\s+(?:only\s+)?(?:the\s+)?$")  # "train: X"
_DESCRIBED_BEFORE = re.compile(r"\b\d+\s+$|\b(?:vs\.?|versus)\s+(?:the\s+)?$")  # "2 wolves", "... vs the village"


def _without_descriptions(text: str, mentions: list[RoleMention]) -> list[RoleMention]:
    """Less the roles that only describe the game ("2 wolves and 5 villagers", "wolves vs villagers") when another
    mention says who trains ("..., train the village"); else `mentions` as they are."""

    def describes(m: RoleMention) -> bool:
        before, after = text[: m.start], text[m.start + len(m.word) :]
        return bool(_DESCRIBED_BEFORE.search(before) or re.match(r"\s+(?:vs\.?|versus)\b", after))

    if any(m.trained and not describes(m) and _TOLD.search(text[: m.start]) for m in mentions if m.start >= 0):
        return [m for m in mentions if m.start < 0 or not describes(m)]
    return mentions


def _lineup_only(text: str, mentions: list[RoleMention]) -> bool:
    """Every role said is counted ("train a werewolves model with 4 wolves and 2 seers"): a lineup, none asked to
    train, so a training verb beside it asks for no role of both sides."""
    return bool(mentions) and all(m.start >= 0 and _DESCRIBED_BEFORE.search(text[: m.start]) for m in mentions)


def _only_marked(text: str, mentions: list[RoleMention]) -> list[RoleMention]:
    """With a mention marked as the only one that trains ("only the town learns"), the other trained mentions are
    opponents; else `mentions` as they are."""
    marked = {
        id(m)
        for m in mentions
        if m.trained
        and m.start >= 0
        and (
            (ONLY_MARK_BEFORE.search(text[: m.start]) and ONLY_MARK_AFTER.match(text[m.start + len(m.word) :]))
            or re.match(r"\s+only\b", text[m.start + len(m.word) :])  # "train the seer only"
        )
    }
    if not marked:
        return mentions
    return [m if id(m) in marked or not m.trained else replace(m, trained=False) for m in mentions]


def _sides(mentions: list[RoleMention]) -> int:
    """How many sides the mentions trained or opposed are on (0, 1 or 2)."""
    return len({m.roles == _WOLVES for m in mentions if not m.left_out})


def _is_role_use(before: str, after: str) -> bool:
    """A game-name word (werewolf, mafia) names a role when a determiner or a role list leads to it ("the
    werewolves", "as a werewolf", "the seer and werewolves"), or it is a subject ("werewolves should win"); not after
    a preposition of the game ("the seer in werewolves should vote better", "good at mafia")."""
    if _NOT_A_ROLE_AFTER.match(after) or (_GAME_BEFORE.search(before) and not _listed_with_a_role(after)):
        return False  # "for werewolves and villagers" lists roles; "good at werewolves" names the game
    if re.match(r"\s+players\b", after) and re.search(r"\b(?:all|\d+)\s+$", before):
        return False  # "all nine werewolves players": who plays the game
    every = re.search(r"\b(?:all|each|every)(?:\s+(?:of\s+)?the)?\s+$", before)
    if every and re.match(r"\s+(?:roles?|players?|seats?)\b", after):
        return False  # "each werewolves role", "all werewolf roles": the game's roles
    if re.match(r"\s+roles?\s*[:=-]", after):
        return False  # "werewolf roles: seer and witch": the game's roles, listed after it
    if (role := _ROLE.match(after.lstrip())) and role.group(0) not in GAME_NAMES and after[:1].isspace():
        return False  # "a werewolves seer agent", "a mafia doctor": the game's seer, doctor
    if _ONE_PLAYER_AFTER.match(after) and not re.search(r"\bthe\s+$", before):
        return False  # "a werewolf player as the seer": one who plays the game
    if re.match(r"\s*(?:[,.;!?]|$)", after) and before.rstrip().endswith((",", ";", ":")):
        return False  # "train the seer, werewolves(, 5 steps)": the game named in a clause of its own
    if re.search(r"\b(?:except|excluding|besides|but not|other than|apart from)\s+(?:for\s+)?(?:the\s+)?$", before):
        return True  # "every role except werewolf": the role left out
    if re.search(r"\b(?:catch|find|spot|detect|unmask|expose|beat|defeat|hunt|identify|lynch)\s+$", before):
        return True  # "learn to catch werewolves": the wolves, as the opponents
    if re.search(r"\b(?:make|help|get)\s+$", before) and re.match(r"\s+(?:better|stronger|smarter|win)\b", after):
        return True  # "make mafia better at killing the doctor": the mafia, not the game
    return bool(_DETERMINED.search(before)) or bool(_ROLE_AFTER.match(after)) or _listed_with_a_role(after)


def _listed_with_a_role(after: str) -> bool:
    """Followed by "and the villagers" (a role that is no game name): the word is one of a list of roles."""
    glue = re.match(r"^\s+(?:and|or|&|\+)\s+(?:the\s+)?", after)  # not a comma: "werewolves, the seer" names the game
    role = _ROLE.match(after, glue.end()) if glue else None
    return role is not None and role.group(0) not in GAME_NAMES


def _is_scripted(before: str, after: str) -> bool:
    """Called scripted ("the seer is scripted", "scripted villagers", "the wolf team is played by bots")."""
    return bool(SCRIPTED_AFTER.match(_GROUP_AFTER.sub("", after, count=1)) or SCRIPTED_BEFORE.search(before)
                or SO_IS_BEFORE.search(before))  # fmt: skip


_SAME_OR_OTHER_BEFORE = re.compile(r"\b(?:same|other|different|another|separate)\b[\w\s-]{0,30}$")


def _is_trained(before: str, after: str, governor: str) -> bool:
    """Trained unless scripted, wanted to lose, or governed by a word of opposition (`governor`: "find" in "find the
    seer and the wolves", the nearest word before the mention that is not role-list glue)."""
    if _is_scripted(before, after) or LOSES_AFTER.match(_GROUP_AFTER.sub("", after, count=1)):
        return False
    if _DOWN_AFTER.match(after):
        return False
    if re.search(r"\b(?:trained|learning|rl-trained|fine-tuned)\s+$", before):
        return True  # "beaten by a trained seer": whatever governs it, the sentence calls it trained
    if re.search(r"\b(?:los(?:e|es|ing|t)|fall(?:s|ing)?|fell)\s+to\s+(?:the\s+)?$", before):
        return False  # "the villagers, who keep losing to the wolves": the side they lose to
    audience = _AUDIENCE_BEFORE.search(before)
    if audience and not re.search(rf"{MODEL_WORDS}|\b(?:one|same)\b", audience.group(0)):  # "shares a model with"
        return False
    if _WINS_AFTER.match(after) and governor in _LOWER:
        return False
    if _NEW_CLAUSE_BEFORE.search(before) and _OWN_VERB_AFTER.match(after):
        return True  # "... beat the wolves, and the witch to heal them": a clause of its own, not beat's object
    if governor == "by" and _PLAYED_BY.search(_up_to_governor(before)):
        return True  # "one model shared by the witch and the seer": who the model plays
    held = re.search(r"\b(?:held|hold|holding|kept|keep|turned|switched|talk)\s+\w+\W*$", before)
    if governor in ("out", "off") and held:
        governor = ""  # "20 games held out, seer", "talk off, the seer": no opposition
    if governor == "than" and _SAME_OR_OTHER_BEFORE.search(_up_to_governor(before).removesuffix("than")):
        governor = ""  # "not in the same model than the seer": a model shared or not, no comparison
    if governor in ("on", "at", "onto", "upon"):  # "wasting her poison on villagers": what the poison is used on
        governor = _last_word(_up_to_governor(before)[: -len(governor)].rstrip()) or governor
    return governor not in OPPOSING_WORDS


def _last_word(head: str) -> str:
    found = re.search(r"[\w'&+/-]+$|,$", head)
    return found.group(0) if found else ""


def _up_to_governor(before: str) -> str:
    """`before` up to and with its governing word ("train werewolves, but not" of "... but not the seer or the");
    a clause's end governs nothing ("do not train the witch; the seer only": the seer trains)."""
    for word in reversed(list(re.finditer(r"[\w'&+-]+|[,/;!?]|\.(?!\d)", before))):
        if word.group(0) in _GLUE or _ROLE.fullmatch(word.group(0)):
            continue
        return before[: word.end()]
    return ""
