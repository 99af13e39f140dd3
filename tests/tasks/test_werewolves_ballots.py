"""A vote's voters are asked at once: the same games as one question at a time, in less wall time.

The oracle is the loop the game ran before (`_one_at_a_time`, below): for hundreds of deals, with
scripted and randomly answering seats, with and without discussion, `play` must give the same
record and show every seat the same views. Then: the voters really are asked at once (a barrier
that only opens when every wolf of a night vote is in `act`), an error waits for the other
answers, one agent for several seats is never asked twice at once, and through a real server the
wolves' HTTP calls of one vote overlap.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable, Mapping

import pytest

from agentjet.core.backends.fakes import ScriptedBackend
from agentjet.core.testing import RunningServer
from agentjet.tasks.base import POLICY
from agentjet.tasks.werewolves import Werewolves
from agentjet.tasks.werewolves.agent import Agent, Reply
from agentjet.tasks.werewolves.game import GameRecord, Turn, play
from agentjet.tasks.werewolves.rules import apply, new_game, open_questions, pending, resolve
from agentjet.tasks.werewolves.scripted import ScriptedPlayer
from agentjet.tasks.werewolves.state import Action, ActionKind, Decision, Phase, Role, RuleConfig
from agentjet.tasks.werewolves.view import PlayerView, view_of
from tests.tasks.test_werewolves_family import answer, play_live


def _one_at_a_time(seed: int, agents: Mapping[int, Agent], config: RuleConfig | None = None) -> GameRecord:
    """The game loop before ballots were asked at once: one pending question, one answer, in turn."""
    state = new_game(seed, config)
    turns: list[Turn] = []
    while (decision := pending(state)) is not None:
        reply = agents[decision.player].act(view_of(state, decision.player), decision)
        resolved = resolve(decision, reply.action)
        turns.append(Turn.answered(state.round, decision, reply.text, resolved))
        state = apply(state, resolved.action)
    return GameRecord(state, tuple(turns))


class _Recording:
    """Wraps a seat's agent and keeps every (view, decision) it was shown; remote, so a vote asks it at once."""

    remote = True

    def __init__(self, inner: Agent) -> None:
        self.inner = inner
        self.seen: list[tuple[PlayerView, Decision]] = []

    def act(self, view: PlayerView, decision: Decision) -> Reply:
        self.seen.append((view, decision))
        return self.inner.act(view, decision)


class _Random:
    """Answers like a careless model: a random legal action, garbage, or an illegal one, seeded per call."""

    def __init__(self, seed: str) -> None:
        self.seed = seed
        self.calls = 0

    def act(self, view: PlayerView, decision: Decision) -> Reply:
        rng = random.Random(f"{self.seed}/{self.calls}")
        self.calls += 1
        roll = rng.random()
        if decision.is_speech:
            return Reply("hm", Action(ActionKind.SAY, text=f"player {rng.choice(view.alive)} is odd"))
        if roll < 0.15:
            return Reply("???", None)
        if roll < 0.25:
            return Reply("vote 99", Action(ActionKind.VOTE, target=99))
        kind = rng.choice(sorted(decision.kinds))
        target = rng.choice(decision.targets) if decision.targets else None
        return Reply(f"{kind} {target}", Action(kind, target=target))


def _seats(seed: int, make: Callable[[int, str], Agent]) -> dict[int, _Recording]:
    return {p: _Recording(make(p, f"{seed}/{p}")) for p in range(1, 10)}


def _mixed(player: int, seat_seed: str) -> Agent:
    return _Random(seat_seed) if player % 3 else ScriptedPlayer(seat_seed)


@pytest.mark.parametrize("discussion", [False, True], ids=["votes-only", "discussion"])
@pytest.mark.parametrize(
    "make",
    [lambda p, s: ScriptedPlayer(s), lambda p, s: _Random(s), _mixed],
    ids=["scripted", "random", "mixed"],
)
def test_asking_voters_at_once_plays_the_game_one_question_at_a_time_plays(
    make: Callable[[int, str], Agent], discussion: bool
) -> None:
    config = RuleConfig(discussion=discussion)
    ballots_asked_together = 0
    for seed in range(150):
        at_once, in_turn = _seats(seed, make), _seats(seed, make)
        record = play(seed, at_once, config)
        assert record == _one_at_a_time(seed, in_turn, config), seed
        for player in at_once:
            assert at_once[player].seen == in_turn[player].seen, (seed, player)
        ballots_asked_together += sum(1 for t in record.turns if t.phase in (Phase.WOLF_VOTE, Phase.DAY_VOTE))
    assert ballots_asked_together > 1000  # the tables exercised the votes, not just the speeches


def test_open_questions_are_a_votes_remaining_voters_and_otherwise_the_one_pending() -> None:
    state = new_game(7, RuleConfig(discussion=False))
    assert state.phase is Phase.WOLF_VOTE
    questions = open_questions(state)
    wolves = tuple(p for p in range(1, 10) if state.role_of(p) is Role.WEREWOLF)
    assert tuple(q.player for q in questions) == wolves and questions[0] == pending(state)
    state = apply(state, Action(ActionKind.KILL, target=questions[0].targets[0]))
    assert open_questions(state) == questions[1:]  # the first ballot changed no other voter's question
    while state.phase is Phase.WOLF_VOTE:
        state = apply(state, Action(ActionKind.KILL, target=questions[0].targets[0]))
    assert state.phase in (Phase.WITCH, Phase.SEER) and open_questions(state) == (pending(state),)


class _AtTheBarrier:
    """A wolf whose night vote only returns once every other living wolf is voting at the same moment."""

    remote = True

    def __init__(self, barrier: threading.Barrier, inner: Agent) -> None:
        self.barrier, self.inner = barrier, inner

    def act(self, view: PlayerView, decision: Decision) -> Reply:
        if decision.phase is Phase.WOLF_VOTE and view.round == 1:
            self.barrier.wait(timeout=5)  # BrokenBarrierError if the game asked the wolves one by one
        return self.inner.act(view, decision)


def test_the_wolves_of_a_vote_are_in_act_at_the_same_moment() -> None:
    seed = 11
    wolves = [p for p in range(1, 10) if new_game(seed).role_of(p) is Role.WEREWOLF]
    barrier = threading.Barrier(len(wolves))
    agents: dict[int, Agent] = {p: ScriptedPlayer(f"{seed}/{p}") for p in range(1, 10)}
    agents.update({p: _AtTheBarrier(barrier, ScriptedPlayer(f"{seed}/{p}")) for p in wolves})
    record = play(seed, agents, RuleConfig(discussion=False))
    assert record.final.is_over and not barrier.broken


class _Slow:
    """Sleeps, then answers; notes when it finished."""

    remote = True

    def __init__(self, inner: Agent, delay_s: float) -> None:
        self.inner, self.delay_s = inner, delay_s
        self.finished = threading.Event()

    def act(self, view: PlayerView, decision: Decision) -> Reply:
        time.sleep(self.delay_s)
        self.finished.set()
        return self.inner.act(view, decision)


class _Broken:
    remote = True

    def act(self, view: PlayerView, decision: Decision) -> Reply:
        raise ConnectionError("the server went away")


def test_an_agent_that_raises_fails_the_game_after_the_other_voters_answered() -> None:
    seed = 11
    first, *others = [p for p in range(1, 10) if new_game(seed).role_of(p) is Role.WEREWOLF]
    slow = {p: _Slow(ScriptedPlayer(f"{seed}/{p}"), 0.3) for p in others}
    agents: dict[int, Agent] = {p: ScriptedPlayer(f"{seed}/{p}") for p in range(1, 10)}
    agents.update({first: _Broken(), **slow})
    with pytest.raises(ConnectionError, match="went away"):
        play(seed, agents, RuleConfig(discussion=False))
    assert all(agent.finished.is_set() for agent in slow.values())  # no call outlived its game


class _OneAtATime:
    """One agent for every seat: fails if it is ever asked while it is still answering."""

    remote = True

    def __init__(self) -> None:
        self.busy = threading.Lock()
        self.calls = 0

    def act(self, view: PlayerView, decision: Decision) -> Reply:
        if not self.busy.acquire(blocking=False):
            raise AssertionError("asked twice at once")
        try:
            time.sleep(0.001)
            self.calls += 1
            return ScriptedPlayer(f"shared/{view.player}/{self.calls}").act(view, decision)
        finally:
            self.busy.release()


def test_one_agent_playing_several_seats_is_asked_one_question_at_a_time() -> None:
    shared = _OneAtATime()
    record = play(5, dict.fromkeys(range(1, 10), shared), RuleConfig(discussion=False))
    assert record.final.is_over and shared.calls == len(record.turns)


class _OnWhichThread:
    """A scripted seat (no `remote`) that notes the thread each answer came from."""

    def __init__(self, inner: Agent) -> None:
        self.inner = inner
        self.threads: set[str] = set()

    def act(self, view: PlayerView, decision: Decision) -> Reply:
        self.threads.add(threading.current_thread().name)
        return self.inner.act(view, decision)


def test_seats_that_wait_on_no_model_are_asked_on_the_games_own_thread() -> None:
    seed = 11
    wolves = [p for p in range(1, 10) if new_game(seed).role_of(p) is Role.WEREWOLF]
    barrier = threading.Barrier(len(wolves))
    scripted = {p: _OnWhichThread(ScriptedPlayer(f"{seed}/{p}")) for p in range(1, 10) if p not in wolves}
    agents: dict[int, Agent] = {
        **scripted,
        **{p: _AtTheBarrier(barrier, ScriptedPlayer(f"{seed}/{p}")) for p in wolves},
    }
    record = play(seed, agents, RuleConfig(discussion=False))
    assert record.final.is_over and not barrier.broken  # the wolves were still asked at once
    assert {name for seat in scripted.values() for name in seat.threads} == {threading.current_thread().name}


class _Village:
    """One scripted agent (not remote) for every village seat: fails if asked while it is still answering."""

    def __init__(self, seed: int) -> None:
        self.busy = threading.Lock()
        self.seats = {p: ScriptedPlayer(f"{seed}/{p}") for p in range(1, 10)}

    def act(self, view: PlayerView, decision: Decision) -> Reply:
        if not self.busy.acquire(blocking=False):
            raise AssertionError("asked twice at once")
        try:
            return self.seats[view.player].act(view, decision)
        finally:
            self.busy.release()


class _DayVoters:
    """How many remote wolves were answering a day vote at the same moment, at most."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.in_act = 0
        self.most = 0


class _DayVoter:
    """A remote wolf that counts itself in `voters` while it answers a day vote."""

    remote = True

    def __init__(self, voters: _DayVoters, inner: Agent) -> None:
        self.voters, self.inner = voters, inner

    def act(self, view: PlayerView, decision: Decision) -> Reply:
        if decision.phase is Phase.DAY_VOTE:
            with self.voters.lock:
                self.voters.in_act += 1
                self.voters.most = max(self.voters.most, self.voters.in_act)
            time.sleep(0.05)
            with self.voters.lock:
                self.voters.in_act -= 1
        return self.inner.act(view, decision)


def test_one_agent_for_the_scripted_seats_leaves_the_model_seats_asked_at_once() -> None:
    seed = 11
    wolves = [p for p in range(1, 10) if new_game(seed).role_of(p) is Role.WEREWOLF]
    voters, village = _DayVoters(), _Village(seed)
    agents: dict[int, Agent] = {p: village for p in range(1, 10) if p not in wolves}
    agents.update({p: _DayVoter(voters, ScriptedPlayer(f"{seed}/{p}")) for p in wolves})
    record = play(seed, agents, RuleConfig(discussion=False))
    assert record.final.is_over
    assert voters.most >= 2  # a day vote's wolves answered at once beside the village's one shared agent


# ---- through a real server: the openai client's calls of one vote overlap --------------------
class _Timed:
    """`answer` for a werewolves prompt, noting when each call reached the model."""

    def __init__(self) -> None:
        self.arrivals: list[float] = []

    def __call__(self, prompt: str) -> str:
        self.arrivals.append(time.monotonic())
        return answer(prompt)


def test_a_real_servers_calls_of_one_vote_overlap(
    live_server: Callable[..., RunningServer], scripted_backend: Callable[..., ScriptedBackend]
) -> None:
    model = _Timed()
    token_s = 0.15  # "ACTION: kill 3" is 5 tokens: asked in turn, the wolves' calls would be >= 0.75 s apart
    server = live_server(scripted_backend(model, token_delay_s=token_s))
    family = Werewolves(discussion=False, max_rounds=1)
    item = family.items("train", count=1, seed=0)[0]
    outcome, records = play_live(family, item, {POLICY: server})
    assert len(records[POLICY]["calls"]) == outcome.metadata["actions"][POLICY] == len(model.arrivals) >= 3
    first_night = model.arrivals[:3]  # without discussion, the game opens with the three wolves' vote
    assert max(first_night) - min(first_night) < 0.4, model.arrivals
