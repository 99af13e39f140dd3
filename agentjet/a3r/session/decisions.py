"""What a campaign session writes to decisions.md: the setup it starts with, the best trial, the summary.

Pure functions over the plan and the study's trials; `CampaignRepo.add_decision` commits them.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence

from optuna.trial import FrozenTrial, TrialState

from agentjet.a3r.plan.campaign_plan import CampaignPlan
from agentjet.a3r.trial.records import KIND, describe_params

__all__ = ["best_search", "finish_summary", "start_text"]


def start_text(plan: CampaignPlan, *, storage: str, budget: int | None) -> str:
    """The campaign's setup, for the `campaign started` entry."""
    clock = plan.budget.wall_clock or "none"
    return (
        f"- sampler {plan.sampler.name} (seed {plan.sampler_seed}), pruner {plan.pruner.name}, "
        f"objective {plan.objective.direction} {plan.objective.metric}\n"
        f"- storage {storage}, pool {plan.pool.to_plan_value()}, model {plan.model}\n"
        f"- budget: {budget if budget is not None else 'no'} trials, wall clock {clock}, "
        f"{plan.budget.steps_per_trial} steps per trial\n"
        f"- confirmation: {plan.seeds.confirm} re-runs of the best params with fresh seeds"
    )


def best_search(trials: Sequence[FrozenTrial], direction: str) -> FrozenTrial | None:
    """The best COMPLETE search trial (confirm and baseline runs never compete)."""
    done = [
        t for t in trials
        if t.state is TrialState.COMPLETE and t.user_attrs.get(KIND, "search") == "search" and t.value is not None
    ]  # fmt: skip
    if not done:
        return None
    pick = max if direction == "maximize" else min
    return pick(done, key=lambda t: float(t.value if t.value is not None else math.nan))


def finish_summary(trials: Sequence[FrozenTrial], direction: str) -> str:
    """Trials per state, the best search trial, and the confirmation and baseline runs' mean ± sd."""
    states: dict[str, int] = {}
    for t in trials:
        states[t.state.name] = states.get(t.state.name, 0) + 1
    lines = [f"- trials: {', '.join(f'{k} {v}' for k, v in sorted(states.items()))}"]
    best = best_search(trials, direction)
    if best is None or best.value is None:
        return "\n".join(lines)
    lines.append(f"- best search trial {best.number}: {best.value:.4f} with {describe_params(best.params)}")
    for kind, label in (("confirm", "confirmation re-runs"), ("baseline", "base config runs")):
        values = [t.value for t in trials if t.user_attrs.get(KIND) == kind and t.value is not None]
        if values:
            spread = f" ± {statistics.stdev(values):.4f} (sd)" if len(values) > 1 else ""
            lines.append(f"- {label} ({len(values)} fresh seeds): {statistics.fmean(values):.4f}{spread}")
    return "\n".join(lines)
