"""Run one whole game: ask each decision's agent, play the legal answer, keep the full record.

The loop is `pending -> agent.act(view) -> rules.resolve -> rules.apply` until the game is over
(the round cap guarantees it ends). Every answer is kept as a `Turn` (raw text, the action
played, whether the answer was invalid), next to the rules' event log.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass

from agentjet.tasks.werewolves.agent import Agent
from agentjet.tasks.werewolves.narrate import describe
from agentjet.tasks.werewolves.rules import apply, new_game, pending, resolve
from agentjet.tasks.werewolves.state import Action, Event, GameState, Phase, RuleConfig, Side
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
    while (decision := pending(state)) is not None:
        reply = agents[decision.player].act(view_of(state, decision.player), decision)
        resolved = resolve(decision, reply.action)
        if resolved.is_invalid:
            log.debug("invalid answer player=%d phase=%s reply=%r", decision.player, decision.phase, reply.text)
        turn = Turn(
            decision.player,
            state.round,
            decision.phase,
            reply.text,
            resolved.action,
            resolved.is_invalid,
            decision.is_speech,
        )
        turns.append(turn)
        state = apply(state, resolved.action)
    log.debug("game over seed=%d winner=%s round=%d turns=%d", seed, state.winner, state.round, len(turns))
    return GameRecord(state, tuple(turns))
