"""Is the best configuration a finding? Its confirmation re-runs against the baseline, with intervals.

The best search trial is a *finding* only when the 95% interval of its re-runs (fresh seeds,
`kind: confirm`) lies on the better side of the baseline:
- the plan's base config run on the same seeds (`kind: baseline`, paired with the re-runs by
  `confirm_index`): a paired t interval of the per-seed differences must exclude 0;
- base-config runs that do not pair up: Welch's interval of the difference must exclude 0;
- no base-config runs: the other completed search trials are the baseline, with Welch's interval.
Fewer than two re-runs, or an interval that overlaps, is "not confirmed" with the reason; no
completed search trial is "no result". Pure: rows in, a `Confirmation` out.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from agentjet.a3r.analysis.stats import Interval, difference_interval, mean_interval
from agentjet.a3r.trial.trial_row import TrialRow

__all__ = ["Confirmation", "Verdict", "confirm_best"]

Verdict = Literal["finding", "not confirmed", "no result"]


@dataclass(frozen=True)
class Confirmation:
    """The best search trial's re-runs against the baseline, and the verdict."""

    verdict: Verdict
    reason: str
    best_number: int | None = None
    runs: tuple[float, ...] = ()
    confirmed: Interval | None = None  # the re-runs' mean with its interval
    baseline_label: str = ""
    baseline: Interval | None = None
    difference: Interval | None = None  # re-runs minus baseline (paired or Welch), when it has an interval
    baseline_runs: tuple[float, ...] = ()  # the base config's runs, when the campaign made them


def confirm_best(rows: Sequence[TrialRow], best: TrialRow | None, *, maximize: bool) -> Confirmation:
    """The verdict on `best` (see the module docstring)."""
    if best is None:
        return Confirmation("no result", "no search trial completed, so there is no best configuration")
    confirms = _runs_for(rows, "confirm", best.number)
    if not confirms:
        stale = sorted({r.confirm_of for r in rows if r.kind == "confirm" and r.counted and r.confirm_of is not None})
        why = f"the re-runs confirm trial {', '.join(map(str, stale))}, which is no longer the best" if stale else (
            "no confirmation re-run of the best finished")  # fmt: skip
        return Confirmation("not confirmed", why, best.number)
    runs = [float(r.value or 0.0) for r in confirms]
    bases = _runs_for(rows, "baseline", best.number)
    if bases:
        label, reference = "the base config", [float(r.value or 0.0) for r in bases]
    else:
        others = [r for r in rows if r.kind == "search" and r.counted and r.number != best.number]
        label, reference = "the other search trials", [float(r.value or 0.0) for r in others]
    out = Confirmation(
        "not confirmed", "", best.number, tuple(runs), mean_interval(runs), label,
        mean_interval(reference) if reference else None, None, tuple(v for v in reference if bases),
    )  # fmt: skip
    if not reference:
        return _verdict(out, "there is nothing to compare the re-runs with (no baseline run, no other search trial)")
    if len(runs) < 2:
        return _verdict(out, f"one re-run gives no interval (set seeds.confirm >= 2); it scored {runs[0]:.4g}")
    return _judge(out, _paired(confirms, bases), reference, maximize=maximize)


def _judge(
    out: Confirmation, pairs: list[tuple[float, float]], reference: list[float], *, maximize: bool
) -> Confirmation:
    side = "above" if maximize else "below"
    assert out.confirmed is not None and out.baseline is not None
    if len(pairs) >= 2:
        paired = mean_interval([c - b for c, b in pairs])
        diff: Interval | None = paired
        what = f"re-runs minus {out.baseline_label} on the same seeds, {len(pairs)} pairs: {paired.describe()}"
    elif len(reference) >= 2:
        welch = difference_interval(list(out.runs), reference)
        diff = welch
        what = f"re-runs minus {out.baseline_label}: {welch.describe()}"
    else:
        diff = None
        what = f"re-runs {out.confirmed.describe()} against {out.baseline_label} {out.baseline.mean:.4g}"
    if diff is not None:
        clears = diff.above(0) if maximize else diff.below(0)
    else:
        clears = out.confirmed.above(out.baseline.mean) if maximize else out.confirmed.below(out.baseline.mean)
    if clears:
        return _verdict(out, f"the 95% interval lies {side} {out.baseline_label} ({what})", diff, "finding")
    return _verdict(out, f"the 95% interval does not lie {side} {out.baseline_label} ({what})", diff)


def _runs_for(rows: Sequence[TrialRow], kind: str, best: int) -> list[TrialRow]:
    return [r for r in rows if r.kind == kind and r.counted and r.confirm_of in (None, best)]


def _paired(confirms: Sequence[TrialRow], bases: Sequence[TrialRow]) -> list[tuple[float, float]]:
    """(re-run, base-config run) values that share a confirm_index (so a seed), first of each index."""
    by_index = {r.confirm_index: float(r.value or 0.0) for r in reversed(bases) if r.confirm_index is not None}
    pairs = {}
    for r in confirms:
        if r.confirm_index in by_index and r.confirm_index not in pairs:
            pairs[r.confirm_index] = (float(r.value or 0.0), by_index[r.confirm_index])
    return list(pairs.values())


def _verdict(
    out: Confirmation, reason: str, diff: Interval | None = None, verdict: Verdict = "not confirmed"
) -> Confirmation:
    return Confirmation(
        verdict, reason, out.best_number, out.runs, out.confirmed, out.baseline_label, out.baseline, diff,
        out.baseline_runs,
    )  # fmt: skip
