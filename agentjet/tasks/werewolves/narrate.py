"""One line of English per game event: the game log humans read and the history prompts show."""

from __future__ import annotations

from agentjet.tasks.werewolves.state import Event

__all__ = ["describe"]


def describe(event: Event) -> str:
    when = f"Night {event.round}" if event.kind in _NIGHT else f"Day {event.round}"
    return f"{when}: {_what(event)}"


_NIGHT = frozenset({"wolf_chat", "wolf_kill", "heal", "poison", "check", "died"})


def _what(e: Event) -> str:
    kind = e.kind
    if kind == "speech":
        return f"player {e.actor} said: {e.text or '...'}"
    if kind == "wolf_chat":
        return f"wolf {e.actor} told the pack: {e.text or '...'}"
    if kind == "wolf_kill":
        return f"the pack chose to attack player {e.target} ({_ballots(e)})"
    if kind == "heal":
        return f"the witch (player {e.actor}) healed player {e.target}"
    if kind == "poison":
        return f"the witch (player {e.actor}) poisoned player {e.target}"
    if kind == "check":
        return f"the seer (player {e.actor}) learned that player {e.target} is a {e.role}"
    if kind == "died":
        return f"player {e.target} was found dead"
    if kind == "votes":
        return f"votes: {_ballots(e)}"
    if kind == "voted_out":
        return f"player {e.target} was voted out"
    if kind == "tie":
        return "the vote was tied or empty: nobody was voted out"
    if kind == "shot":
        return f"the hunter (player {e.actor}) shot player {e.target}"
    if kind == "last_words":
        return f"player {e.actor}'s last words: {e.text or '...'}"
    if kind == "over":
        return f"game over: {e.text}" + (" win" if e.text in ("wolves", "village") else "")
    return f"{kind} {e.actor} {e.target} {e.text}"


def _ballots(e: Event) -> str:
    return ", ".join(f"{voter}->{'abstain' if target is None else target}" for voter, target in e.ballots) or "none"
