"""The werewolves part of a deterministic plan: trained roles, the policies that play them, talk and round cap.

One shared policy plays one side (the family rewards a server with one side's result), so roles of both sides
are trained together only with separate policies, one per side or per role, or one per group of roles the
sentence puts on a model ("the seer and the witch share a model, the wolves get another one"): `read_groups` reads
those groups from the role mentions before a phrase that places them on a model, after "one (model) for", or in
a list after "N models:"; two groups or more say how to split. Every choice the sentence did not state is written
as an assumption that is true to the sentence.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from agentjet.vibe.errors import PlanRefused
from agentjet.vibe.plan.families import ALIAS_NOTES, DEALS, DEALT, LINEUP, PLAYERS, VILLAGE_ROLES, WEREWOLF_ROLES
from agentjet.vibe.plan.sentence import Reading
from agentjet.vibe.plan.spec import SHARED_POLICY, Policy
from agentjet.vibe.plan.werewolves.groups import REST, read_groups
from agentjet.vibe.plan.werewolves.penalty_cues import penalty_params
from agentjet.vibe.plan.werewolves.roles import RoleReading

__all__ = ["RECIPE_PARAMS", "WerewolvesPlan", "plan_werewolves", "policies_from_params"]

_WOLVES, _VILLAGE = "wolves", "village"
_VILLAGERS = (  # said once the policies are known: groups that split the village meant the plain villagers
    "'villagers' read as the village side (villager, seer, witch, hunter); say 'the plain villagers' for the three "
    "villagers alone"
)


@dataclass(frozen=True)
class WerewolvesPlan:
    params: dict[str, Any]
    roles: list[str]  # trained roles, in the deal's order
    policies: list[Policy]
    name: str


def _side(roles: Sequence[str]) -> str:
    return _WOLVES if tuple(roles) == ("werewolf",) else _VILLAGE


def _describe(side: str) -> str:
    return "the three werewolves" if side == _WOLVES else "the village side (villager, seer, witch, hunter)"


def _chosen(roles: RoleReading, assumptions: list[str], text: str) -> dict[str, set[str]]:
    """Trained roles by side, sides in the order named; opponents only, then the other side; both sides asked."""
    chosen: dict[str, set[str]] = {}
    for mention in roles.trained:
        chosen.setdefault(_side(mention.roles), set()).update(mention.roles)
        if mention.word in ALIAS_NOTES:
            assumptions.append(ALIAS_NOTES[mention.word])
    if roles.both_named:  # "the seer vs the wolves, both should learn": the opponents named train too, as named
        for mention in roles.opponents:
            chosen.setdefault(_side(mention.roles), set()).update(mention.roles)
    opposed = list(dict.fromkeys(_side(m.roles) for m in roles.opponents))
    if not chosen and len(opposed) == 1 and not roles.both_sides:  # "both sides" fills every side below
        other = _VILLAGE if opposed[0] == _WOLVES else _WOLVES
        words = ", ".join(dict.fromkeys(f"'{m.word}'" for m in roles.opponents))
        against = re.search(r"\b(?:against|vs|versus|beat|defeat)\b", text)  # "against scripted villagers"
        scripted = all(m.scripted for m in roles.opponents) and not against
        how = "called scripted" if scripted else "named as the opponents"
        assumptions.append(f"{words} {how} and no role to train: the policy plays the other side, {_describe(other)}")
        chosen[other] = set(WEREWOLF_ROLES[:1]) if other == _WOLVES else set(VILLAGE_ROLES)
    every_side = roles.both_sides or roles.separate and roles.grouping == "side"  # "a model per side"
    every_side = every_side or (  # "separate models" alone: a model a side ("a model per role": every role, below)
        roles.separate and not roles.mentions and not roles.apart and roles.grouping != "role"
    )
    every_side = every_side or (  # "every role gets its own model, except the hunter": all the rest, a model each
        roles.separate and roles.grouping == "role" and not roles.split_within_side and not chosen
        and bool(roles.left_out) and not roles.opponents
    )  # fmt: skip
    # separate models for a match train the opponents too, unless the split is within one side ("each villager role",
    # "train the village against the wolves, a separate model for the seer")
    with_opponents = roles.separate and not roles.split_within_side and not roles.apart
    rivals = list(dict.fromkeys(_side(m.roles) for m in roles.opponents if not m.scripted))  # not "wolves scripted"
    for side in (_WOLVES, _VILLAGE) if every_side else rivals if with_opponents else ():
        if side not in chosen or roles.both_sides:  # "both sides": every role of each
            chosen[side] = {"werewolf"} if side == _WOLVES else set(VILLAGE_ROLES)
    chosen = _leave_out(chosen, roles, assumptions) if roles.left_out else chosen
    return _without_scripted(chosen, roles, assumptions)


def _without_scripted(chosen: dict[str, set[str]], roles: RoleReading, assumptions: list[str]) -> dict[str, set[str]]:
    """`chosen` less single roles called scripted in a side that trains (a scripted side is the opponent, above)."""
    scripted = roles.scripted_roles
    kept = {side: found - scripted for side, found in chosen.items() if found - scripted}  # "wolves scripted; the rest"
    dropped = sorted(set().union(*chosen.values()) & scripted, key=WEREWOLF_ROLES.index) if chosen else []
    if not dropped or not kept:
        return chosen
    trained = ", ".join(r for r in WEREWOLF_ROLES if any(r in found for found in kept.values()))
    assumptions.append(f"{', '.join(dropped)} scripted, as asked: {trained} train")
    return kept


def _leave_out(chosen: dict[str, set[str]], roles: RoleReading, assumptions: list[str]) -> dict[str, set[str]]:
    """`chosen` less the roles the sentence leaves out; with nothing else named, the rest of the left-out roles'
    side ("everyone except the seer": villager, witch, hunter), or the other side ("but not the wolves")."""
    out = roles.left_out_roles
    words = ", ".join(dict.fromkeys(f"'{m.word}'" for m in roles.left_out))
    kept = {side: found - out for side, found in chosen.items() if found - out}
    if not kept:
        side = _side(roles.left_out[0].roles)
        rest = ({"werewolf"} if side == _WOLVES else set(VILLAGE_ROLES)) - out
        if not rest:
            side = _VILLAGE if side == _WOLVES else _WOLVES
            rest = ({"werewolf"} if side == _WOLVES else set(VILLAGE_ROLES)) - out
        kept = {side: rest}
    if kept:
        trained = ", ".join(r for r in WEREWOLF_ROLES if any(r in found for found in kept.values()))
        sides_apart = len(kept) == 1 or _separate(roles)  # else `_policies` keeps one side and says so
        verb = "train" if "," in trained else "trains"
        assumptions.append(f"{words} left out, as asked" + (f": {trained} {verb}" if sides_apart else ""))
    return kept


def _grouped(roles: RoleReading, groups: list[tuple[str, ...]], assumptions: list[str]) -> list[Policy]:
    """One policy per group the sentence puts on a model (`read_groups`), less roles left out or called scripted; a
    group that names a whole side keeps what the smaller groups did not take ("the rest of the village shares one"),
    and trained roles no group took share one policy per side. Empty when fewer than two groups remain."""
    allowed = {r for m in roles.trained for r in m.roles} - roles.left_out_roles - roles.scripted_roles
    taken: set[str] = set()
    kept: dict[int, list[str]] = {}
    for index in sorted(range(len(groups)), key=lambda i: len(groups[i])):
        kept[index] = [r for r in WEREWOLF_ROLES if r in groups[index] and r in allowed and r not in taken]
        taken.update(kept[index])
    found = [kept[i] for i in range(len(groups)) if kept[i]]
    rest = [r for r in WEREWOLF_ROLES if r in allowed - taken]
    if len(found) + (REST in groups and bool(rest)) < 2:  # "give the seer its own model, the others share one"
        return []
    found += [side for side in (["werewolf"], [r for r in rest if r in VILLAGE_ROLES]) if side and set(side) <= {*rest}]
    for group in [g for g in found if "werewolf" in g and len(g) > 1]:  # "the witch and the wolves on one model"
        found.remove(group)
        found += [["werewolf"], group[1:]]  # the deal's order puts the werewolf first
        assumptions.append(
            f"{', '.join(group)} were put on one model, but a policy plays one side (its reward is that side's "
            "result): the wolves get a policy of their own"
        )
    found.sort(key=lambda group: WEREWOLF_ROLES.index(group[0]))
    several = sum(len(g) > 1 and g[0] != "werewolf" for g in found) > 1  # two village groups: name them by roles
    policies = [Policy(name=_group_name(g, several), roles=g) for g in found]
    split = "; ".join(f"{p.name}: {', '.join(p.roles)}" for p in policies)
    assumptions.append(f"{len(policies)} separate policies, grouped as the sentence says: {split}{_seats(policies)}")
    return policies


def _group_name(roles: list[str], several_village_groups: bool) -> str:
    if roles == ["werewolf"]:
        return _WOLVES
    if len(roles) == 1:
        return roles[0]
    return "-".join(roles) if several_village_groups else _VILLAGE


def _separate(roles: RoleReading) -> bool:
    """Whether the roles of two sides, when both train, get a policy each: asked for, or both sides asked to train
    ("train the wolves and the seer") and no one shared model said."""
    return roles.separate or ((roles.both_sides or roles.both_named or roles.asked_to_train) and not roles.shared)


def _policies(chosen: dict[str, set[str]], roles: RoleReading, assumptions: list[str]) -> list[Policy]:
    """One shared policy for one side; separate ones when asked, or when both sides must train."""
    ordered = {side: [r for r in WEREWOLF_ROLES if r in found] for side, found in chosen.items()}
    separate = _separate(roles) and (roles.separate or len(ordered) > 1)
    if len(ordered) > 1 and not separate:
        first, *others = ordered
        for side in others:
            named = "one model for both sides was asked for" if roles.shared else f"the {side} side is named too"
            assumptions.append(
                f"{named}, but one shared policy plays one side (its reward is that side's result), so only the "
                f"{first} side trains ({', '.join(ordered[first])}; the other side stays scripted); say "
                "'separate models' to give each side its own policy"
            )
        return [Policy(name=SHARED_POLICY, roles=ordered[first])]
    if not separate:
        (only,) = ordered.values()
        return [Policy(name=SHARED_POLICY, roles=only)]
    # a grouping only counts with separate models asked for ("as every role" alone is no split per role)
    grouping = (roles.grouping if roles.separate else None) or ("side" if len(ordered) > 1 or roles.apart else "role")
    if grouping == "side":  # one policy a side, less the roles named to have their own ("... for the seer")
        policies = [  # the wolves are one role and a side: `wolves`, as a side policy is named
            Policy(name=_WOLVES if role == "werewolf" else role, roles=[role])
            for found in ordered.values() for role in found if role in roles.apart
        ]
        rest = {side: [r for r in found if r not in roles.apart] for side, found in ordered.items()}
        policies += [Policy(name=side if len(found) > 1 or side == _WOLVES else found[0], roles=found)
                     for side, found in rest.items() if found]  # fmt: skip
    else:
        policies = [Policy(name=_WOLVES if role == "werewolf" else role, roles=[role])
                    for found in ordered.values() for role in found]  # fmt: skip
    policies = sorted(policies, key=lambda p: WEREWOLF_ROLES.index(p.roles[0]))
    if len(policies) == 1:
        pack = " (the three werewolves are one role and share it)" if policies[0].roles == ["werewolf"] else ""
        assumptions.append(
            f"separate models asked for, but only {', '.join(policies[0].roles)} train: one policy, shared with "
            f"nothing else{pack}"
        )
        return [policies[0].model_copy(update={"name": SHARED_POLICY})]
    split = "; ".join(f"{p.name}: {', '.join(p.roles)}" for p in policies)
    why = "as asked (non-shared parameters)" if roles.separate else "since both sides train and a policy plays one side"
    assumptions.append(f"{len(policies)} separate policies, {why}: {split}{_seats(policies)}")
    return policies


def _seats(policies: Sequence[Policy]) -> str:
    """A split per role says that the seats of one role share its model ("the three villagers share one")."""
    alone = [p.roles for p in policies]
    shared = [many for one, many in (("villager", "villagers"), ("werewolf", "werewolves")) if [one] in alone]
    return f" (the three {' and the three '.join(shared)} share one model per role)" if ["villager"] in alone else ""


def _rounds(reading: Reading, assumptions: list[str]) -> dict[str, Any]:
    params: dict[str, Any] = {}
    for cue in reading.cues:
        if cue.kind == "rounds" and cue.value >= 1 and "max_rounds" not in params:
            params["max_rounds"] = cue.value
            assumptions.append(
                f"'{cue.words}' -> max_rounds={cue.value}: a round is a night and a day, and a game with no winner "
                f"after {cue.value} is a draw"
            )
        elif cue.kind == "players" and cue.value != PLAYERS:
            assumptions.append(f"'{cue.words}' is ignored: the game always seats {PLAYERS} players")
    for lineup in LINEUP.finditer(reading.text):  # "with 2 werewolves and 6 villagers": another deal
        if lineup.lastgroup and int(lineup.group(1)) != DEALS[lineup.lastgroup]:
            assumptions.append(f"'{lineup.group(0)}' is ignored: {DEALT}")
    return params


# `bench learn werewolves` with validity weighted over the result (docs/tasks.md): 1/8 -> 6/8 held-out wins in
# 3 steps; the pure win/loss reward drifted to invalid answers in 3 vibe runs of 4 (docs/vibe.md)
RECIPE_PARAMS: dict[str, Any] = {
    "penalty": "per_action",
    "penalty_weight": 3.0,
    "temperature": 0.5,
    "action_max_tokens": 12,
    "memory_events": 4,
}


def plan_werewolves(reading: Reading, assumptions: list[str]) -> WerewolvesPlan:
    """Params, trained roles, policies and name for a werewolves sentence; guesses go to `assumptions`."""
    chosen = _chosen(reading.roles, assumptions, reading.text)
    unknown = ", ".join(f"'{word}'" for word in reading.roles.unknown)
    if unknown:
        assumptions.append(f"{unknown}: no such role here ({DEALT}), so none is played or trained")
    if not chosen and not reading.roles.mentions and reading.roles.separate and reading.roles.grouping == "role":
        chosen = {_WOLVES: {"werewolf"}, _VILLAGE: set(VILLAGE_ROLES)}
        assumptions.append("a model for each role and no role named: every role trains, each on its own model")
    if not chosen:
        chosen = {_WOLVES: {"werewolf"}}
        named = "no other side or role named" if unknown else "no side or role named"
        assumptions.append(f"{named}: the policy plays the three werewolves (the family's default)")
    grouped = _grouped(reading.roles, read_groups(reading.text, reading.roles.mentions), assumptions)
    policies = grouped or _policies(chosen, reading.roles, assumptions)
    roles = [r for r in WEREWOLF_ROLES if any(r in p.roles for p in policies)]
    if not roles:  # every role named is left out ("not the wolves, not the village"): nothing to train
        raise PlanRefused("no role is left to train: say which of werewolf, villager, seer, witch, hunter should learn")
    split_village = grouped and not any(p.roles == list(VILLAGE_ROLES) for p in policies)  # "the villagers and
    others = {r for m in reading.roles.mentions if len(m.roles) == 1 for r in m.roles}  # the hunter share one"
    read_as_side = set(roles) & set(VILLAGE_ROLES[1:]) and not split_village and not set(VILLAGE_ROLES[1:]) <= others
    side_said = any(m.word == "villagers" and len(m.roles) > 1 for m in reading.roles.trained)  # not the plain ones
    if side_said and read_as_side:  # not "villagers, seer, witch..."
        assumptions.append(_VILLAGERS)
    elif grouped and side_said:  # "..., and the villagers another"
        (plain,) = [p.roles for p in policies if "villager" in p.roles] or [["villager"]]
        if any(r != "villager" and r not in others for r in plain):
            assumptions.append(f"'villagers' read as the rest of the village side ({', '.join(plain)}); say 'the "
                               "plain villagers' for the three villagers alone")  # fmt: skip
    if "mafia" in reading.text:
        assumptions.append(
            "mafia is played as werewolves (the same social deduction game: mafia = wolves, town = village)"
        )
    village = any(r in VILLAGE_ROLES for r in roles)
    discussion = reading.discussion if reading.discussion is not None else village or reading.talk_cue is not None
    if reading.discussion is None and reading.talk_cue is not None:
        assumptions.append(
            f"discussion on: what '{reading.talk_cue}' asks for happens in the day's talk, which only the discussion "
            "variant has (longer games: each player also speaks each day); say 'without discussion' to drop talk"
        )
    elif reading.discussion is None and village:
        assumptions.append(
            "discussion on (the default when a village role trains): without talk the seer's findings reach no one "
            "and the wolves win nearly every game, so the village's reward would be flat; say 'without discussion' "
            "to drop talk"
        )
    elif reading.discussion is False and village:
        assumptions.append(
            "discussion off, as asked: without talk the seer's findings reach no one and the wolves win nearly every "
            "game, so the village's reward may stay flat"
        )
    elif reading.discussion is None:
        assumptions.append(
            "discussion off (the default): players only kill, check, heal and vote, about 30 short calls a game, "
            "so a CPU machine plays enough games to learn; say 'with discussion' to add talk"
        )
    assumptions.append(
        "the recipe `bench learn werewolves` measured to learn on the embedded model (1/8 -> 6/8 held-out wins "
        "in 3 updates): win/loss minus 3 x the share of invalid answers (scaled by 1/3 into [-1, 1]), sampling at "
        "temperature 0.5, 12-token answers, the last 4 events in each prompt, GRPO groups of 8 games on one deal "
        "an update (the first update comes after 8 games; 2 deals: --train collect.tasks=2), LoRA on every "
        "projection of the top half of the layers at lr 4e-4 (it learned in all 8 runs measured, 4 in fp32 and 4 "
        "in bf16; on every layer at lr 2e-4 the update takes half as long again: --train lora.layers=null "
        "--train optim.lr=2e-4)"
    )
    params: dict[str, Any] = {"trained_roles": roles, "discussion": discussion, **RECIPE_PARAMS}
    params |= _rounds(reading, assumptions) | penalty_params(reading.text, assumptions)
    if len(policies) > 1:
        params["servers"] = {role: p.name for p in policies for role in p.roles}
    return WerewolvesPlan(params, roles, policies, f"werewolves-{_label(policies)}")


def _label(policies: Sequence[Policy]) -> str:
    def one(roles: Sequence[str]) -> str:
        return (
            "wolves"
            if list(roles) == ["werewolf"]
            else "village"
            if list(roles) == list(VILLAGE_ROLES)
            else "-".join(roles)
        )

    return "-vs-".join(one(p.roles) for p in policies) if len(policies) > 1 else one(policies[0].roles)


def policies_from_params(params: dict[str, Any]) -> list[Policy]:
    """The policies a werewolves family's params train: `servers` groups roles, else one shared policy."""
    servers = params.get("servers")
    if isinstance(servers, dict) and servers:
        names = list(dict.fromkeys(str(s) for s in servers.values()))
        return [Policy(name=n, roles=[r for r in WEREWOLF_ROLES if servers.get(r) == n]) for n in names]
    roles = params.get("trained_roles") or ["werewolf"]
    return [Policy(name=SHARED_POLICY, roles=[r for r in WEREWOLF_ROLES if r in roles])]
