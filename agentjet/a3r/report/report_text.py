"""The text of a campaign's report.md, from its analysis: pure, no I/O (figures are passed in by name)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from agentjet.a3r.analysis.findings import CampaignAnalysis, TrialRow
from agentjet.a3r.analysis.importance import MIN_TRIALS
from agentjet.a3r.analysis.questions import answer, extract_questions
from agentjet.a3r.analysis.stats import Interval
from agentjet.a3r.trial.records import describe_params

__all__ = ["render_report"]


def render_report(
    analysis: CampaignAnalysis,
    figures: Mapping[str, Path],
    *,
    figures_dir: str = "figures",
    dashboard: str | None = None,
) -> str:
    """report.md: verdict, best config, questions, importance, effects, curves, confirmation, every trial, and
    how to open the study in optuna-dashboard (`dashboard`: its storage argument)."""
    sections = [
        _header(analysis),
        _best(analysis),
        _questions(analysis),
        _importance(analysis, figures, figures_dir),
        _effects(analysis, figures, figures_dir),
        _curves(analysis, figures, figures_dir),
        _confirmation(analysis, figures, figures_dir),
        _trials(analysis),
        _method(analysis),
        _dashboard(dashboard),
    ]
    return "\n\n".join(s.strip() for s in sections if s.strip()) + "\n"


def _header(a: CampaignAnalysis) -> str:
    plan, counts = a.plan, a.counts()
    task = plan.task.family or plan.task.workspace or plan.task.client
    states = ", ".join(f"{n} {k.lower()}" for k, n in sorted(counts.items())) or "none yet"
    verdict = {"finding": "**Finding**", "not confirmed": "**Not confirmed**", "no result": "**No result**"}
    lines = [
        f"# Campaign report: {plan.name} (stage {plan.stage})",
        "",
        f"Objective: {plan.objective.direction} `{plan.objective.metric}` on task `{task}` with model "
        f"`{plan.model}`; {plan.budget.steps_per_trial} steps per trial, eval every {plan.budget.eval_every} "
        f"on {plan.budget.eval_items} held-out items. Trials: {len(a.rows)} ({states}).",
        "",
        f"{verdict[a.confirmation.verdict]}: {a.confirmation.reason}.",
    ]
    lines += [f"\nNote: {note}." for note in a.notes]
    return "\n".join(lines)


def _best(a: CampaignAnalysis) -> str:
    if a.best is None:
        return "## Best configuration\n\nNo search trial has completed yet."
    best, c = a.best, a.confirmation
    rows = [f"| `{name}` | {_fmt(value)} |" for name, value in best.params.items()]
    rows.append(f"| **{a.plan.objective.metric}** (trial {best.number}) | {_fmt(best.value)} |")
    if c.confirmed is not None:
        rows.append(f"| re-runs with fresh seeds | {c.confirmed.describe(4)} |")
    return "## Best configuration\n\n| param | value |\n|---|---|\n" + "\n".join(rows)


def _questions(a: CampaignAnalysis) -> str:
    questions = extract_questions(a.plan.body)
    if not questions:
        return "## Research questions\n\nThe plan states no research questions."
    out = ["## Research questions", ""]
    for i, question in enumerate(questions, 1):
        out += [f"{i}. **{question}**", "", f"   {answer(question, a)}", ""]
    return "\n".join(out)


def _image(figures: Mapping[str, Path], name: str, figures_dir: str, alt: str) -> str:
    path = figures.get(name)
    return f"![{alt}]({figures_dir}/{path.name})\n\n" if path is not None else ""


def _importance(a: CampaignAnalysis, figures: Mapping[str, Path], figures_dir: str) -> str:
    head = "## Parameter importance\n\n"
    if not a.importance:
        return head + f"{a.importance_note.capitalize()}."
    table = "| param | importance |\n|---|---|\n" + "\n".join(f"| `{n}` | {s:.1%} |" for n, s in a.importance.items())
    return head + _image(figures, "importance", figures_dir, "importance") + table + f"\n\n{a.importance_note}."


def _effects(a: CampaignAnalysis, figures: Mapping[str, Path], figures_dir: str) -> str:
    if not a.effects:
        return ""
    rows = [
        f"| `{lv.param}` | {lv.level} | {lv.interval.n} | {_fmt(lv.interval.mean)} | {_ci(lv.interval)} |"
        for levels in a.effects.values()
        for lv in levels
    ]
    return (
        "## Effects\n\nMean objective of the completed search trials at each level of a param (ranges split "
        "into equal-count bins), with 95% t intervals. Levels whose intervals overlap are not told apart.\n\n"
        + _image(figures, "effects", figures_dir, "effects")
        + "| param | level | trials | mean | 95% CI |\n|---|---|---|---|---|\n"
        + "\n".join(rows)
    )


def _curves(a: CampaignAnalysis, figures: Mapping[str, Path], figures_dir: str) -> str:
    image = _image(figures, "curves", figures_dir, "learning curves")
    if not image:
        return ""
    return (
        "## Learning curves\n\nThe objective at each eval of every trial (red: the best; green: its re-runs; "
        "purple: the base config; dotted: pruned). Each trial's own curve, with its train reward, is "
        "`trials/<n>/curve.png`.\n\n" + image
    )


def _confirmation(a: CampaignAnalysis, figures: Mapping[str, Path], figures_dir: str) -> str:
    c = a.confirmation
    out = ["## Confirmation", "", f"Verdict: **{c.verdict}**: {c.reason}.", ""]
    if c.runs:
        out.append(f"Re-runs of trial {c.best_number}: " + ", ".join(_fmt(v) for v in c.runs) + ".")
    if c.confirmed is not None:
        out.append(f"Re-runs' mean: {c.confirmed.describe(4)}.")
    if c.baseline_runs:
        out.append("Runs of the plan's base config on the same seeds: " + ", ".join(map(_fmt, c.baseline_runs)) + ".")
    if c.baseline is not None:
        out.append(f"Baseline ({c.baseline_label}): {c.baseline.describe(4)}.")
    if c.difference is not None:
        out.append(f"Difference: {c.difference.describe(4)}.")
    return "\n".join(out) + "\n\n" + _image(figures, "confirmation", figures_dir, "confirmation")


def _trials(a: CampaignAnalysis) -> str:
    head = "| # | kind | params | state | value | server | duration | seed |\n|---|---|---|---|---|---|---|---|\n"
    return "## Every trial\n\n" + head + "\n".join(_trial_line(r) for r in a.rows)


def _trial_line(r: TrialRow) -> str:
    state = "FAIL (void, re-run)" if r.void else r.state
    if r.state == "FAIL" and r.fail_reason:
        state += f": {r.fail_reason.splitlines()[0][:80]}"
    kind = f"{r.kind} for {r.confirm_of}" if r.kind in ("confirm", "baseline") and r.confirm_of is not None else r.kind
    duration = f"{r.duration_s:.1f} s" if r.duration_s is not None else ""
    cells = [str(r.number), kind, describe_params(r.params), state, _fmt(r.value), r.server or "", duration]
    cells.append("" if r.seed is None else str(r.seed))
    return "| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |"


def _method(a: CampaignAnalysis) -> str:
    plan = a.plan
    return (
        "## Method\n\n"
        f"Sampler `{plan.sampler.name}` (seed {plan.sampler_seed}), pruner `{plan.pruner.name}`, "
        f"{plan.seeds.confirm} confirmation re-run(s) of the best params with fresh seeds. Intervals are Student t "
        "(paired by seed, or Welch, for a difference): a bootstrap is too narrow at a handful of re-runs. Importance "
        f"is Optuna's PED-ANOVA over the completed search trials (not estimated below {MIN_TRIALS}). The best result "
        "is called a finding only when the re-runs' 95% interval lies on the better side of the baseline (the plan's "
        "base config run on the same seeds when the campaign made those runs, else the other completed search "
        "trials); otherwise it is not confirmed. "
        "Void trials (a lost server, a stopped campaign) are listed but not counted; their params ran again."
    )


def _ci(interval: Interval) -> str:
    low, high = interval.low, interval.high
    return f"[{_fmt(low)}, {_fmt(high)}]" if low is not None and high is not None else "n/a (one trial)"


def _fmt(value: object) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


def _dashboard(storage: str | None) -> str:
    if storage is None:
        return ""
    return (
        "## Browse the study\n\n"
        "The campaign's Optuna study opens in optuna-dashboard (history, importance, parallel coordinates); "
        "from this folder:\n\n"
        f"```bash\noptuna-dashboard {storage}   # then http://127.0.0.1:8080\n```"
    )
