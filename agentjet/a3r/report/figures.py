"""The campaign report's plots (`figures/*.png`): importance, learning curves, effects, confirmation.

Each is drawn on a bare `matplotlib.figure.Figure` with the Agg canvas (no pyplot global state)
and written whole then renamed, so a half-written PNG is never committed. A plot with nothing to
show is not drawn; `save_figures` returns only the files it wrote.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from agentjet.a3r.analysis.findings import CampaignAnalysis

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

__all__ = ["FIGURES", "save_figures"]

FIGURES = {
    "importance": "importance.png",
    "curves": "curves.png",
    "effects": "effects.png",
    "confirmation": "confirmation.png",
}
_STATE_STYLE = {"COMPLETE": "-", "PRUNED": ":", "FAIL": "--", "RUNNING": "-."}


def save_figures(analysis: CampaignAnalysis, folder: Path) -> dict[str, Path]:
    """Draw every figure that has data into `folder`; {figure name: path} of those written."""
    drawers: dict[str, Callable[[CampaignAnalysis], Figure | None]] = {
        "importance": _importance,
        "curves": _curves,
        "effects": _effects,
        "confirmation": _confirmation,
    }
    written: dict[str, Path] = {}
    for name, draw in drawers.items():
        fig = draw(analysis)
        if fig is not None:
            written[name] = _save(fig, folder / FIGURES[name])
    return written


def _figure(width: float, height: float) -> Figure:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), dpi=90)
    FigureCanvasAgg(fig)
    return fig


def _save(fig: Figure, path: Path) -> Path:
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    fig.savefig(tmp, format="png")
    tmp.replace(path)
    return path


def _importance(analysis: CampaignAnalysis) -> Figure | None:
    if not analysis.importance:
        return None
    names = list(analysis.importance)[::-1]  # largest on top
    fig = _figure(5.5, 0.5 + 0.45 * len(names))
    ax = fig.add_subplot()
    ax.barh(names, [analysis.importance[n] for n in names], color="tab:blue")
    ax.set_xlim(0, 1)
    ax.set_xlabel("importance (share, PED-ANOVA)")
    ax.set_title(f"Which params mattered for {analysis.plan.objective.metric}", fontsize=10)
    ax.grid(axis="x", alpha=0.3)
    return fig


def _curves(analysis: CampaignAnalysis) -> Figure | None:
    rows = [r for r in analysis.rows if r.curve]
    if not rows:
        return None
    fig = _figure(6.5, 4.0)
    ax = fig.add_subplot()
    best = analysis.best.number if analysis.best else None
    for row in rows:
        steps, values = [s for s, _ in row.curve], [v for _, v in row.curve]
        is_best = row.number == best
        style = _STATE_STYLE.get(row.state, "-")
        colour = "tab:red" if is_best else {"confirm": "tab:green", "baseline": "tab:purple"}.get(row.kind, "0.55")
        label = f"best (trial {row.number})" if is_best else None
        ax.plot(steps, values, style, color=colour, lw=2.2 if is_best else 1.0, marker=".", alpha=0.9, label=label)
    if best is not None:
        ax.plot([], [], color="tab:green", lw=1.0, label="confirmation re-runs")
        if any(r.kind == "baseline" for r in rows):
            ax.plot([], [], color="tab:purple", lw=1.0, label="base config")
        ax.plot([], [], ":", color="0.55", lw=1.0, label="pruned")
        ax.legend(loc="best", fontsize=8)
    ax.set_xlabel("training step")
    ax.set_ylabel(analysis.plan.objective.metric)
    ax.set_title("Learning curves: the objective at each eval, one line per trial", fontsize=10)
    ax.grid(alpha=0.3)
    return fig


def _effects(analysis: CampaignAnalysis) -> Figure | None:
    params = [p for p, levels in analysis.effects.items() if levels]
    if not params:
        return None
    fig = _figure(4.2 * len(params), 3.6)
    for i, name in enumerate(params):
        ax = fig.add_subplot(1, len(params), i + 1)
        _effect_panel(ax, analysis, name)
    return fig


def _effect_panel(ax: Axes, analysis: CampaignAnalysis, name: str) -> None:
    levels = analysis.effects[name]
    xs = list(range(len(levels)))
    means = [lv.interval.mean for lv in levels]
    low = [lv.interval.mean - lv.interval.low if lv.interval.low is not None else 0.0 for lv in levels]
    high = [lv.interval.high - lv.interval.mean if lv.interval.high is not None else 0.0 for lv in levels]
    ax.errorbar(xs, means, yerr=[low, high], fmt="o", capsize=4, color="tab:blue")
    for x, lv in zip(xs, levels, strict=True):
        if not lv.interval.known:
            ax.plot([x], [lv.interval.mean], "x", color="tab:orange")  # one trial: no interval
    ax.set_xticks(xs, [f"{lv.level}\nn={lv.interval.n}" for lv in levels], fontsize=7)
    ax.set_xlabel(name)
    ax.set_ylabel(f"mean {analysis.plan.objective.metric} (95% CI)")
    ax.grid(axis="y", alpha=0.3)


def _confirmation(analysis: CampaignAnalysis) -> Figure | None:
    c = analysis.confirmation
    if c.confirmed is None:
        return None
    fig = _figure(5.0, 3.6)
    ax = fig.add_subplot()
    groups = [("best, re-run", c.confirmed, list(c.runs))]
    if c.baseline is not None:
        groups.append((c.baseline_label.removeprefix("the "), c.baseline, list(c.baseline_runs)))
    for x, (_, interval, points) in enumerate(groups):
        err = [[0.0], [0.0]]
        if interval.low is not None and interval.high is not None:
            err = [[interval.mean - interval.low], [interval.high - interval.mean]]
        ax.errorbar([x], [interval.mean], yerr=err, fmt="o", capsize=6, color="tab:red" if x == 0 else "0.4")
        ax.scatter([x + 0.08] * len(points), points, s=12, color="tab:red" if x == 0 else "0.4", alpha=0.6)
    ax.set_xticks(range(len(groups)), [g[0] for g in groups], fontsize=8)
    ax.set_xlim(-0.5, len(groups) - 0.5)
    ax.set_ylabel(f"{analysis.plan.objective.metric} (95% CI)")
    ax.set_title(f"Confirmation: {c.verdict}", fontsize=10)
    ax.grid(axis="y", alpha=0.3)
    return fig
