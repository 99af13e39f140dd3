"""Training invariants: ways of cutting a batch that must give the same training curve, checked per commit.

Timeline merging, group prefix sharing and micro-batching only change what an update costs; the
seeded loss, gradient-norm and KL curves of a short `tiny` training must not move
(`agentjet/bench/train_invariants.py` trains them). Each equivalence class in `CLASSES` shares one
committed reference curve (`references/<class>.json`, with its tolerance and why it was recorded).
A member passes when every step of every quantity is within tolerance, and when its residuals are
not one-sided: a consistent small bias that the per-step tolerance hides (a changed constant, an
off-by-one in a normaliser) is still a change in what training computes. Re-record a reference
(`record_references`, with a reason) only when a change to the curve is intended.

Tolerance units: a residual |x - ref| / (atol + rtol * |ref|); 1 is the edge of the tolerance.
The tolerances sit about 100x above the spread that float rounding alone gives (members against
each other, repeats, 1 vs 2 threads), and a wrong loss normalisation is hundreds of units away.
The metric per class is the worst member's deviation (at least 1.5 when its residuals drift), an
`exact` metric: lower is better, and a step of half a tolerance unit is worth a look.
"""

from __future__ import annotations

import json
import math
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any

from agentjet.nightly.metrics import Metric

__all__ = [
    "CLASSES",
    "DRIFT_ALPHA",
    "DRIFT_MEDIAN",
    "DRIFT_SAMPLE",
    "METRICS",
    "REFERENCES",
    "TOLERANCES",
    "CurveCheck",
    "check_curve",
    "load_reference",
    "measure_invariants",
    "record_references",
]

CLASSES: dict[str, tuple[str, ...]] = {  # class -> its members (`train_invariants.VARIANTS`); the first records
    "merge": ("merge-off", "merge-token", "merge-text"),
    "prefix": ("prefix-off", "prefix-on"),
    "micro": ("micro-1x8", "micro-8x1"),
}
# Measured (`train_invariants.natural_spread`: every member twice under 1 and under 2 threads, torch 2.13 CPU):
# the largest relative spread was 4.4e-5 (merge), 4.7e-5 (prefix), 1.6e-5 (micro), on the first step's loss
# (a sum of +-advantage terms that nearly cancel) or on the small early KL; the largest absolute spread 3.7e-7.
# rtol: that spread x100, rounded up. atol: a floor for entries at 0 (the first step's KL is exactly 0).
TOLERANCES: dict[str, dict[str, float]] = {
    "merge": {"rtol": 5e-3, "atol": 1e-8},
    "prefix": {"rtol": 5e-3, "atol": 1e-8},
    "micro": {"rtol": 2e-3, "atol": 1e-8},
}
REFERENCES = Path(__file__).parent / "references"
DRIFT_ALPHA = 0.01  # residuals this one-sided (Wilcoxon signed-rank p) ...
DRIFT_MEDIAN = 0.1  # ... and this large (median |residual| in tolerance units) are a drift
DRIFT_SAMPLE = 1.5  # the metric sample of a drifting member, at least: above the tolerance edge

METRICS: list[Metric] = [
    Metric(
        name=f"invariant.{cls}",
        unit="tolerance units",
        direction="lower",
        repeats=1,
        test="exact",
        min_effect=0.5,
        kind="quality",
        description=f"worst deviation of the seeded tiny training curves of {', '.join(members)} from the "
        f"committed '{cls}' reference (loss, grad norm, KL per step); 1 = the tolerance edge, "
        f"{DRIFT_SAMPLE} or more = out of tolerance or drifting one way",
    )
    for cls, members in CLASSES.items()
]


@dataclass(frozen=True)
class CurveCheck:
    """One curve against its reference. `dev_units`: the worst |x - ref| / (atol + rtol |ref|) over
    quantities and steps; `drift_p`: Wilcoxon signed-rank p of the scaled residuals being centred
    on 0 (None when every residual is 0); `median_units`: median |scaled residual|; `worst`:
    where `dev_units` is (`loss[2]`)."""

    dev_units: float
    drift_p: float | None
    passed: bool
    reason: str
    median_units: float = 0.0
    worst: str = ""

    @property
    def drifted(self) -> bool:
        """Residuals one-sided and large enough to fail the check, whatever `dev_units` is."""
        return _drifting(self.drift_p, self.median_units)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _drift_p(scaled: Sequence[float]) -> float | None:
    """Two-sided Wilcoxon signed-rank p that the residuals are centred on 0; zeros dropped, None if all are."""
    if not any(scaled):
        return None
    from scipy.stats import wilcoxon

    with warnings.catch_warnings():  # few nonzero residuals: scipy warns, the p is still right (just large)
        warnings.simplefilter("ignore")
        result = wilcoxon(scaled, zero_method="wilcox", alternative="two-sided")
    p = float(result.pvalue)
    return p if math.isfinite(p) else None


def check_curve(
    curve: Mapping[str, Sequence[float]], reference: Mapping[str, Sequence[float]], *, rtol: float, atol: float
) -> CurveCheck:
    """Compare `curve` with `reference` (quantity -> per-step values) under `rtol`/`atol`.

    Fails when any residual exceeds the tolerance (`dev_units` > 1, a NaN counts as infinitely far),
    when a quantity or a step is missing, or when the residuals are one-sided (`drift_p` <
    DRIFT_ALPHA) with a median |scaled residual| above DRIFT_MEDIAN.
    """
    if rtol < 0 or atol < 0 or rtol == atol == 0:
        raise ValueError(f"rtol={rtol} and atol={atol} must be >= 0 and not both 0")
    for name, expected in reference.items():
        got = curve.get(name)
        if got is None or len(got) != len(expected):
            have = "missing" if got is None else f"{len(got)} steps"
            return CurveCheck(math.inf, None, False, f"{name}: {have}, the reference has {len(expected)} steps")
    scaled: list[float] = []
    worst, where = 0.0, ""
    for name, expected in reference.items():
        for step, (x, ref) in enumerate(zip(curve[name], expected, strict=True)):
            units = (x - ref) / (atol + rtol * abs(ref))
            if not math.isfinite(units):
                units = math.inf
            scaled.append(units)
            if abs(units) > worst or not where:
                worst, where = abs(units), f"{name}[{step}]"
    finite = [u for u in scaled if math.isfinite(u)]
    drift_p = _drift_p(finite) if len(finite) == len(scaled) else None
    median = _median([abs(u) for u in scaled])
    if worst > 1:
        reason = f"out of tolerance: {where} is {worst:.3g} tolerance units off (rtol={rtol:g}, atol={atol:g})"
    elif _drifting(drift_p, median):
        sign = "above" if sum(finite) > 0 else "below"
        reason = (
            f"drift: the residuals sit one-sidedly {sign} the reference (Wilcoxon p={drift_p:.2g}, "
            f"median {median:.2f} tolerance units), though every step is within tolerance"
        )
    else:
        p = "n/a (all residuals 0)" if drift_p is None else f"{drift_p:.2g}"
        ok = f"ok: worst {worst:.3g} tolerance units at {where}, median {median:.2g}, drift p {p}"
        return CurveCheck(worst, drift_p, True, ok, median, where)
    return CurveCheck(worst, drift_p, False, reason, median, where)


def _drifting(drift_p: float | None, median: float) -> bool:
    return drift_p is not None and drift_p < DRIFT_ALPHA and median > DRIFT_MEDIAN


def _median(values: Sequence[float]) -> float:
    ordered = sorted(values)
    n = len(ordered)
    if n == 0:
        return 0.0
    return ordered[n // 2] if n % 2 else (ordered[n // 2 - 1] + ordered[n // 2]) / 2


def load_reference(cls: str, *, references: Path | None = None) -> dict[str, Any]:
    """The committed reference of class `cls` (`references/<cls>.json`)."""
    if cls not in CLASSES:
        raise ValueError(f"unknown invariant class {cls!r}; known: {', '.join(CLASSES)}")
    path = (references or REFERENCES) / f"{cls}.json"
    data: dict[str, Any] = json.loads(path.read_text())
    return data


def _sample(checks: Sequence[CurveCheck]) -> float:
    """The class's metric sample: the worst member's deviation, at least DRIFT_SAMPLE when one drifts.

    Kept finite (a NaN curve is 1e9 units off) so that every history store can hold it."""
    worst = max(c.dev_units for c in checks)
    if any(c.drifted for c in checks):
        worst = max(worst, DRIFT_SAMPLE)
    return min(worst, 1e9)


def measure_invariants(
    *, steps: int = 4, references: Path | None = None, classes: Sequence[str] | None = None
) -> tuple[dict[str, list[float]], dict[str, Any]]:
    """Train every member of every class (or of `classes`) for `steps` steps and check it against its class's
    reference.

    Returns the samples {`invariant.<class>`: [worst tolerance units]} and the details {class:
    {variant: {"curve", "check"}}}, strict JSON (a non-finite value is None). Fewer `steps` than the
    reference holds compare its first steps (training is causal; but below 3 steps the drift test has
    too few residuals to reach p < 0.01); more is an error. Members with the same configuration (e.g.
    prefix-off and merge-token) are trained once.
    """
    from agentjet.bench.train_invariants import VARIANTS, train_curve

    samples: dict[str, list[float]] = {}
    details: dict[str, Any] = {}
    trained: dict[str, dict[str, list[float]]] = {}  # repr of a variant's configuration -> its curve
    unknown = sorted(set(classes or ()) - set(CLASSES))
    if unknown:
        raise ValueError(f"no invariant class {', '.join(unknown)}; the classes are {', '.join(CLASSES)}")
    for cls, members in CLASSES.items():
        if classes is not None and cls not in classes:
            continue
        reference = load_reference(cls, references=references)
        if steps > reference["steps"]:
            raise ValueError(f"{cls}: {steps} steps asked, the reference holds {reference['steps']}")
        expected = {name: values[:steps] for name, values in reference["curve"].items()}
        tolerance = reference["tolerance"]
        checks = []
        details[cls] = {}
        for variant in members:
            key = repr(VARIANTS[variant])
            if key not in trained:
                trained[key] = train_curve(variant, steps=steps)
            curve = trained[key]
            check = check_curve(curve, expected, rtol=tolerance["rtol"], atol=tolerance["atol"])
            checks.append(check)
            details[cls][variant] = _json_safe({"curve": curve, "check": check.to_dict()})
        samples[f"invariant.{cls}"] = [_sample(checks)]
    return samples, details


def _json_safe(value: Any) -> Any:
    """`value` with every non-finite float (a NaN step, an infinite deviation) as None: strict JSON for the history."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, Mapping):
        return {k: _json_safe(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_json_safe(v) for v in value]
    return value


def record_references(reason: str, *, out_dir: Path | None = None, steps: int = 4) -> list[Path]:
    """Train the first member of each class and write `<class>.json` there (default: the committed folder).

    `reason` says why the curves may change (kept in the file; the nightly history notes it too).
    """
    from agentjet.bench.train_invariants import train_curve

    if not reason.strip():
        raise ValueError("a reference is re-recorded only with a reason")
    recorded = datetime.now(UTC).date().isoformat()
    references = []
    for cls, members in CLASSES.items():  # all trained before any is written: never half a re-recording
        curve = train_curve(members[0], steps=steps)
        if not all(math.isfinite(x) for values in curve.values() for x in values):
            raise ValueError(f"{cls}: {members[0]} trained a non-finite curve; not recording it: {curve}")
        references.append(
            {
                "class": cls,
                "variants": list(members),
                "steps": steps,
                "curve": curve,
                "tolerance": TOLERANCES[cls],
                "recorded": recorded,
                "reason": reason.strip(),
                "torch": _version("torch"),
            }
        )
    folder = out_dir or REFERENCES
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for data in references:
        path = folder / f"{data['class']}.json"
        path.write_text(json.dumps(data, indent=2) + "\n")
        written.append(path)
    return written


def _version(distribution: str) -> str | None:
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return None
