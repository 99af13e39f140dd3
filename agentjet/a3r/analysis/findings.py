"""What a campaign found: best configuration, parameter importance, effects with intervals, confirmation.

Input is the study as trial records (`agentjet.a3r.trial.records.trial_record`: the live study's trials,
or the repo's `study.json`), so a cloned campaign repo can be analysed without its runtime dir.
Void trials (failed and queued again) are listed but never counted. Effects use Student t
intervals (`agentjet.a3r.analysis.stats`); importance is Optuna's PED-ANOVA over the completed search
trials. Whether the best is a *finding* is `agentjet.a3r.analysis.confirmation`'s call.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from agentjet.a3r.analysis.confirmation import Confirmation, Verdict, confirm_best
from agentjet.a3r.analysis.importance import param_importance
from agentjet.a3r.analysis.stats import Interval, mean_interval
from agentjet.a3r.plan.campaign_plan import CampaignPlan
from agentjet.a3r.plan.planner import StageResults
from agentjet.a3r.trial.trial_row import TrialRow

__all__ = [
    "CampaignAnalysis",
    "Confirmation",
    "LevelEffect",
    "TrialRow",
    "Verdict",
    "analyze",
    "confirm_best",
    "level_effects",
    "trial_rows",
]

_MAX_BINS = 3  # a float param's trials are split into at most this many quantile bins


@dataclass(frozen=True)
class LevelEffect:
    """The objective's mean over the completed search trials at one level (value or bin) of a param."""

    param: str
    level: str
    interval: Interval
    order: float = 0.0  # where the level sits on the param's axis (for plots); its index for choices


@dataclass(frozen=True)
class CampaignAnalysis:
    """Everything report.md says, as data."""

    plan: CampaignPlan
    rows: tuple[TrialRow, ...]
    best: TrialRow | None
    importance: dict[str, float]
    importance_note: str
    effects: dict[str, list[LevelEffect]]
    confirmation: Confirmation
    notes: list[str] = field(default_factory=list)

    @property
    def maximize(self) -> bool:
        return self.plan.objective.direction == "maximize"

    def of_kind(self, kind: str, *, counted: bool = True) -> list[TrialRow]:
        return [r for r in self.rows if r.kind == kind and (r.counted or not counted)]

    def counts(self) -> dict[str, int]:
        """Trials per state (void trials apart), e.g. {"COMPLETE": 9, "PRUNED": 2, "void": 1}."""
        out: dict[str, int] = {}
        for row in self.rows:
            key = "void" if row.void else row.state
            out[key] = out.get(key, 0) + 1
        return out

    def stage_results(self) -> StageResults:
        """The planner's view of this stage (`agentjet.a3r.plan.planner.propose_next_stage`)."""
        trials = [
            {"number": r.number, "kind": r.kind, "params": r.params, "value": r.value, "state": r.state}
            for r in self.rows
            if not r.void
        ]
        return StageResults(
            best_params=dict(self.best.params) if self.best else {},
            best_value=self.best.value if self.best else None,
            trials=trials,
            importance=dict(self.importance),
            notes=f"{self.confirmation.verdict}: {self.confirmation.reason}",
        )


def trial_rows(records: Sequence[Mapping[str, Any]]) -> list[TrialRow]:
    """Trial records (`records.trial_record` dicts) -> rows, by trial number."""
    rows = []
    for rec in sorted(records, key=lambda r: int(r["number"])):
        curve = tuple((int(s), float(v)) for s, v in rec.get("intermediate") or () if _finite(v))
        rows.append(
            TrialRow(
                number=int(rec["number"]),
                kind=str(rec.get("kind") or "search"),
                state=str(rec.get("state", "")),
                params=dict(rec.get("params") or {}),
                value=float(rec["value"]) if _finite(rec.get("value")) else None,
                server=rec.get("server"),
                duration_s=rec.get("duration_s"),
                seed=rec.get("seed"),
                void=str(rec.get("state")) == "FAIL" and bool(rec.get("retried")),
                fail_reason=rec.get("fail_reason"),
                confirm_of=_int_or_none((rec.get("user_attrs") or {}).get("confirm_of")),
                confirm_index=_int_or_none((rec.get("user_attrs") or {}).get("confirm_index")),
                curve=curve,
            )
        )
    return rows


def analyze(plan: CampaignPlan, records: Sequence[Mapping[str, Any]]) -> CampaignAnalysis:
    """The whole analysis of one campaign stage from its trial records."""
    rows = tuple(trial_rows(records))
    maximize = plan.objective.direction == "maximize"
    search = [r for r in rows if r.kind == "search" and r.counted]
    best = _best(search, maximize)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # Optuna warns on small studies; the note says so instead
        importance, note = param_importance(plan, [(r.params, r.value) for r in search if r.value is not None])
    effects = level_effects(plan, search)
    confirmation = confirm_best(rows, best, maximize=maximize)
    return CampaignAnalysis(plan, rows, best, importance, note, effects, confirmation, _notes(rows, plan))


def _best(rows: Sequence[TrialRow], maximize: bool) -> TrialRow | None:
    scored = [r for r in rows if r.value is not None]
    if not scored:
        return None
    pick = max if maximize else min  # the first of equals wins: the earliest trial
    return pick(scored, key=lambda r: float(r.value or 0.0))


def level_effects(plan: CampaignPlan, rows: Sequence[TrialRow]) -> dict[str, list[LevelEffect]]:
    """Per param: the objective's mean and t interval at each level (a choice, or a quantile bin of a range)."""
    out: dict[str, list[LevelEffect]] = {}
    for name, spec in plan.search_space.items():
        points = [(r.params[name], float(r.value)) for r in rows if name in r.params and r.value is not None]
        if not points:
            continue
        if spec.choices is not None or len({p for p, _ in points}) <= _MAX_BINS:
            levels = _by_value(name, points, list(spec.choices or ()))
        else:
            levels = _by_bin(name, points, log=spec.log)
        out[name] = levels
    return out


def _by_value(name: str, points: Sequence[tuple[Any, float]], choices: list[Any]) -> list[LevelEffect]:
    seen = sorted({p for p, _ in points}, key=lambda v: choices.index(v) if v in choices else _sort_key(v))
    return [
        LevelEffect(name, _label(v), mean_interval([y for p, y in points if p == v]), order=_order(v, i))
        for i, v in enumerate(seen)
    ]


def _by_bin(name: str, points: Sequence[tuple[Any, float]], *, log: bool) -> list[LevelEffect]:
    """Equal-count bins of a range param (a bin per third of the trials, by value)."""
    ordered = sorted(points, key=lambda p: float(p[0]))
    bins = min(_MAX_BINS, max(1, len(ordered) // 2))
    out = []
    for b in range(bins):
        chunk = ordered[b * len(ordered) // bins : (b + 1) * len(ordered) // bins]
        low, high = float(chunk[0][0]), float(chunk[-1][0])
        centre = math.sqrt(low * high) if log and low > 0 else (low + high) / 2
        level = f"{_label(low)}..{_label(high)}" if low != high else _label(low)
        out.append(LevelEffect(name, level, mean_interval([y for _, y in chunk]), order=centre))
    return out


def _notes(rows: Sequence[TrialRow], plan: CampaignPlan) -> list[str]:
    notes = []
    void = [r.number for r in rows if r.void]
    if void:
        notes.append(f"trials {', '.join(map(str, void))} were voided (their server was lost or the campaign stopped) "
                     "and their params ran again as later trials")  # fmt: skip
    unfinished = [r.number for r in rows if r.state in ("RUNNING", "WAITING")]
    if unfinished:
        notes.append(f"trials {', '.join(map(str, unfinished))} had not finished when this report was written")
    if plan.seeds.confirm == 0:
        notes.append("the plan asks for no confirmation re-runs (seeds.confirm = 0), so nothing can be a finding")
    return notes


def _finite(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _int_or_none(value: Any) -> int | None:
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _label(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.3g}" if value == 0 or 1e-3 <= abs(value) < 1e4 else f"{value:.2e}"
    return str(value)


def _order(value: Any, index: int) -> float:
    return float(value) if _finite(value) else float(index)


def _sort_key(value: Any) -> tuple[int, float, str]:
    return (0, float(value), "") if _finite(value) else (1, 0.0, str(value))
