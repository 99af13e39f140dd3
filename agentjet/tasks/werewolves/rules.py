"""The rules: who must act now, which actions are legal, and the state each action leads to.

Pure and deterministic: `new_game(seed)` deals the table, `pending(state)` is the one open
question, `apply(state, action)` answers it (raising `IllegalAction` for anything the question
does not allow) and runs every automatic step up to the next question. The same seed and the
same actions always give the same event log. Randomness (the deal, a wolves' tie) comes from
the seed alone.

Night: wolves talk (if discussion is on), vote a victim (plurality, a seeded draw between tied
targets), the witch heals that victim (never herself; once a game) or poisons a player (once a
game) or passes, the seer learns one living player's role; at dawn the victim (unless healed)
and the poisoned die. A hunter killed by the wolves may shoot; a poisoned one may not. Day:
each living player talks, then votes someone out or abstains (a tie eliminates nobody); the
voted-out player says last words and, if the hunter, may shoot. Wins are checked after each
death sequence (a hunter's shot included): no wolf left -> village; living wolves x 2 >= living players -> wolves. After
`max_rounds` days without a winner the game ends as a draw.
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass, replace

from agentjet.tasks.werewolves.state import (
    TARGETED,
    Action,
    ActionKind,
    Decision,
    Event,
    GameState,
    Phase,
    Role,
    RuleConfig,
    Side,
    deal_roles,
)

__all__ = [
    "MAX_SPEECH_CHARS",
    "IllegalAction",
    "Resolved",
    "apply",
    "default_action",
    "is_legal",
    "new_game",
    "open_questions",
    "pending",
    "resolve",
    "winner_of",
]

MAX_SPEECH_CHARS = 200
_SPEECH = frozenset({ActionKind.SAY})
# Secret ballots: a ballot is no event, so no voter's view shows another's before the count
_BALLOTS = frozenset({Phase.WOLF_VOTE, Phase.DAY_VOTE})


class IllegalAction(ValueError):
    """The action does not answer the open question (wrong kind, bad target, game over)."""


def new_game(seed: int, config: RuleConfig | None = None) -> GameState:
    """Deal the nine roles for `seed` and open the first night."""
    roles = deal_roles(seed)
    state = GameState(seed=seed, config=config or RuleConfig(), roles=roles, alive=frozenset(range(1, len(roles) + 1)))
    return _begin_night(state)


def winner_of(roles: tuple[Role, ...], alive: frozenset[int]) -> Side | None:
    """Village when no wolf lives (checked first), wolves at parity, else nobody yet."""
    wolves = sum(1 for p in alive if roles[p - 1] is Role.WEREWOLF)
    if wolves == 0:
        return Side.VILLAGE
    if wolves * 2 >= len(alive):
        return Side.WOLVES
    return None


def pending(state: GameState) -> Decision | None:
    """The open question, or None when the game is over."""
    return None if state.is_over else _question(state)


def _question(state: GameState) -> Decision:
    """The question of the first player in the queue of a game that is not over."""
    player = state.queue[0]
    others = tuple(p for p in sorted(state.alive) if p != player)
    phase = state.phase
    if phase in (Phase.WOLF_CHAT, Phase.DAY_TALK, Phase.LAST_WORDS):
        return Decision(player, phase, _SPEECH)
    if phase is Phase.WOLF_VOTE:
        prey = tuple(p for p in others if state.role_of(p) is not Role.WEREWOLF)
        return Decision(player, phase, frozenset({ActionKind.KILL}), prey)
    if phase is Phase.WITCH:
        return Decision(player, phase, _witch_kinds(state, player), others if state.poison_left else ())
    if phase is Phase.SEER:
        return Decision(player, phase, frozenset({ActionKind.CHECK}), others)
    if phase is Phase.DAY_VOTE:
        return Decision(player, phase, frozenset({ActionKind.VOTE, ActionKind.PASS}), others)
    return Decision(player, phase, frozenset({ActionKind.SHOOT, ActionKind.PASS}), others)  # HUNTER


def open_questions(state: GameState) -> tuple[Decision, ...]:
    """Every question that may be asked now: in a vote, each voter still to vote (a ballot changes no
    view, so every voter's question and view are what they would be in turn), else the one pending.

    Answered in the order given, they play the game that asking one at a time plays; asked at once,
    a game's voters wait for one round trip to a model instead of one each.
    """
    if state.is_over:
        return ()
    if state.phase not in _BALLOTS:
        return (_question(state),)
    return tuple(_question(replace(state, queue=state.queue[i:])) for i in range(len(state.queue)))


def is_legal(decision: Decision, action: Action) -> bool:
    if action.kind not in decision.kinds:
        return False
    return action.kind not in TARGETED or action.target in decision.targets


def default_action(decision: Decision) -> Action:
    """The legal stand-in for an invalid answer: silence, a pass where allowed, else the first target."""
    if decision.is_speech:
        return Action(ActionKind.SAY, text="")
    if ActionKind.PASS in decision.kinds:
        return Action(ActionKind.PASS)
    kind = min(decision.kinds)  # kill or check: exactly one kind
    return Action(kind, target=decision.targets[0])


@dataclass(frozen=True)
class Resolved:
    """The action the game plays for an answer, and whether the answer was invalid (penalised)."""

    action: Action
    is_invalid: bool


def resolve(decision: Decision, action: Action | None) -> Resolved:
    """`action` when it legally answers `decision`; else the legal default, flagged invalid.

    Speech is never invalid (any text is a line; no line at all is silence)."""
    if action is not None and is_legal(decision, action):
        return Resolved(action, is_invalid=False)
    return Resolved(default_action(decision), is_invalid=not decision.is_speech)


def apply(state: GameState, action: Action) -> GameState:
    """Answer the open question with `action` and run the game on to the next question."""
    decision = pending(state)
    if decision is None:
        raise IllegalAction("the game is over")
    if not is_legal(decision, action):
        raise IllegalAction(f"{action} does not answer {decision}")
    state = _record(state, decision.player, action)
    state = replace(state, queue=state.queue[1:])
    return state if state.queue else _advance(state, decision.player)


# ---- one action's direct effect -------------------------------------------------------------
def _record(state: GameState, player: int, action: Action) -> GameState:
    phase, kind, target = state.phase, action.kind, action.target
    if phase is Phase.WOLF_CHAT:
        return _log(state, "wolf_chat", actor=player, text=_clean(action.text), audience=_pack(state))
    if phase is Phase.DAY_TALK:
        return _log(state, "speech", actor=player, text=_clean(action.text))
    if phase is Phase.LAST_WORDS:
        return _log(state, "last_words", actor=player, text=_clean(action.text))
    if phase in (Phase.WOLF_VOTE, Phase.DAY_VOTE):
        return replace(state, ballots=(*state.ballots, (player, target)))
    if phase is Phase.SEER:
        assert target is not None  # legal: a check always names a target
        return _log(state, "check", actor=player, target=target, role=state.role_of(target), audience={player})
    if kind is ActionKind.HEAL:
        state = replace(state, healed=True, heal_left=False)
        return _log(state, "heal", actor=player, target=state.victim, audience={player})
    if kind is ActionKind.POISON:
        state = replace(state, poisoned=target, poison_left=False)
        return _log(state, "poison", actor=player, target=target, audience={player})
    if kind is ActionKind.SHOOT:
        assert target is not None
        state = replace(state, alive=state.alive - {target})
        return _log(state, "shot", actor=player, target=target)
    return state  # a pass


# ---- what happens when a phase's queue is empty ---------------------------------------------
def _advance(state: GameState, last_actor: int) -> GameState:
    phase = state.phase
    if phase is Phase.WOLF_CHAT:
        return replace(state, phase=Phase.WOLF_VOTE, queue=state.living(Role.WEREWOLF))
    if phase is Phase.WOLF_VOTE:
        return _to_witch(_resolve_wolf_vote(state))
    if phase is Phase.WITCH:
        return _to_seer(state)
    if phase is Phase.SEER:
        return _dawn(state)
    if phase is Phase.DAY_TALK:
        return replace(state, phase=Phase.DAY_VOTE, queue=tuple(sorted(state.alive)))
    if phase is Phase.DAY_VOTE:
        return _resolve_day_vote(state)
    if phase is Phase.LAST_WORDS:
        return _after_vote_death(state, last_actor)
    assert state.shooter_then is not None  # HUNTER: set whenever a hunter is asked to shoot
    return _after_deaths(replace(state, shooter_then=None), state.shooter_then)


def _begin_night(state: GameState) -> GameState:
    wolves = state.living(Role.WEREWOLF)
    phase = Phase.WOLF_CHAT if state.config.discussion else Phase.WOLF_VOTE
    return replace(state, phase=phase, queue=wolves, ballots=(), victim=None, healed=False, poisoned=None)


def _resolve_wolf_vote(state: GameState) -> GameState:
    counts = Counter(t for _, t in state.ballots if t is not None)
    top = max(counts.values())
    tied = sorted(t for t, n in counts.items() if n == top)
    victim = random.Random(f"werewolves/wolf-tie/{state.seed}/{state.round}").choice(tied)
    state = replace(state, victim=victim)
    return _log(state, "wolf_kill", target=victim, ballots=state.ballots, audience=_pack(state))


def _to_witch(state: GameState) -> GameState:
    witch = state.living(Role.WITCH)
    if witch and _witch_kinds(state, witch[0]) != {ActionKind.PASS}:
        return replace(state, phase=Phase.WITCH, queue=witch, ballots=())
    return _to_seer(replace(state, ballots=()))


def _witch_kinds(state: GameState, witch: int) -> frozenset[ActionKind]:
    kinds = {ActionKind.PASS}
    if state.heal_left and state.victim is not None and state.victim != witch:
        kinds.add(ActionKind.HEAL)
    if state.poison_left:
        kinds.add(ActionKind.POISON)
    return frozenset(kinds)


def _to_seer(state: GameState) -> GameState:
    seer = state.living(Role.SEER)
    return replace(state, phase=Phase.SEER, queue=seer) if seer else _dawn(state)


def _dawn(state: GameState) -> GameState:
    eaten = None if state.healed else state.victim
    dead = sorted({p for p in (eaten, state.poisoned) if p is not None})
    for p in dead:
        state = _log(state, "died", target=p)
    state = replace(state, alive=state.alive - set(dead))
    if eaten is not None and state.role_of(eaten) is Role.HUNTER and state.poisoned != eaten:
        return replace(state, phase=Phase.HUNTER, queue=(eaten,), shooter_then=Phase.DAY_TALK)
    return _after_deaths(state, Phase.DAY_TALK)


def _resolve_day_vote(state: GameState) -> GameState:
    counts = Counter(t for _, t in state.ballots if t is not None)
    state = _log(state, "votes", ballots=state.ballots)
    top = max(counts.values(), default=0)
    tied = [t for t, n in counts.items() if n == top]
    state = replace(state, ballots=())
    if top == 0 or len(tied) > 1:
        return _after_deaths(_log(state, "tie"), Phase.WOLF_CHAT)
    out = tied[0]
    state = _log(replace(state, alive=state.alive - {out}), "voted_out", target=out)
    if state.config.discussion:
        return replace(state, phase=Phase.LAST_WORDS, queue=(out,))
    return _after_vote_death(state, out)


def _after_vote_death(state: GameState, out: int) -> GameState:
    if state.role_of(out) is Role.HUNTER:
        return replace(state, phase=Phase.HUNTER, queue=(out,), shooter_then=Phase.WOLF_CHAT)
    return _after_deaths(state, Phase.WOLF_CHAT)


def _after_deaths(state: GameState, then: Phase) -> GameState:
    """Check the win, then open the day (`DAY_TALK`) or the next night (`WOLF_CHAT`)."""
    winner = winner_of(state.roles, state.alive)
    if winner is not None:
        return _log(replace(state, phase=Phase.OVER, queue=(), winner=winner), "over", text=str(winner))
    if then is Phase.DAY_TALK:
        phase = Phase.DAY_TALK if state.config.discussion else Phase.DAY_VOTE
        return replace(state, phase=phase, queue=tuple(sorted(state.alive)))
    if state.round >= state.config.max_rounds:
        return _log(replace(state, phase=Phase.OVER, queue=()), "over", text="round cap: draw")
    return _begin_night(replace(state, round=state.round + 1))


# ---- small pieces ---------------------------------------------------------------------------
def _pack(state: GameState) -> frozenset[int]:
    return frozenset(p for p in range(1, len(state.roles) + 1) if state.role_of(p) is Role.WEREWOLF)


def _clean(text: str) -> str:
    return " ".join(text.split())[:MAX_SPEECH_CHARS]


def _log(
    state: GameState,
    kind: str,
    *,
    actor: int | None = None,
    target: int | None = None,
    text: str = "",
    role: Role | None = None,
    ballots: tuple[tuple[int, int | None], ...] = (),
    audience: frozenset[int] | set[int] | None = None,
) -> GameState:
    seen = None if audience is None else frozenset(audience)
    event = Event(state.round, kind, actor, target, text, role, ballots, seen)
    return replace(state, events=(*state.events, event))
