"""The chat messages an LLM player gets for one decision: short, private, one format line.

A system message (seat, role, what the role knows, how each side wins) and a user message (the
last few events the player saw, who is alive, the roles it knows, then the question with its
legal options spelled out, e.g. `Options: ACTION: vote 1 | ACTION: vote 3 | ACTION: pass`, so a
small model can copy one). Each call stands alone, so prompts stay short.

An action question is preceded by one worked example (a question of the same kind and its
one-line answer): SmolLM2-135M answers in format 23% of the time with it, 6% without (8 game
decisions x 6 samples at temperature 1), which is what gives GRPO something to reinforce.
"""

from __future__ import annotations

from agentjet.tasks.werewolves.narrate import describe
from agentjet.tasks.werewolves.state import TARGETED, ActionKind, Decision, Phase, Role
from agentjet.tasks.werewolves.view import PlayerView

__all__ = ["render_messages"]

_RULES = (
    "Werewolves, 9 players: 3 werewolves, 3 villagers, a seer, a witch, a hunter. Each night the werewolves "
    "kill one player; each day everyone votes one player out. The village wins when no werewolf is left; "
    "the werewolves win when they are at least half of the living players."
)
_OPTION_ORDER = (
    ActionKind.KILL,
    ActionKind.CHECK,
    ActionKind.VOTE,
    ActionKind.SHOOT,
    ActionKind.HEAL,
    ActionKind.POISON,
    ActionKind.PASS,
)
_SECRETS = {
    Role.VILLAGER: "You have no power: find the werewolves.",
    Role.SEER: "Each night you learn one player's role.",
    Role.WITCH: "You have one heal (not yourself) and one poison, one potion a night.",
    Role.HUNTER: "When the werewolves kill you or the village votes you out, you may shoot one player.",
}


def render_messages(view: PlayerView, decision: Decision, *, memory_events: int = 12) -> list[dict[str, str]]:
    system = f"{_RULES} You are player {view.player}, the {view.role}. {_secret(view)} Answer in the format asked."
    history = [describe(e) for e in view.events[-memory_events:]] if memory_events > 0 else []
    known = ", ".join(f"{p} {r}" for p, r in sorted(view.known.items()) if p != view.player) or "none"
    lines = [*history, f"Alive: {_players(view.alive)}. Roles you know: {known}.", _question(view, decision)]
    question = {"role": "user", "content": "\n".join(lines)}
    return [{"role": "system", "content": system}, *_worked_example(decision), question]


_EXAMPLE_TARGETS = (2, 5, 7)


def _worked_example(decision: Decision) -> list[dict[str, str]]:
    """A made-up question of the decision's first kind and its answer, in the exact format asked."""
    if decision.is_speech:
        return []
    kind = next(k for k in _OPTION_ORDER if k in decision.kinds)
    options = [f"ACTION: {kind} {t}" for t in _EXAMPLE_TARGETS] if kind in TARGETED else [f"ACTION: {kind}"]
    question = f"Example. Options: {' | '.join(options)}\nReply with exactly one option."
    answer = options[len(options) // 2]
    return [{"role": "user", "content": question}, {"role": "assistant", "content": answer}]


def _secret(view: PlayerView) -> str:
    if view.role is Role.WEREWOLF:
        return f"The werewolves are players {_players(view.pack)}."
    return _SECRETS[view.role]


def _question(view: PlayerView, decision: Decision) -> str:
    phase, r = decision.phase, view.round
    if phase is Phase.WOLF_CHAT:
        return f"Night {r}. Tell the pack whom to kill. Reply: SAY: <one short sentence>"
    if phase is Phase.DAY_TALK:
        return f"Day {r}. Speak to the village. Reply: SAY: <one short sentence>"
    if phase is Phase.LAST_WORDS:
        return "You were voted out. Say your last words. Reply: SAY: <one short sentence>"
    situation = {
        Phase.WOLF_VOTE: f"Night {r}. Choose tonight's victim.",
        Phase.SEER: f"Night {r}. Choose a player whose role you will learn.",
        Phase.DAY_VOTE: f"Day {r}. Vote a player out, or pass.",
        Phase.HUNTER: "You died. You may shoot a player, or pass.",
    }.get(phase) or _witch_situation(view, decision)
    options = " | ".join(_options(decision))
    return f"{situation} Options: {options}\nReply with exactly one option."


def _witch_situation(view: PlayerView, decision: Decision) -> str:
    told = f" The werewolves attack player {view.victim} tonight." if view.victim is not None else ""
    can = [
        w for k, w in ((ActionKind.HEAL, "heal them"), (ActionKind.POISON, "poison a player")) if k in decision.kinds
    ]
    return f"Night {view.round}.{told} You may {' or '.join(can)} (one potion a night), or pass."


def _options(decision: Decision) -> list[str]:
    """Every legal answer spelled out, so a small model can copy one."""
    options = []
    for kind in _OPTION_ORDER:
        if kind not in decision.kinds:
            continue
        if kind in TARGETED:
            options += [f"ACTION: {kind} {t}" for t in decision.targets]
        else:
            options.append(f"ACTION: {kind}")
    return options


def _players(players: tuple[int, ...] | list[int]) -> str:
    return ", ".join(str(p) for p in players)
