"""Run one whole game: ask each decision's agent, play the legal answer, keep the full record.

The loop is `open questions -> agent.act(view) -> rules.resolve -> rules.apply` until the game is
over (the round cap guarantees it ends). A vote's model-played voters (`Agent.remote`) are asked at once
(`rules.open_questions`: a ballot is secret, so each voter's question is what it would be in turn) and
every answer played in seat order: the same game as one question at a time, but a game of three model-played wolves
waits for one model round trip a vote instead of three, and the server batches more rows. Every
answer is kept as a `Turn` (raw text, the action played, whether the answer was invalid), next to
the rules' event log.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from agentjet.tasks.werewolves.agent import Agent, Reply
from agentjet.tasks.werewolves.narrate import describe
from agentjet.tasks.werewolves.rules import Resolved, apply, new_game, open_questions, resolve
from agentjet.tasks.werewolves.state import Action, Decision, Event, GameState, Phase, RuleConfig, Side
from agentjet.tasks.werewolves.view import view_of

__all__ = ["GameRecord", "Turn", "play"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Turn:
    player: int
    round: int
    phase: Phase
    text: str  # what the agent replied
    action: Action  # what the game played
    is_invalid: bool  # the reply named no legal action: the default was played instead
    is_speech: bool

    @classmethod
    def answered(cls, round: int, decision: Decision, text: str, resolved: Resolved) -> Turn:
        """The turn of `decision`, answered with `text` in day `round`, as the rules resolved the answer."""
        return cls(
            decision.player, round, decision.phase, text, resolved.action, resolved.is_invalid, decision.is_speech
        )


@dataclass(frozen=True)
class GameRecord:
    final: GameState
    turns: tuple[Turn, ...]

    @property
    def winner(self) -> Side | None:
        """The winning side, None for a draw at the round cap."""
        return self.final.winner

    @property
    def events(self) -> tuple[Event, ...]:
        return self.final.events

    def invalid_by_player(self) -> Counter[int]:
        return Counter(t.player for t in self.turns if t.is_invalid)

    def actions_by_player(self) -> Counter[int]:
        """Answers that name an action (speech is never invalid, so it does not count)."""
        return Counter(t.player for t in self.turns if not t.is_speech)

    def lines(self) -> list[str]:
        return [describe(e) for e in self.events]


def play(seed: int, agents: Mapping[int, Agent], config: RuleConfig | None = None) -> GameRecord:
    """Play the deal of `seed` with one agent per seat (1..9) to the end."""
    state = new_game(seed, config)
    turns: list[Turn] = []
    with ThreadPoolExecutor(max_workers=len(agents), thread_name_prefix=f"werewolves-{seed}") as pool:
        while questions := open_questions(state):
            replies = _ask(pool, agents, state, questions)
            for decision, reply in zip(questions, replies, strict=True):
                resolved = resolve(decision, reply.action)
                if resolved.is_invalid:
                    log.debug("invalid answer player=%d phase=%s reply=%r", decision.player, decision.phase, reply.text)
                turns.append(Turn.answered(state.round, decision, reply.text, resolved))
                state = apply(state, resolved.action)
    log.debug("game over seed=%d winner=%s round=%d turns=%d", seed, state.winner, state.round, len(turns))
    return GameRecord(state, tuple(turns))


def _ask(
    pool: ThreadPoolExecutor, agents: Mapping[int, Agent], state: GameState, questions: Sequence[Decision]
) -> list[Reply]:
    """Each question's reply, in order. The remote seats (`Agent.remote`) are asked at once, each on a thread of
    `pool`, the others on this thread in turn; an agent playing several remote seats answers one at a time.

    Every answer is waited for before an error is raised, so no call outlives its game.
    """
    remote = [d for d in questions if getattr(agents[d.player], "remote", False)]
    if len(remote) < 2 or len({id(agents[d.player]) for d in remote}) < len(remote):
        return [agents[d.player].act(view_of(state, d.player), d) for d in questions]
    futures = {d.player: pool.submit(agents[d.player].act, view_of(state, d.player), d) for d in remote}
    replies: dict[int, Reply] = {}
    try:
        for d in questions:
            if d.player not in futures:
                replies[d.player] = agents[d.player].act(view_of(state, d.player), d)
    finally:
        errors = [error for future in futures.values() if (error := future.exception()) is not None]
    if errors:
        raise errors[0]
    replies.update((player, future.result()) for player, future in futures.items())
    return [replies[d.player] for d in questions]
