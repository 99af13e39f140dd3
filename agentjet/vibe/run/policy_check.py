"""A vibe run launches one server, so it trains one shared policy for now: the refusal for a spec asking for more.

Checked twice: right after planning (the run is refused before anything is written or trained), and
again at the launch (a resumed run or an edited task.yaml), so a shared policy is never trained silently
in place of separate ones.
"""

from __future__ import annotations

from agentjet.vibe.errors import LaunchRefused
from agentjet.vibe.plan.families import VILLAGE_ROLES
from agentjet.vibe.plan.spec import TaskSpec

__all__ = ["require_one_policy", "separate_policies_refusal"]


def separate_policies_refusal(spec: TaskSpec) -> str | None:
    """The one-sentence refusal for a spec with several policies, None when it shares one."""
    if spec.shares_one_policy:
        return None
    groups = "; ".join(f"{p.name}: {', '.join(p.roles) or 'all'}" for p in spec.policies)
    roles = {r for p in spec.policies for r in p.roles}
    both_sides = "werewolf" in roles and bool(roles & set(VILLAGE_ROLES))
    how = (
        'name one side to train instead, such as "train the wolves" or "train the village side"'
        if both_sides
        else 'say "one shared model" instead of separate ones (or drop "separate models")'
    )
    return (
        f"this run needs one shared policy for now (vibe launches one server), but the plan asks for "
        f"{len(spec.policies)} separate policies ({groups}): {how}"
    )


def require_one_policy(spec: TaskSpec) -> None:
    """Raise `LaunchRefused` with that sentence when the spec asks for separate policies."""
    refusal = separate_policies_refusal(spec)
    if refusal is not None:
        raise LaunchRefused(refusal)
