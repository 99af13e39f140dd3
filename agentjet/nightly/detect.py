"""Regression detection over the nightly history: which commit made a metric worse, and which slow drift
no single commit shows.

Two detectors, because they catch different failures. `judge` compares each run with the runs just before
it (Mann-Whitney U for noisy `rank` metrics, a plain difference for deterministic `exact` ones) and moves
its baseline past every real change, so one slowdown is reported once, at the commit that caused it.
`steps` runs binary segmentation over the whole series, so a 1.5 %/commit drift that never trips the
per-commit test still shows up as a step. A change must be both significant and at least the metric's
`min_effect` to count, and a metric too noisy to resolve `min_effect` is reported `unstable`, never as a
regression: an alarm nobody can trust is worse than none. Infrastructure failures and runs without samples
get their own status and never enter a baseline.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from graphlib import CycleError, TopologicalSorter
from statistics import fmean, median
from typing import Literal

from scipy.stats import mannwhitneyu

from agentjet.nightly.metrics import Metric, RunRecord

__all__ = [
    "Analysis",
    "Comparison",
    "Status",
    "Step",
    "Verdict",
    "analyse",
    "compare",
    "flagged",
    "judge",
    "noise",
    "steps",
]

Status = Literal["baseline", "ok", "regression", "improvement", "unstable", "infra_failure", "missing"]

_MAD_TO_SIGMA = 1.4826  # MAD of a normal distribution x this = its standard deviation
_HALF_WIDTH = 2.5  # noise x this / sqrt(n): the rough 95 % half-width of a median of n samples (1.25 x 1.96)


@dataclass(frozen=True)
class Comparison:
    """One set of new samples against a baseline. `effect` > 0 is worse (relative for rank metrics,
    absolute for exact ones); `noise` is the relative spread the decision was made under."""

    status: Status
    effect: float | None
    p_value: float | None
    noise: float | None
    reason: str


@dataclass(frozen=True)
class Verdict:
    """What `judge` says about one run of one metric; `baseline` names the commits it was compared with."""

    metric: str
    commit: str
    subject: str
    run_id: int | None
    status: Status
    effect: float | None
    p_value: float | None
    noise: float | None
    baseline: tuple[str, ...]
    reason: str


@dataclass(frozen=True)
class Step:
    """A level shift found by `steps`: `index` is the position in the analysed runs of the first run after it."""

    metric: str
    index: int
    commit: str
    effect: float
    p_value: float | None
    kind: Literal["regression", "improvement"]


@dataclass(frozen=True)
class Analysis:
    """Everything detection knows about one metric: per-run verdicts, drift steps and how noisy it is."""

    metric: Metric
    verdicts: list[Verdict]
    steps: list[Step]
    noise: float | None
    unstable: bool


def noise(samples: Sequence[float]) -> float | None:
    """Robust relative spread, 1.4826 x MAD / |median|: one outlier (a GC pause) barely moves it.
    None below 3 samples or at median 0, where a relative spread means nothing."""
    if len(samples) < 3:
        return None
    center = median(samples)
    if center == 0:
        return None
    mad = median(abs(x - center) for x in samples)
    return _MAD_TO_SIGMA * mad / abs(center)


def _min_p(n_new: int, n_old: int) -> float:
    """The smallest two-sided Mann-Whitney p these sample sizes can give (complete separation)."""
    return min(1.0, 2.0 / math.comb(n_new + n_old, n_new))


def _p_value(new: Sequence[float], old: Sequence[float]) -> float:
    """Two-sided Mann-Whitney U p; 1.0 where scipy has nothing to rank (all values equal) or gives NaN."""
    if len({*new, *old}) <= 1:
        return 1.0
    p = float(mannwhitneyu(list(new), list(old), alternative="two-sided").pvalue)
    return p if math.isfinite(p) else 1.0


def _fmt_effect(metric: Metric, effect: float) -> str:
    return f"{effect:+.1%}" if metric.test == "rank" else f"{effect:+.6g} {metric.unit}".rstrip()


def _changed(metric: Metric, effect: float) -> Literal["regression", "improvement"] | None:
    """Whether `effect` is big enough to matter: rank metrics at >= min_effect, exact ones beyond it."""
    if metric.test == "exact":
        big = abs(effect) > metric.min_effect
    else:
        big = abs(effect) >= metric.min_effect and effect != 0
    if not big:
        return None
    return "regression" if effect > 0 else "improvement"


def compare(metric: Metric, new: Sequence[float], baseline: Sequence[float], *, alpha: float = 0.01) -> Comparison:
    """Judge `new` against `baseline`. Rank metrics: Mann-Whitney U, and a change must be significant at
    `alpha` and at least `min_effect`. Exact metrics: medians differ by more than `min_effect` (pass the
    last baseline run's samples; deterministic values need no test)."""
    if not new or not baseline:
        return Comparison("missing", None, None, None, "no new samples" if not new else "no baseline samples")
    new_median, old_median = median(new), median(baseline)
    effect = metric.badness(new_median, old_median)
    spread = noise(baseline)
    medians = f"median {new_median:.6g} vs {old_median:.6g} {metric.unit}".rstrip()
    change = f"{_fmt_effect(metric, effect)} ({medians})"
    if metric.test == "exact":
        status = _changed(metric, effect) or "ok"
        word = {"regression": "worse", "improvement": "better", "ok": "within"}[status]
        limit = f"min effect {metric.min_effect:g} {metric.unit}".rstrip()
        return Comparison(status, effect, None, spread, f"{change}: {word} {limit} (exact comparison)")
    if spread is None:
        spread = noise(new)  # a baseline of < 3 samples has no spread of its own; the new samples' is the best guess
    p = _p_value(new, baseline)
    half = spread * _HALF_WIDTH / math.sqrt(len(new)) if spread is not None else 0.0
    # too noisy to resolve the min effect: a change is still judged when it clears twice the uncertainty
    # (a 4 ms slowdown doubles a ratio whose noise is 15 %), anything smaller is "unstable", never an alarm
    if spread is not None and half > metric.min_effect and not (p < alpha and abs(effect) >= 2 * half):
        return Comparison(
            "unstable",
            effect,
            p,
            spread,
            f"too noisy to judge: noise {spread:.1%} gives the median of {len(new)} samples a +-{half:.1%} "
            f"uncertainty, above the min effect {metric.min_effect:.1%}; change {change}, p={p:.2g}",
        )
    if _min_p(len(new), len(baseline)) >= alpha:
        return Comparison(
            "ok",
            effect,
            p,
            spread,
            f"too few samples to test: {len(new)} new vs {len(baseline)} baseline cannot reach p < {alpha:g}; "
            f"change {change}",
        )
    status = (_changed(metric, effect) if p < alpha else None) or "ok"
    if status == "ok":
        why = f"not significant (p={p:.2g} >= {alpha:g})" if p >= alpha else f"below min effect {metric.min_effect:.1%}"
        return Comparison("ok", effect, p, spread, f"change {change}: {why}")
    word = "worse" if status == "regression" else "better"
    return Comparison(status, effect, p, spread, f"{change} {word}, p={p:.2g} < {alpha:g}")


def _values(run: RunRecord, metric: Metric) -> list[float]:
    return [float(v) for v in run.samples.get(metric.name) or ()]


def _relevant(metric: Metric, runs: Sequence[RunRecord]) -> list[RunRecord]:
    """The runs of the suites that measure or declare `metric` (all runs when none does, so a history of
    nothing but failures still reports them)."""
    suites = {r.suite for r in runs if r.samples.get(metric.name) or metric.name in r.metrics}
    return [r for r in runs if not suites or r.suite in suites]


def _first_line(text: str | None) -> str:
    line = (text or "").strip().splitlines()[0] if (text or "").strip() else "no error text"
    return line if len(line) <= 200 else line[:197] + "..."


MIN_BASELINE_RUNS = 2


def judge(metric: Metric, runs: Sequence[RunRecord], *, alpha: float = 0.01, window: int = 10) -> list[Verdict]:
    """A verdict per run (in the given commit order). Each run is compared with the pooled samples of the
    runs since the last change, at most `window` back (exact metrics: the last one); a regression or
    improvement starts a new segment, so the commits after a real slowdown are not flagged again."""
    if window < 1:
        raise ValueError(f"window must be >= 1, got {window}")
    verdicts: list[Verdict] = []
    segment: list[tuple[RunRecord, list[float]]] = []

    def verdict(
        run: RunRecord, status: Status, reason: str, c: Comparison | None = None, base: tuple[str, ...] = ()
    ) -> None:
        effect, p, spread = (c.effect, c.p_value, c.noise) if c else (None, None, None)
        verdicts.append(
            Verdict(metric.name, run.commit, run.subject, run.run_id, status, effect, p, spread, base, reason)
        )

    for run in _relevant(metric, runs):
        values = _values(run, metric)
        if run.status != "ok":
            prefix = "infrastructure failure" if run.status == "infra_failure" else f"run status {run.status!r}"
            verdict(run, "infra_failure", f"{prefix}: {_first_line(run.error)}")
            continue
        if not values:
            verdict(run, "missing", f"no samples of {metric.name}")
            continue
        if not segment:
            segment = [(run, values)]
            first = Comparison("baseline", None, None, noise(values), "")
            verdict(run, "baseline", "first run with samples: the baseline", first)
            continue
        base = segment[-1:] if metric.test == "exact" else segment[-window:]
        # one run of baseline cannot tell the commit's effect from that run's luck (1.6 % of unchanged
        # 10-commit histories alarmed at their second commit): ask ten times the evidence until there are two
        strict = alpha / 10 if metric.test == "rank" and len(base) < MIN_BASELINE_RUNS else alpha
        c = compare(metric, values, [v for _, vs in base for v in vs], alpha=strict)
        verdict(run, c.status, c.reason, c, tuple(r.commit for r, _ in base))
        segment = [(run, values)] if c.status in ("regression", "improvement") else [*segment, (run, values)][-window:]
    return verdicts


_Split = tuple[tuple[float, float], float, float | None]  # (ranking key: smaller is stronger, effect, p)


def _split(metric: Metric, series: Sequence[list[float]], lo: int, k: int, hi: int) -> _Split:
    """series[lo:k] against series[k:hi]. Rank metrics: pooled samples, Mann-Whitney p. Exact metrics: run
    medians, ranked by the standardised mean shift (the CUSUM statistic), no p."""
    if metric.test == "exact":
        before, after = [median(vs) for vs in series[lo:k]], [median(vs) for vs in series[k:hi]]
        effect = metric.badness(median(after), median(before))
        shift = abs(fmean(after) - fmean(before)) * math.sqrt(len(before) * len(after) / (hi - lo))
        return (-shift, -abs(effect)), effect, None
    pooled_before = [v for vs in series[lo:k] for v in vs]
    pooled_after = [v for vs in series[k:hi] for v in vs]
    effect = metric.badness(median(pooled_after), median(pooled_before))
    p = _p_value(pooled_after, pooled_before)
    return (p, -abs(effect)), effect, p


def steps(metric: Metric, runs: Sequence[RunRecord], *, alpha: float = 0.01) -> list[Step]:
    """Level shifts by binary segmentation over the ok runs with samples: the strongest split (>= 2 runs a
    side; smallest Mann-Whitney p, exact metrics the largest mean shift) is kept when significant and at
    least `min_effect`, then both halves are searched again. Each cut is then moved to its best place between
    its neighbours (a split between two steps otherwise hides one), and cuts that no longer pass against
    their neighbouring segments are dropped. Sorted by index."""
    positions = [i for i, run in enumerate(runs) if run.status == "ok" and _values(run, metric)]
    series = [_values(runs[i], metric) for i in positions]

    def passes(split: _Split) -> bool:
        _, effect, p = split
        return _changed(metric, effect) is not None and (p is None or p < alpha)

    def best(lo: int, hi: int) -> tuple[int, _Split] | None:
        candidates = [(k, _split(metric, series, lo, k, hi)) for k in range(lo + 2, hi - 1)]
        return min(candidates, key=lambda c: c[1][0]) if candidates else None

    cuts: list[int] = []

    def search(lo: int, hi: int) -> None:
        found = best(lo, hi)
        if found is not None and passes(found[1]):
            cuts.append(found[0])
            search(lo, found[0])
            search(found[0], hi)

    search(0, len(series))
    cuts.sort()
    for _ in range(len(cuts) + 1):  # refine: each cut to its best place between its neighbours
        moved = False
        for i, cut in enumerate(cuts):
            lo, hi = (cuts[i - 1] if i else 0), (cuts[i + 1] if i + 1 < len(cuts) else len(series))
            found = best(lo, hi)
            if found is not None and found[0] != cut:
                cuts[i], moved = found[0], True
        if not moved:
            break
    while True:  # prune: every cut must still pass against its neighbouring segments
        bounds = [0, *cuts, len(series)]
        splits = [_split(metric, series, bounds[i], cut, bounds[i + 2]) for i, cut in enumerate(cuts)]
        failing = [(split[0], i) for i, split in enumerate(splits) if not passes(split)]
        if not failing:
            break
        del cuts[max(failing)[1]]
    result = []
    for cut, (_, effect, p) in zip(cuts, splits, strict=True):
        kind = _changed(metric, effect)
        if kind is not None:
            result.append(Step(metric.name, positions[cut], runs[positions[cut]].commit, effect, p, kind))
    return result


def analyse(metric: Metric, runs: Sequence[RunRecord], *, alpha: float = 0.01, window: int = 10) -> Analysis:
    """`judge` and `steps` together, with the metric's typical noise (median of per-run noises) and whether
    that noise is too high to resolve `min_effect` at the declared repeats (never for exact metrics)."""
    per_run = [n for r in runs if r.status == "ok" and (n := noise(_values(r, metric))) is not None]
    overall = median(per_run) if per_run else None
    unstable = (
        metric.test == "rank"
        and overall is not None
        and overall * _HALF_WIDTH / math.sqrt(metric.repeats) > metric.min_effect
    )
    return Analysis(
        metric=metric,
        verdicts=judge(metric, runs, alpha=alpha, window=window),
        steps=steps(metric, runs, alpha=alpha),
        noise=overall,
        unstable=unstable,
    )


def _commit_rank(analyses: Sequence[Analysis]) -> dict[str, int]:
    """A commit order consistent with every analysis's verdict order (each is already in commit order)."""
    sorter: TopologicalSorter[str] = TopologicalSorter()
    seen: dict[str, int] = {}
    for analysis in analyses:
        previous: str | None = None
        for v in analysis.verdicts:
            seen.setdefault(v.commit, len(seen))
            if previous is None:
                sorter.add(v.commit)
            elif previous != v.commit:
                sorter.add(v.commit, previous)
            previous = v.commit
    try:
        return {commit: i for i, commit in enumerate(sorter.static_order())}
    except CycleError:  # analyses of differently ordered runs: fall back to first appearance
        return seen


def flagged(analyses: Sequence[Analysis]) -> list[Verdict]:
    """Every regression verdict across the analysed metrics, in commit order (then metric order)."""
    rank = _commit_rank(analyses)
    hits = [
        (rank[v.commit], i, j, v)
        for i, analysis in enumerate(analyses)
        for j, v in enumerate(analysis.verdicts)
        if v.status == "regression"
    ]
    return [v for *_, v in sorted(hits, key=lambda h: h[:3])]
