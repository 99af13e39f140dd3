"""The report's answer to "did the agent get better?": before -> after on the held-out split, the interval, the verdict.

Reads the `outcome` dict the launch step recorded (`agentjet.vibe.run.outcome.Outcome.to_dict`): plain
JSON, so a report can be written again from a checkpoint. `outcome_fields` are run.json's keys,
`outcome_section` the report.md section, `held_out_points` the curve's points. A run whose policies
trained apart also has `policy_outcomes` (name -> outcome): each policy gets its own line and table.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["held_out_points", "outcome_fields", "outcome_line", "outcome_section"]


def _share(point: object) -> str:
    if not isinstance(point, Mapping):
        return "not measured"
    return f"{point.get('successes')}/{point.get('episodes')} ({float(point.get('rate') or 0.0):.1%})"


def _points(value: object) -> str:
    return f"{float(value) * 100:+.1f}" if isinstance(value, int | float) else "-"


def outcome_line(outcome: Mapping[str, Any] | None) -> str:
    """`win rate 3/16 (18.8%) -> 14/16 (87.5%), +68.8 points (95% CI +40.2 to +84.9): improved`."""
    if not outcome:
        return "not measured (training did not reach a held-out evaluation)"
    rate, verdict = outcome.get("rate", "success rate"), outcome.get("verdict", "not measured")
    before, after, ci = outcome.get("before"), outcome.get("after"), outcome.get("ci95")
    if not isinstance(before, Mapping) or not isinstance(after, Mapping) or not isinstance(ci, list):
        return f"{rate}: {verdict} (before: {_share(before)}, after: {_share(after)})"
    change = outcome.get("change")
    return (
        f"{rate} {_share(before)} -> {_share(after)}, {_points(change)} points "
        f"(95% CI {_points(ci[0])} to {_points(ci[1])}): {verdict}"
    )


def outcome_fields(
    outcome: Mapping[str, Any] | None, policy_outcomes: Mapping[str, Mapping[str, Any]] | None = None
) -> dict[str, Any]:
    """run.json's outcome keys: the rates before and after, the change, its interval and the verdict (the
    first policy's when they trained apart; then `policy_outcomes` holds each one's, and `outcome_line` all)."""
    outcome = outcome or {}
    fields = _fields(outcome)
    if policy_outcomes:
        each = {name: _fields(o) for name, o in policy_outcomes.items()}
        fields["policy_outcomes"] = each
        fields["outcome_line"] = "; ".join(f"{name}: {f['outcome_line']}" for name, f in each.items())
    return fields


def _fields(outcome: Mapping[str, Any]) -> dict[str, Any]:
    def rate(which: str) -> float | None:
        point = outcome.get(which)
        return float(point["rate"]) if isinstance(point, Mapping) and "rate" in point else None

    return {
        "verdict": outcome.get("verdict"),
        "before": rate("before"),
        "after": rate("after"),
        "change": outcome.get("change"),
        "change_ci95": outcome.get("ci95"),
        "outcome_line": outcome_line(outcome or None),
        "outcome": dict(outcome) or None,
    }


def held_out_points(outcome: Mapping[str, Any] | None) -> list[Mapping[str, Any]]:
    """The curve's points (step, rate, ci95), oldest step first."""
    curve = (outcome or {}).get("curve") or []
    return [p for p in curve if isinstance(p, Mapping) and isinstance(p.get("step"), int)]


def outcome_section(
    outcome: Mapping[str, Any] | None,
    spec: Mapping[str, Any] | None,
    policy_outcomes: Mapping[str, Mapping[str, Any]] | None = None,
) -> list[str]:
    """`## Did the agent get better?`: the verdict in words, the points table (one of each per policy when
    they trained apart), and how it was measured."""
    lines = ["## Did the agent get better?", ""]
    if not outcome:
        return lines + ["Not measured: the run ended before a held-out evaluation.", ""]
    if not policy_outcomes:
        return lines + _verdict(outcome) + _how(outcome, spec)
    roles = {p.get("name"): p.get("roles") or [] for p in (spec or {}).get("policies") or [] if isinstance(p, Mapping)}
    lines += ["Each policy trained on its own server; each is measured on its own side of the same held-out games.", ""]
    for name, each in policy_outcomes.items():
        lines += [f"### Policy `{name}` ({', '.join(roles.get(name) or []) or 'its roles'})", ""]
        lines += _verdict(each)
    return lines + _how(outcome, spec)


def _verdict(outcome: Mapping[str, Any]) -> list[str]:
    lines = [f"**{outcome_line(outcome)}**", ""]
    points = held_out_points(outcome)
    if points:
        lines += ["| policy (step) | successes | " + str(outcome.get("rate", "rate")) + " | 95% CI | mean reward |"]
        lines += ["|---|---|---|---|---|"]
        lines += [_row(p, outcome) for p in points]
        lines.append("")
    unusable = outcome.get("unusable_episodes") or 0
    if unusable:
        lines += [f"{unusable} eval episode(s) were not counted (aborted, or played across an update).", ""]
    return lines


def _how(outcome: Mapping[str, Any], spec: Mapping[str, Any] | None) -> list[str]:
    metric = (spec or {}).get("success_metric") or {}
    return [
        f"Held-out items: the eval split (never trained on), the same items in every round, each round played by one "
        f"set of weights (the base's on the base weights, sampled beside training; the others with the policy held "
        f"still) and greedily where the task has a temperature. A success is "
        f"an episode the task reports as won, or, where it reports none, one whose reward is at least "
        f"{outcome.get('success_reward')} ({metric.get('description', 'the task')}). The interval is Newcombe's "
        'hybrid score interval of after - before at 95%: "improved" and "worse" '
        f"only when it excludes no change.",
        "",
    ]


def _step_of(point: object) -> object:
    return point.get("step") if isinstance(point, Mapping) else None


def _row(point: Mapping[str, Any], outcome: Mapping[str, Any]) -> str:
    step = point.get("step")
    label = (
        "base"
        if step == _step_of(outcome.get("before"))
        else "final"
        if step == _step_of(outcome.get("after"))
        else "during training"
    )
    ci = point.get("ci95") or [None, None]
    interval = f"{float(ci[0]):.1%} - {float(ci[1]):.1%}" if None not in ci else "-"
    reward = point.get("reward_mean")
    mean = f"{reward:.3f}" if isinstance(reward, int | float) else "-"
    return (
        f"| {label} (step {step}) | {point.get('successes')}/{point.get('episodes')} | "
        f"{float(point.get('rate') or 0.0):.1%} | {interval} | {mean} |"
    )
