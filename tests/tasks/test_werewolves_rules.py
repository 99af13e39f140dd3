"""The werewolves rules, one behaviour per test: potions, the hunter, the seer, votes, wins, the cap, determinism."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

import pytest

from agentjet.tasks.werewolves.game import play
from agentjet.tasks.werewolves.rules import IllegalAction, apply, new_game, pending, resolve, winner_of
from agentjet.tasks.werewolves.scripted import ScriptedPlayer
from agentjet.tasks.werewolves.state import (
    DEAL,
    Action,
    ActionKind,
    Decision,
    GameState,
    Phase,
    Role,
    RuleConfig,
    Side,
    deal_roles,
)
from agentjet.tasks.werewolves.view import view_of

Policy = Callable[[GameState, Decision], Action]
SAY, KILL, HEAL, POISON = ActionKind.SAY, ActionKind.KILL, ActionKind.HEAL, ActionKind.POISON
CHECK, VOTE, SHOOT, PASS = ActionKind.CHECK, ActionKind.VOTE, ActionKind.SHOOT, ActionKind.PASS


def seat(state: GameState, role: Role, index: int = 0) -> int:
    return [p for p in range(1, 10) if state.role_of(p) is role][index]


def quiet(state: GameState, decision: Decision) -> Action:
    """Everyone silent and passive: wolves kill their first target, the seer checks its first."""
    if decision.is_speech:
        return Action(SAY, text="")
    if PASS in decision.kinds:
        return Action(PASS)
    return Action(min(decision.kinds), target=decision.targets[0])


def policy(**by_phase: Callable[[GameState, Decision], Action]) -> Policy:
    """`quiet`, except for the phases given (keyed by phase value)."""
    return lambda state, decision: by_phase.get(decision.phase.value, quiet)(state, decision)


def run_until(state: GameState, play_as: Policy, stop: Callable[[GameState], bool]) -> GameState:
    for _ in range(500):
        if stop(state):
            return state
        decision = pending(state)
        assert decision is not None, "the game ended before the expected moment"
        state = apply(state, play_as(state, decision))
    raise AssertionError("never reached the expected moment")


def at(phase: Phase) -> Callable[[GameState], bool]:
    return lambda state: state.phase is phase


def kill(role: Role) -> Callable[[GameState, Decision], Action]:
    return lambda state, decision: Action(KILL, target=seat(state, role))


def vote(role: Role) -> Callable[[GameState, Decision], Action]:
    """Everyone votes out the first seat of `role` (which abstains: no self-votes)."""

    def ballot(state: GameState, decision: Decision) -> Action:
        target = seat(state, role)
        return Action(VOTE, target=target) if target != decision.player else Action(PASS)

    return ballot


SEED = 7


# ---- the deal --------------------------------------------------------------------------------
def test_deal_seats_the_nine_roles_by_seed() -> None:
    assert sorted(deal_roles(SEED)) == sorted(DEAL)
    assert [DEAL.count(r) for r in (Role.WEREWOLF, Role.VILLAGER)] == [3, 3]
    assert deal_roles(SEED) == deal_roles(SEED)
    assert len({deal_roles(s) for s in range(20)}) > 10
    state = new_game(SEED)
    assert state.phase is Phase.WOLF_CHAT and state.queue == state.living(Role.WEREWOLF)


# ---- the witch ------------------------------------------------------------------------------
def test_witch_cannot_heal_herself_but_may_still_poison() -> None:
    state = run_until(new_game(SEED), policy(wolf_vote=kill(Role.WITCH)), at(Phase.WITCH))
    decision = pending(state)
    assert decision is not None and decision.player == seat(state, Role.WITCH)
    assert HEAL not in decision.kinds and POISON in decision.kinds
    with pytest.raises(IllegalAction):
        apply(state, Action(HEAL))
    assert resolve(decision, Action(HEAL)).is_invalid


def test_witch_heal_saves_the_victim_and_ends_her_turn() -> None:
    state = run_until(new_game(SEED), policy(wolf_vote=kill(Role.VILLAGER)), at(Phase.WITCH))
    victim = seat(state, Role.VILLAGER)
    witch = seat(state, Role.WITCH)
    assert view_of(state, witch).victim == victim
    assert all(view_of(state, p).victim is None for p in range(1, 10) if p != witch)  # only the witch is told
    state = apply(state, Action(HEAL))
    assert state.phase is not Phase.WITCH  # one potion a night: no second question
    with pytest.raises(IllegalAction):
        apply(state, Action(POISON, target=seat(state, Role.WEREWOLF)))  # the seer is asked now
    state = run_until(state, quiet, at(Phase.DAY_TALK))
    assert victim in state.alive and len(state.alive) == 9
    assert not any(e.kind == "died" for e in state.events)


def test_witch_poison_kills_and_each_potion_works_once() -> None:
    wolf = seat(new_game(SEED), Role.WEREWOLF)
    witch_plan = policy(
        wolf_vote=kill(Role.VILLAGER),
        witch=lambda s, d: Action(HEAL) if HEAL in d.kinds else Action(POISON, target=wolf),
    )
    state = run_until(new_game(SEED), witch_plan, lambda s: s.round == 2 and s.phase is Phase.WITCH)
    decision = pending(state)
    assert decision is not None and HEAL not in decision.kinds and POISON in decision.kinds  # heal spent night 1
    state = apply(state, Action(POISON, target=wolf))
    state = run_until(state, quiet, at(Phase.DAY_TALK))
    assert wolf not in state.alive and not state.heal_left and not state.poison_left
    asked: list[Phase] = []

    def recording(s: GameState, d: Decision) -> Action:
        asked.append(d.phase)
        return quiet(s, d)

    state = run_until(state, recording, lambda s: s.round == 3 and s.phase is Phase.DAY_TALK)
    assert Phase.SEER in asked and Phase.WITCH not in asked  # no potion left: the witch is not asked


def test_witch_may_not_poison_a_dead_player_or_heal_with_no_victim_known() -> None:
    state = run_until(new_game(SEED), policy(wolf_vote=kill(Role.VILLAGER)), at(Phase.WITCH))
    decision = pending(state)
    assert decision is not None
    witch = seat(state, Role.WITCH)
    assert witch not in decision.targets  # no self-poison
    assert resolve(decision, Action(POISON, target=42)).is_invalid
    assert resolve(decision, Action(POISON)).is_invalid


# ---- the hunter -----------------------------------------------------------------------------
def test_hunter_killed_by_wolves_shoots() -> None:
    state = run_until(new_game(SEED), policy(wolf_vote=kill(Role.HUNTER)), at(Phase.HUNTER))
    hunter, wolf = seat(state, Role.HUNTER), seat(state, Role.WEREWOLF)
    decision = pending(state)
    assert decision is not None and decision.player == hunter and hunter not in state.alive
    state = apply(state, Action(SHOOT, target=wolf))
    assert wolf not in state.alive
    assert state.events[-1].kind == "shot" and (state.events[-1].actor, state.events[-1].target) == (hunter, wolf)
    assert state.phase is Phase.DAY_TALK


def test_poisoned_hunter_does_not_shoot() -> None:
    plan = policy(
        wolf_vote=kill(Role.VILLAGER),
        witch=lambda s, d: Action(POISON, target=seat(s, Role.HUNTER)),
        hunter=lambda s, d: Action(SHOOT, target=d.targets[0]),  # would shoot, if ever asked
    )
    state = run_until(new_game(SEED), plan, at(Phase.DAY_TALK))
    hunter = seat(state, Role.HUNTER)
    assert hunter not in state.alive
    assert not any(e.kind == "shot" for e in state.events)


def test_hunter_attacked_and_poisoned_the_same_night_does_not_shoot() -> None:
    plan = policy(
        wolf_vote=kill(Role.HUNTER),
        witch=lambda s, d: Action(POISON, target=seat(s, Role.HUNTER)),
        hunter=lambda s, d: Action(SHOOT, target=d.targets[0]),
    )
    state = run_until(new_game(SEED), plan, at(Phase.DAY_TALK))
    assert seat(state, Role.HUNTER) not in state.alive and not any(e.kind == "shot" for e in state.events)


def test_hunter_voted_out_shoots_after_last_words() -> None:
    plan = policy(day_vote=vote(Role.HUNTER))
    state = run_until(new_game(SEED), plan, at(Phase.LAST_WORDS))
    hunter = seat(state, Role.HUNTER)
    assert pending(state) == Decision(hunter, Phase.LAST_WORDS, frozenset({SAY}))
    state = apply(state, Action(SAY, text="  I was the hunter\n all along  "))
    assert state.events[-1].text == "I was the hunter all along"  # cleaned
    decision = pending(state)
    assert decision is not None and decision.phase is Phase.HUNTER and decision.player == hunter
    assert hunter not in decision.targets
    state = apply(state, Action(PASS))
    assert state.round == 2 and state.phase is Phase.WOLF_CHAT


# ---- the seer -------------------------------------------------------------------------------
def test_seer_learns_a_role_privately() -> None:
    wolf = seat(new_game(SEED), Role.WEREWOLF)
    plan = policy(seer=lambda s, d: Action(CHECK, target=wolf))
    state = run_until(new_game(SEED), plan, at(Phase.DAY_TALK))
    seer = seat(state, Role.SEER)
    seer_view = view_of(state, seer)
    assert seer_view.known[wolf] is Role.WEREWOLF
    checks = [e for e in seer_view.events if e.kind == "check"]
    assert len(checks) == 1 and checks[0].target == wolf and checks[0].role is Role.WEREWOLF
    for other in range(1, 10):
        if other != seer:
            view = view_of(state, other)
            assert not any(e.kind == "check" for e in view.events)
            if view.role is not Role.WEREWOLF:
                assert wolf not in view.known


def test_wolves_know_the_pack_and_their_night_but_villagers_do_not() -> None:
    state = run_until(new_game(SEED), quiet, at(Phase.DAY_TALK))
    pack = state.living(Role.WEREWOLF)
    wolf_view = view_of(state, pack[0])
    assert wolf_view.pack == pack and {wolf_view.known[p] for p in pack} == {Role.WEREWOLF}
    assert any(e.kind == "wolf_kill" for e in wolf_view.events)
    villager_view = view_of(state, seat(state, Role.VILLAGER, 1))
    assert villager_view.pack == () and not any(e.kind in ("wolf_kill", "wolf_chat") for e in villager_view.events)
    assert any(e.kind == "died" for e in villager_view.events)


# ---- votes ----------------------------------------------------------------------------------
def test_day_vote_tie_eliminates_nobody_and_self_votes_are_illegal() -> None:
    state = run_until(new_game(SEED), quiet, at(Phase.DAY_VOTE))
    decision = pending(state)
    assert decision is not None and decision.player not in decision.targets
    assert resolve(decision, Action(VOTE, target=decision.player)).is_invalid
    alive = state.alive
    abstained = run_until(state, quiet, at(Phase.WOLF_CHAT))  # everyone abstains
    assert abstained.alive == alive and abstained.events[-1].kind == "tie" and abstained.round == 2
    first, second = sorted(alive)[:2]

    def split(s: GameState, d: Decision) -> Action:  # first and second get the same number of votes
        target = first if d.player in sorted(alive)[2::2] or d.player == second else second
        return Action(VOTE, target=target)

    tied = run_until(state, policy(day_vote=split), at(Phase.WOLF_CHAT))
    counts = Counter(t for _, t in tied.events[-2].ballots)
    assert counts[first] == counts[second] > 0 and tied.alive == alive and tied.events[-1].kind == "tie"


def test_day_vote_plurality_votes_out_and_ballots_are_public() -> None:
    state = run_until(new_game(SEED), policy(day_vote=vote(Role.WEREWOLF)), at(Phase.LAST_WORDS))
    wolf = seat(state, Role.WEREWOLF)
    assert wolf not in state.alive
    votes = [e for e in state.events if e.kind == "votes"][0]
    assert votes.audience is None and all(t == wolf for v, t in votes.ballots if v != wolf)


def _three_way_wolf_split(seed: int) -> tuple[tuple[int, ...], GameState]:
    """Each wolf names a different victim; returns the targets offered and the state after the vote."""
    state = run_until(new_game(seed), quiet, at(Phase.WOLF_VOTE))
    decision = pending(state)
    assert decision is not None
    prey = decision.targets

    def split(s: GameState, d: Decision) -> Action:
        return Action(KILL, target=prey[len(s.ballots)])

    return prey, run_until(state, policy(wolf_vote=split), lambda s: s.victim is not None)


def test_wolves_may_not_kill_wolves() -> None:
    state = run_until(new_game(SEED), quiet, at(Phase.WOLF_VOTE))
    decision = pending(state)
    assert decision is not None and not set(decision.targets) & set(state.living(Role.WEREWOLF))
    assert resolve(decision, Action(KILL, target=state.living(Role.WEREWOLF)[-1])).is_invalid


def test_wolf_vote_tie_is_a_seeded_draw() -> None:
    prey, after = _three_way_wolf_split(SEED)
    assert after.victim in prey[:3] and after.victim == _three_way_wolf_split(SEED)[1].victim
    picks = set()
    for seed in range(30):
        prey, after = _three_way_wolf_split(seed)
        assert after.victim is not None
        picks.add(prey.index(after.victim))
    assert picks == {0, 1, 2}  # the draw is not always the first tied target


# ---- wins and the cap -----------------------------------------------------------------------
def test_win_conditions() -> None:
    roles = deal_roles(SEED)
    wolves = {p for p in range(1, 10) if roles[p - 1] is Role.WEREWOLF}
    good = sorted(set(range(1, 10)) - wolves)
    assert winner_of(roles, frozenset(range(1, 10))) is None
    assert winner_of(roles, frozenset(good)) is Side.VILLAGE
    assert winner_of(roles, frozenset(wolves | set(good[:3]))) is Side.WOLVES  # 3 x 2 >= 6
    assert winner_of(roles, frozenset(wolves | set(good[:4]))) is None  # 6 < 7
    one_wolf = {min(wolves)}
    assert winner_of(roles, frozenset(one_wolf | {good[0]})) is Side.WOLVES  # 1 x 2 >= 2
    assert winner_of(roles, frozenset()) is Side.VILLAGE  # nobody left: no wolf left


def test_wolves_win_at_parity() -> None:
    def vote_a_villager(s: GameState, d: Decision) -> Action:
        return Action(VOTE, target=[p for p in d.targets if s.role_of(p) is not Role.WEREWOLF][0])

    state = run_until(new_game(SEED), policy(day_vote=vote_a_villager), lambda s: s.is_over)
    assert state.winner is Side.WOLVES
    wolves = len(state.living(Role.WEREWOLF))
    assert wolves == 3 and wolves * 2 >= len(state.alive)
    assert state.events[-1].kind == "over" and pending(state) is None
    with pytest.raises(IllegalAction):
        apply(state, Action(PASS))


def test_village_wins_when_the_last_wolf_is_gone() -> None:
    def vote_a_wolf(s: GameState, d: Decision) -> Action:
        wolf = s.living(Role.WEREWOLF)[0]
        return Action(VOTE, target=wolf) if wolf != d.player else Action(PASS)

    heal_first = policy(day_vote=vote_a_wolf, witch=lambda s, d: Action(HEAL) if HEAL in d.kinds else Action(PASS))
    state = run_until(new_game(SEED), heal_first, lambda s: s.is_over)
    assert state.winner is Side.VILLAGE and state.living(Role.WEREWOLF) == ()


def test_round_cap_ends_the_game_as_a_draw() -> None:
    plan = policy(witch=lambda s, d: Action(HEAL) if HEAL in d.kinds else Action(PASS))
    state = run_until(new_game(SEED, RuleConfig(max_rounds=1)), plan, lambda s: s.is_over)
    assert state.winner is None and state.round == 1 and state.events[-1].text == "round cap: draw"
    assert len(state.alive) == 9  # healed at night, nobody voted out
    with pytest.raises(ValueError, match="max_rounds"):
        RuleConfig(max_rounds=0)


def test_discussion_off_skips_every_talk_phase() -> None:
    state = new_game(SEED, RuleConfig(discussion=False))
    assert state.phase is Phase.WOLF_VOTE
    phases = set()
    while (decision := pending(state)) is not None:
        phases.add(decision.phase)
        state = apply(state, quiet(state, decision))
    assert not phases & {Phase.WOLF_CHAT, Phase.DAY_TALK, Phase.LAST_WORDS}
    assert Phase.DAY_VOTE in phases


# ---- determinism ----------------------------------------------------------------------------
def _scripted_game(seed: int) -> tuple[GameState, list[Action]]:
    agents = {p: ScriptedPlayer(f"{seed}/{p}") for p in range(1, 10)}
    record = play(seed, agents)
    return record.final, [t.action for t in record.turns]


def test_same_seed_and_same_actions_give_the_same_log() -> None:
    final, actions = _scripted_game(SEED)
    replayed = new_game(SEED)
    for action in actions:
        replayed = apply(replayed, action)
    assert replayed == final and replayed.events == final.events
    assert _scripted_game(SEED)[0].events == final.events  # scripted players are seeded too
    assert _scripted_game(SEED + 1)[0].events != final.events
