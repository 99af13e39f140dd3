"""Which searched params mattered: Optuna's importance over a campaign's completed search trials.

The evaluator is Optuna's default, PED-ANOVA (it needs no scikit-learn, which fANOVA does): how
differently a param is distributed among the top trials than among all trials. Its top share is
raised on small studies (at least two trials in it), params the trials never varied get 0 and
are named in the note, and fewer than `MIN_TRIALS` trials give no estimate at all, said plainly.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import optuna
from optuna.importance import PedAnovaImportanceEvaluator, get_param_importances
from optuna.trial import create_trial

from agentjet.a3r.plan.campaign_plan import CampaignPlan, search_space_distributions

__all__ = ["MIN_TRIALS", "param_importance"]

MIN_TRIALS = 4  # below this many completed search trials importance is not estimated
Point = tuple[Mapping[str, Any], float]  # (params, objective value) of one completed search trial


def param_importance(plan: CampaignPlan, points: Sequence[Point]) -> tuple[dict[str, float], str]:
    """`{param: share}` (summing to 1 over the varied params, largest first) and a note on how it was got."""
    names = list(plan.search_space)
    if not names:
        return {}, "the plan searches no params (a seed study), so there is no importance to estimate"
    if len(points) < MIN_TRIALS:
        return {}, f"not estimated: {len(points)} completed search trial(s), {MIN_TRIALS} needed"
    varied = [n for n in names if len({_key(p.get(n)) for p, _ in points if n in p}) > 1]
    fixed = [n for n in names if n not in varied]
    fixed_note = f"; {', '.join(fixed)} took one value in every trial (importance 0)" if fixed else ""
    if not varied:
        return {n: 0.0 for n in names}, "every trial ran the same params" + fixed_note
    if len({v for _, v in points}) == 1:
        return {n: 0.0 for n in names}, f"every trial scored {points[0][1]:.4g}: no param made a difference"
    study = _study(plan, points, varied)
    n = len(study.trials)
    if n < MIN_TRIALS:
        return {}, f"not estimated: {n} trial(s) set every varied param, {MIN_TRIALS} needed"
    quantile = min(0.5, max(0.1, 2 / n))
    evaluator = PedAnovaImportanceEvaluator(target_quantile=quantile)
    shares = get_param_importances(study, evaluator=evaluator, params=varied)
    out = {name: float(shares.get(name, 0.0)) for name in varied}
    out = dict(sorted(out.items(), key=lambda kv: -kv[1])) | {name: 0.0 for name in fixed}
    how = f"PED-ANOVA over {n} completed search trials (top {quantile:.0%} against all)"
    return out, how + fixed_note


def _study(plan: CampaignPlan, points: Sequence[Point], varied: Sequence[str]) -> optuna.Study:
    """An in-memory study of the points that set every varied param (values outside the plan's
    current distributions, e.g. from an earlier version of the plan, are left out)."""
    distributions = search_space_distributions(plan)
    verbosity = optuna.logging.get_verbosity()
    optuna.logging.set_verbosity(optuna.logging.WARNING)  # no "new study created" line per report
    try:
        study = optuna.create_study(direction=plan.objective.direction)
    finally:
        optuna.logging.set_verbosity(verbosity)
    for params, value in points:
        if not all(name in params for name in varied):
            continue
        chosen = {name: params[name] for name in varied}
        try:
            trial = create_trial(params=chosen, distributions={n: distributions[n] for n in varied}, value=float(value))
        except ValueError:
            continue
        study.add_trial(trial)
    return study


def _key(value: Any) -> str:
    return repr(value)
