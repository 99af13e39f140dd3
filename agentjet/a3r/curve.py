"""One trial's learning curve as a small PNG (`trials/<n>/curve.png` in the campaign repo).

Drawn on a bare `matplotlib.figure.Figure` with the Agg canvas, never through pyplot's global
state, so trial threads can draw at the same time.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

__all__ = ["save_trial_curve"]


def save_trial_curve(
    path: Path,
    *,
    title: str,
    objective: str,
    curve: Sequence[tuple[int, float]],
    train: Sequence[tuple[int, float]] = (),
) -> Path:
    """The objective at each eval (and the mean train reward per step, when known) against the step."""
    fig = Figure(figsize=(5.0, 3.2), dpi=80)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    if train:
        ax.plot([s for s, _ in train], [v for _, v in train], color="0.6", lw=1, label="train reward")
    if curve:
        ax.plot([s for s, _ in curve], [v for _, v in curve], marker="o", lw=1.5, label=objective)
    ax.set_xlabel("step")
    ax.set_ylabel(objective)
    ax.set_title(title, fontsize=9)
    ax.grid(alpha=0.3)
    if curve or train:
        ax.legend(loc="best", fontsize=8)
    fig.subplots_adjust(left=0.15, right=0.97, top=0.9, bottom=0.15)  # tight_layout costs more than the plot
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    fig.savefig(tmp, format="png")
    tmp.replace(path)
    return path
