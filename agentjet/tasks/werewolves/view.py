"""A player's private view of the game: all an agent (scripted or LLM) may base a decision on.

Players see public events, the events addressed to them (the pack's chat and kill for wolves,
the seer's own checks, the witch's own potions) and the roles they know: their own, the pack
for a wolf, the seer's checks. The witch learns tonight's victim while her heal is unused.
Nothing else of the state (the deal, other players' secrets) reaches an agent.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from agentjet.tasks.werewolves.state import Event, GameState, Phase, Role

__all__ = ["PlayerView", "view_of"]


@dataclass(frozen=True)
class PlayerView:
    player: int
    role: Role
    round: int
    phase: Phase
    alive: tuple[int, ...]
    known: Mapping[int, Role]  # roles this player knows for sure (itself included)
    events: tuple[Event, ...]  # the events this player saw, in order
    heal_left: bool = False  # witch only
    poison_left: bool = False  # witch only
    victim: int | None = None  # witch only, while her heal is unused: tonight's wolf target
    players: int = 9
    pack: tuple[int, ...] = field(default=())  # wolves only: every wolf's seat


def view_of(state: GameState, player: int) -> PlayerView:
    role = state.role_of(player)
    events = tuple(e for e in state.events if e.is_visible_to(player))
    known: dict[int, Role] = {player: role}
    pack: tuple[int, ...] = ()
    if role is Role.WEREWOLF:
        pack = tuple(p for p in range(1, len(state.roles) + 1) if state.role_of(p) is Role.WEREWOLF)
        known.update({p: Role.WEREWOLF for p in pack})
    for event in events:
        if event.kind == "check" and event.target is not None and event.role is not None:
            known[event.target] = event.role
    is_witch = role is Role.WITCH
    return PlayerView(
        player=player,
        role=role,
        round=state.round,
        phase=state.phase,
        alive=tuple(sorted(state.alive)),
        known=known,
        events=events,
        heal_left=is_witch and state.heal_left,
        poison_left=is_witch and state.poison_left,
        victim=state.victim if is_witch and state.heal_left and state.phase is Phase.WITCH else None,
        players=len(state.roles),
        pack=pack,
    )
