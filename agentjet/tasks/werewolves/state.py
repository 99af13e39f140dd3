"""The values of a werewolves game: roles, phases, actions, decisions, events and the state.

Pure data (frozen dataclasses and enums), no behaviour beyond small lookups: `rules.py` moves a
`GameState` forward, `view.py` cuts a player's private view out of it. Players are numbered
1..9; `roles[p - 1]` is player p's role.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from enum import StrEnum

__all__ = [
    "DEAL",
    "PLAYERS",
    "Action",
    "ActionKind",
    "Decision",
    "Event",
    "GameState",
    "Phase",
    "Role",
    "RuleConfig",
    "Side",
    "TARGETED",
    "deal_roles",
    "side_of",
]


class Role(StrEnum):
    WEREWOLF = "werewolf"
    VILLAGER = "villager"
    SEER = "seer"
    WITCH = "witch"
    HUNTER = "hunter"


class Side(StrEnum):
    WOLVES = "wolves"
    VILLAGE = "village"


def side_of(role: Role) -> Side:
    return Side.WOLVES if role is Role.WEREWOLF else Side.VILLAGE


DEAL: tuple[Role, ...] = (Role.WEREWOLF,) * 3 + (Role.VILLAGER,) * 3 + (Role.SEER, Role.WITCH, Role.HUNTER)
PLAYERS = len(DEAL)


def deal_roles(seed: int) -> tuple[Role, ...]:
    """The seat order of the nine roles for a deal seed (the same seed, the same table)."""
    roles = list(DEAL)
    random.Random(f"werewolves/deal/{seed}").shuffle(roles)
    return tuple(roles)


class Phase(StrEnum):
    """Who is asked what, in game order. Night: wolves talk, wolves vote, witch, seer, dawn."""

    WOLF_CHAT = "wolf_chat"  # each living wolf says one line to the pack
    WOLF_VOTE = "wolf_vote"  # each living wolf names a victim; plurality, seeded tie-break
    WITCH = "witch"  # heal the victim, poison someone, or pass (one potion a night)
    SEER = "seer"  # learn one player's role
    HUNTER = "hunter"  # a hunter killed by wolves or voted out may shoot
    DAY_TALK = "day_talk"  # each living player says one line
    DAY_VOTE = "day_vote"  # each living player votes someone out or abstains; a tie eliminates nobody
    LAST_WORDS = "last_words"  # the voted-out player's final line
    OVER = "over"


class ActionKind(StrEnum):
    SAY = "say"
    KILL = "kill"
    HEAL = "heal"
    POISON = "poison"
    CHECK = "check"
    VOTE = "vote"
    SHOOT = "shoot"
    PASS = "pass"


TARGETED = frozenset({ActionKind.KILL, ActionKind.POISON, ActionKind.CHECK, ActionKind.VOTE, ActionKind.SHOOT})


@dataclass(frozen=True)
class Action:
    """What a player does: a kind, a target player for targeted kinds, a line for `say`."""

    kind: ActionKind
    target: int | None = None
    text: str = ""


@dataclass(frozen=True)
class Decision:
    """The question the game asks now: `player` picks one of `kinds` (targeted ones from `targets`)."""

    player: int
    phase: Phase
    kinds: frozenset[ActionKind]
    targets: tuple[int, ...] = ()

    @property
    def is_speech(self) -> bool:
        return self.kinds == frozenset({ActionKind.SAY})


@dataclass(frozen=True)
class Event:
    """One line of the game log. `audience` None means public, else who may see it."""

    round: int
    kind: str  # speech, wolf_chat, wolf_kill, heal, poison, check, died, votes, voted_out, tie, shot, last_words, over
    actor: int | None = None
    target: int | None = None
    text: str = ""
    role: Role | None = None  # a seer's check result
    ballots: tuple[tuple[int, int | None], ...] = ()  # (voter, target or None for abstain)
    audience: frozenset[int] | None = None

    def is_visible_to(self, player: int) -> bool:
        return self.audience is None or player in self.audience


@dataclass(frozen=True)
class RuleConfig:
    """The rule knobs: the round cap, and whether the talk phases happen at all."""

    max_rounds: int = 10
    discussion: bool = True

    def __post_init__(self) -> None:
        if self.max_rounds < 1:
            raise ValueError(f"max_rounds must be >= 1, got {self.max_rounds}")


@dataclass(frozen=True)
class GameState:
    """Everything about a game at one moment. Only `rules.py` builds successors."""

    seed: int
    config: RuleConfig
    roles: tuple[Role, ...]
    alive: frozenset[int]
    round: int = 1
    phase: Phase = Phase.WOLF_CHAT
    queue: tuple[int, ...] = ()  # players still to act in this phase, next first
    ballots: tuple[tuple[int, int | None], ...] = ()  # votes cast so far in this phase
    victim: int | None = None  # tonight's wolf target
    healed: bool = False  # the witch healed tonight's victim
    poisoned: int | None = None  # tonight's poison target
    heal_left: bool = True
    poison_left: bool = True
    shooter_then: Phase | None = None  # where the game goes after the hunter's shot
    winner: Side | None = None  # None at the end = the round cap was reached (a draw)
    events: tuple[Event, ...] = ()

    def role_of(self, player: int) -> Role:
        return self.roles[player - 1]

    def living(self, role: Role) -> tuple[int, ...]:
        return tuple(p for p in sorted(self.alive) if self.role_of(p) is role)

    @property
    def is_over(self) -> bool:
        return self.phase is Phase.OVER
