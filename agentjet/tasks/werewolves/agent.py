"""The seam between the game and its players: an agent answers one decision from its view.

Two implementations: `ScriptedPlayer` (heuristics, free) and `LlmPlayer` (a chat model behind
an OpenAI-compatible endpoint). An agent may name an illegal or no action (`Reply.action` is
None when its text could not be read); the game then plays the legal default and counts the
reply invalid. An agent raises only when it cannot answer at all (its server went away).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from agentjet.tasks.werewolves.state import Action, Decision
from agentjet.tasks.werewolves.view import PlayerView

__all__ = ["Agent", "Reply"]


@dataclass(frozen=True)
class Reply:
    text: str  # what the agent said: a model's raw output, or a scripted player's line
    action: Action | None  # the action it named; None when nothing could be read


class Agent(Protocol):
    """Answers decisions for one seat, one decision at a time.

    An agent whose `act` waits on a model (a round trip to a server) sets a class attribute `remote = True`:
    the seats of a vote that are remote are then asked at once, each from its own thread (`game.play`).
    Without it an agent is asked on the game's own thread, in turn, as a scripted player is.
    """

    def act(self, view: PlayerView, decision: Decision) -> Reply: ...
