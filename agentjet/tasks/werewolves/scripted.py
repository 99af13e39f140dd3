"""Scripted heuristic players for every role: the default opponents, free and deterministic.

Each decision is a pure function of the player's view and a random draw seeded by the player's
seed and its decision count, so a game of scripted players is the same for the same seed.

Village roles score suspicion from what they know and what they heard (`claims.read_talk`): a
lone seer claim is trusted, competing claims are doubted unless the wolves attacked one of the
claimants; silence, lines that name nobody and abstentions look wolfish. They name, vote and
(when sure) shoot their top suspect, so a wolf who talks and votes like a villager blends in.
The seer checks suspects and reveals wolves; the witch heals the night's victim (often on the
first night, always a trusted seer) and poisons a player she is sure of. Wolves agree without
talking: every wolf computes the same victim (a seer claimant first) and the same day target
(the villager the table already suspects); one wolf sometimes claims seer to frame a villager,
and counter-claims when the real seer names a wolf.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass

from agentjet.tasks.werewolves.agent import Reply
from agentjet.tasks.werewolves.claims import Talk, read_talk
from agentjet.tasks.werewolves.state import Action, ActionKind, Decision, Phase, Role
from agentjet.tasks.werewolves.view import PlayerView

__all__ = ["ScriptedPlayer", "Style", "suspicion"]

_NO_INFO = "I have no information yet."
_KILL_PROPOSAL = re.compile(r"kill (?:player )?(\d)", re.IGNORECASE)


@dataclass(frozen=True)
class Style:
    """The few probabilities that set how bold scripted players are."""

    bluff_rate: float = 0.35  # a wolf claims seer on day 1 to frame a villager
    seer_reveal_rate: float = 0.5  # the seer reveals a clear (not only a wolf) on day 1
    first_night_heal_rate: float = 0.7  # the witch heals the first night's victim
    heal_rate: float = 0.4  # ... a later night's victim
    unsure_vote_rate: float = 1.0  # a villager without a real suspect still votes its top guess
    unsure_shot_rate: float = 0.0  # a hunter without a real suspect still shoots its top guess
    unsure_talk_rate: float = 1.0  # a villager without a real suspect still names its top guess
    vague_weight: float = 0.3  # suspicion per line that names nobody
    abstain_weight: float = 0.3  # suspicion per abstention in a day vote


class ScriptedPlayer:
    """One seat's heuristic agent (see the module docstring)."""

    def __init__(self, seed: int | str, style: Style | None = None) -> None:
        self.seed = seed
        self.style = style or Style()
        self._count = 0

    def act(self, view: PlayerView, decision: Decision) -> Reply:
        rng = random.Random(f"werewolves/scripted/{self.seed}/{self._count}")
        self._count += 1
        talk = read_talk(view.events)
        if view.role is Role.WEREWOLF:
            action = _wolf_action(view, decision, talk, rng, self.style)
        else:
            action = _village_action(view, decision, talk, rng, self.style)
        text = action.text if action.kind is ActionKind.SAY else f"ACTION: {action.kind} {action.target or ''}".strip()
        return Reply(text, action)


# ---- village --------------------------------------------------------------------------------
def suspicion(view: PlayerView, talk: Talk, rng: random.Random, style: Style) -> dict[int, float]:
    """How wolfish each living other player looks to this (village) player; ties jittered."""
    scores = {p: rng.random() * 0.5 for p in view.alive if p != view.player}
    for p, role in view.known.items():
        if p in scores:
            scores[p] += 100.0 if role is Role.WEREWOLF else -100.0
    for event in view.events:
        if event.kind == "heal" and event.target is not None:
            _bump(scores, event.target, -100.0)  # the witch saved them from the wolves: not a wolf
    weights = _claim_weights(view, talk)
    for c, weight in weights.items():
        if weight < 0:
            _bump(scores, c, -weight)  # a claim this player sees through: the claimant is a wolf
    for speaker, subject in talk.accusations:
        _bump(scores, subject, max(weights.get(speaker, 1.0), 0.0))
    for speaker, subject in talk.clears:
        _bump(scores, subject, -max(weights.get(speaker, 0.5), 0.0))
    for _, subject in talk.suspicions:
        _bump(scores, subject, 0.5)
    for speaker in talk.silences:
        _bump(scores, speaker, 1.0)
    for speaker in talk.vague:
        _bump(scores, speaker, style.vague_weight)
    for voter in talk.abstentions:
        _bump(scores, voter, style.abstain_weight)
    return scores


def _claim_weights(view: PlayerView, talk: Talk) -> dict[int, float]:
    """How much each seer claimant's word counts; negative = a liar worth that much suspicion.

    The real seer knows every other claimant lies. Others trust a lone claim, and otherwise a
    claimant the wolves killed at night or attacked tonight (wolves never attack wolves)."""
    claimants = [c for c in talk.seer_claims if c != view.player]
    if view.role is Role.SEER:
        return {c: -50.0 for c in claimants}
    if len(claimants) == 1:
        return {claimants[0]: 10.0}
    attacked = {e.target for e in view.events if e.kind == "died"} | {view.victim}
    proven = [c for c in claimants if c in attacked]
    if proven:
        return {c: 10.0 if c in proven else -15.0 for c in claimants}
    return {c: 3.0 for c in claimants}


def _village_action(view: PlayerView, decision: Decision, talk: Talk, rng: random.Random, style: Style) -> Action:
    scores = suspicion(view, talk, rng, style)
    top = max(scores, key=lambda p: scores[p])
    sure = scores[top] >= 0.6
    if decision.phase in (Phase.DAY_TALK, Phase.LAST_WORDS):
        named = sure or rng.random() < style.unsure_talk_rate
        return Action(ActionKind.SAY, text=_village_line(view, decision, top, named, rng, style))
    if decision.phase is Phase.SEER:
        unchecked = [p for p in decision.targets if p not in view.known] or list(decision.targets)
        return Action(ActionKind.CHECK, target=max(unchecked, key=lambda p: scores.get(p, 0.0)))
    if decision.phase is Phase.WITCH:
        return _witch_action(view, decision, talk, scores, rng, style)
    if decision.phase is Phase.HUNTER:
        shoot = sure or rng.random() < style.unsure_shot_rate
        return Action(ActionKind.SHOOT, target=top) if shoot else Action(ActionKind.PASS)
    vote = sure or rng.random() < style.unsure_vote_rate
    return Action(ActionKind.VOTE, target=top) if vote else Action(ActionKind.PASS)


def _village_line(
    view: PlayerView, decision: Decision, top: int, names_top: bool, rng: random.Random, style: Style
) -> str:
    if view.role is Role.SEER:
        wolves = [p for p, r in view.known.items() if r is Role.WEREWOLF and p in view.alive]
        clears = [p for p, r in view.known.items() if r is not Role.WEREWOLF and p != view.player]
        reveal = wolves or decision.phase is Phase.LAST_WORDS or view.round > 1 or rng.random() < style.seer_reveal_rate
        if reveal and (wolves or clears):
            parts = [f"Player {p} is a werewolf." for p in wolves] + [f"Player {p} is good." for p in clears[-2:]]
            return "I am the seer. " + " ".join(parts)
    return f"I suspect player {top}." if names_top else _NO_INFO


def _witch_action(
    view: PlayerView, decision: Decision, talk: Talk, scores: dict[int, float], rng: random.Random, style: Style
) -> Action:
    if ActionKind.HEAL in decision.kinds and view.victim is not None:
        trusted_seer = talk.seer_claims[:1] == (view.victim,) and len(talk.seer_claims) == 1
        rate = style.first_night_heal_rate if view.round == 1 else style.heal_rate
        if trusted_seer or rng.random() < rate:
            return Action(ActionKind.HEAL)
    if ActionKind.POISON in decision.kinds:
        candidates = [p for p in decision.targets if scores.get(p, 0.0) >= 10.0]
        if candidates:
            return Action(ActionKind.POISON, target=max(candidates, key=lambda p: scores[p]))
    return Action(ActionKind.PASS)


# ---- wolves ---------------------------------------------------------------------------------
def _wolf_action(view: PlayerView, decision: Decision, talk: Talk, rng: random.Random, style: Style) -> Action:
    if decision.phase is Phase.WOLF_CHAT:
        return Action(ActionKind.SAY, text=f"Let's kill player {_pack_victim(view, talk)}.")
    if decision.phase is Phase.WOLF_VOTE:
        proposed = _proposed_victim(view, decision)
        return Action(ActionKind.KILL, target=proposed or _pack_victim(view, talk))
    target = _day_target(view, talk)
    if decision.phase is Phase.DAY_VOTE:
        return Action(ActionKind.VOTE, target=target) if target in decision.targets else Action(ActionKind.PASS)
    return Action(ActionKind.SAY, text=_wolf_line(view, talk, target, rng, style))


def _pack_victim(view: PlayerView, talk: Talk) -> int:
    """Every wolf computes the same victim: a seer claimant, then whoever accused a wolf."""
    prey = [p for p in view.alive if p not in view.pack]
    score = {p: 0.0 for p in prey}
    for c in talk.seer_claims:
        if c in score:
            score[c] += 10.0
    for speaker, subject in talk.accusations:
        if subject in view.pack and speaker in score:
            score[speaker] += 3.0
    return min(prey, key=lambda p: (-score[p], _shared_order(view, p)))


def _proposed_victim(view: PlayerView, decision: Decision) -> int | None:
    for event in reversed(view.events):
        if event.round != view.round or event.kind != "wolf_chat":
            continue
        match = _KILL_PROPOSAL.search(event.text)
        if match and int(match.group(1)) in decision.targets:
            return int(match.group(1))
    return None


def _day_target(view: PlayerView, talk: Talk) -> int:
    """The pack's shared day target: a seer who named a wolf, else the most accused villager."""
    villagers = [p for p in view.alive if p not in view.pack]
    score = {p: 0.0 for p in villagers}
    for speaker, subject in talk.accusations:
        if speaker in score and subject in view.pack and speaker in talk.seer_claims:
            score[speaker] += 20.0
        elif subject in score:
            score[subject] += 2.0
    for _, subject in talk.suspicions:
        if subject in score:
            score[subject] += 1.0
    return min(villagers, key=lambda p: (-score[p], _shared_order(view, p)))


def _wolf_line(view: PlayerView, talk: Talk, target: int, rng: random.Random, style: Style) -> str:
    is_bluffer = view.player == min(p for p in view.pack if p in view.alive or p == view.player)
    real_seer_named_a_wolf = any(s in talk.seer_claims and sub in view.pack for s, sub in talk.accusations)
    if is_bluffer and view.player not in talk.seer_claims:
        if real_seer_named_a_wolf or (view.round == 1 and not talk.seer_claims and rng.random() < style.bluff_rate):
            return f"I am the seer. Player {target} is a werewolf."
    if view.player in talk.seer_claims:
        return f"I am the seer. Player {target} is a werewolf."
    return f"I suspect player {target}."


def _shared_order(view: PlayerView, player: int) -> int:
    """A tie-break every wolf agrees on, varying with the round."""
    return (player * 7 + view.round * 3) % 10


def _bump(scores: dict[int, float], player: int, amount: float) -> None:
    if player in scores:
        scores[player] += amount
