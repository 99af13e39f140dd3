"""The dashboard's chart of one metric along the commits, split off `dashboard` to keep both short.

Samples as dots, the median line, the baseline band the detector compares against, verdict markers,
infrastructure failures and detected steps: one PNG a reader can judge a regression from at a glance.
Drawn on a bare Agg `Figure` (no pyplot state), so it works headless and from any thread.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from agentjet.nightly.metrics import Metric

__all__ = ["plot_metric"]

_MAX_LABELS = 40  # more commits than this: label only every k-th tick


def _text(value: str) -> str:
    """`value` as literal matplotlib text (a `$` would start mathtext)."""
    return value.replace("$", r"\$")


def plot_metric(
    path: Path,
    metric: Metric,
    labels: Sequence[str],
    rows: Sequence[dict[str, Any]],
    steps: Sequence[tuple[int, str]] = (),
) -> Path:
    """Write the chart of `metric` to `path` (PNG).

    `labels`: one tick label per commit (x = its index); `rows`: per commit with data, `x`, `samples`,
    `median`, `status`, `band` ([low, high] or None); `steps`: (x, "regression" | "improvement")."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(min(24.0, max(7.0, 0.3 * len(labels) + 3)), 3.8), dpi=100)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    dots = [(r["x"], v) for r in rows for v in r["samples"]]
    if dots:
        ax.scatter(
            [x for x, _ in dots], [y for _, y in dots], s=12, color="#4477aa", alpha=0.55, label="samples", zorder=3
        )
    medians = [(r["x"], r["median"]) for r in rows if r["median"] is not None]
    if medians:
        ax.plot(*zip(*medians, strict=True), "-", color="#223355", lw=1.2, label="median", zorder=4)
    banded = [(r["x"], r["band"]) for r in rows if r["band"] is not None]
    if banded:  # one box per commit: the band that commit was judged against
        xs, low, high = [x for x, _ in banded], [b[0] for _, b in banded], [b[1] for _, b in banded]
        heights = [h - lo for lo, h in zip(low, high, strict=True)]
        ax.bar(xs, heights, bottom=low, width=0.9, color="#88aacc", alpha=0.3, lw=0, label="baseline band", zorder=1)
    for status, color, marker in (("regression", "#cc2222", "v"), ("improvement", "#22aa44", "^")):
        marked = [(r["x"], r["median"]) for r in rows if r["status"] == status and r["median"] is not None]
        if marked:
            ax.scatter(
                [x for x, _ in marked], [y for _, y in marked], s=70, color=color, marker=marker, label=status, zorder=5
            )
    failed = [r["x"] for r in rows if r["status"] == "infra_failure"]
    if failed:  # x in data, y in axes coordinates: along the bottom whatever the values
        ax.scatter(
            failed,
            [0.04] * len(failed),
            marker="x",
            color="#888888",
            s=40,
            label="infra failure",
            zorder=5,
            transform=ax.get_xaxis_transform(),
        )
    for x, kind in steps:
        ax.axvline(x, ls="--", lw=1, color="#cc2222" if kind == "regression" else "#22aa44", alpha=0.8)
    every = max(1, math.ceil(len(labels) / _MAX_LABELS))
    ax.set_xticks(range(0, len(labels), every), [_text(label) for label in labels[::every]], rotation=90, fontsize=7)
    ax.set_xlim(-0.5, max(len(labels), 1) - 0.5)
    if not dots:
        ax.set_ylim(0, 1)
    better = "lower" if metric.direction == "lower" else "higher"
    ax.set_title(_text(f"{metric.name} ({better} is better)"), fontsize=10)
    ax.set_ylabel(_text(metric.unit))
    ax.grid(alpha=0.3)
    if ax.get_legend_handles_labels()[0]:
        ax.legend(loc="best", fontsize=7)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, format="png")
    return path
