"""The end of a vibe run: `report.md` for a person, `run.json` for a program, `curves.png` from the metrics.

Everything comes in as plain JSON-able data (what the graph state holds: the spec, each node's
result, the repairs, the training result with its metrics lines), so the report can be written
again from a checkpoint. The files are committed to the workspace like every other output.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentjet.vibe.generate.contract import RUN_OUTPUTS, workspace_files
from agentjet.vibe.report.outcome_text import held_out_points, outcome_fields
from agentjet.vibe.report.report_input import ReportInput
from agentjet.vibe.report.report_text import render
from agentjet.vibe.workspace import Workspace

__all__ = ["REPORT_FILES", "CurveSeries", "ReportInput", "curve_series", "plot_curves", "run_summary", "write_report"]

REPORT_FILES = tuple(sorted(RUN_OUTPUTS))


def _metrics(data: ReportInput) -> list[Mapping[str, Any]]:
    lines = (data.training or {}).get("metrics") or []
    return [line for line in lines if isinstance(line, Mapping) and isinstance(line.get("step"), int)]


def run_summary(data: ReportInput) -> dict[str, Any]:
    """`run.json`: status, time_to_first_step_s, total_s, steps, repairs (a count) and what explains them."""
    finished = data.finished_at if data.finished_at is not None else time.time()
    training = data.training or {}
    metrics = _metrics(data)
    rewards = [line.get("reward_mean") for line in metrics]
    evals = [line.get("eval_reward_mean") for line in metrics if line.get("eval_reward_mean") is not None]
    rounds = (training.get("outcome") or {}).get("curve") or []  # the held-out rounds, the final one last
    held_out = [point["reward_mean"] for point in rounds if isinstance(point, Mapping) and "reward_mean" in point]
    spec = data.spec or {}
    return {
        "status": data.status,
        "time_to_first_step_s": _rounded(training.get("time_to_first_step_s")),
        "total_s": round(finished - data.started_at, 2),
        "steps": training.get("steps", 0),
        "repairs": len(data.repairs),
        **outcome_fields(training.get("outcome"), training.get("policy_outcomes")),
        "run_id": data.run_id,
        "sentence": data.sentence,
        "message": data.message,
        "family": spec.get("family"),
        "model": spec.get("model"),
        "requested_model": spec.get("requested_model"),
        "model_note": spec.get("model_note"),
        "training_status": training.get("status"),
        "training_reason": training.get("reason"),
        "hot_swaps": training.get("hot_swaps", []),
        "findings": training.get("findings", []),
        "actions": training.get("actions", []),
        "first_train_reward": rewards[0] if rewards else None,
        "last_train_reward": rewards[-1] if rewards else None,
        # the last held-out round's mean; a step's metrics line only holds eval episodes that ended in its window
        # (the base's round, say), and the final round ends after the last step
        "last_eval_reward": held_out[-1] if held_out else (evals[-1] if evals else None),
        "validation_ok": (data.validation or {}).get("ok"),
        "red_team_verdict": (data.red_team or {}).get("verdict"),
        "repair_details": [dict(r) for r in data.repairs],
        "timings": {k: dict(v) for k, v in data.timings.items()},
        "started_at": data.started_at,
        "finished_at": finished,
    }


def _rounded(value: object) -> float | None:
    return round(float(value), 2) if isinstance(value, int | float) else None


@dataclass(frozen=True)
class CurveSeries:
    """One policy's lines on the chart: its metrics lines and its held-out points (`name` None: the one policy)."""

    name: str | None
    metrics: Sequence[Mapping[str, Any]]
    held_out: Sequence[Mapping[str, Any]] = ()

    def label(self, what: str) -> str:
        return what if self.name is None else f"{self.name}: {what}"


def plot_curves(
    series: Sequence[CurveSeries], path: Path, *, title: str, rate: str = "held-out success rate"
) -> Path | None:
    """Per policy: the train reward per step, and the held-out success rate of each evaluated policy with its
    Wilson 95% bar (one colour each when policies trained apart); PNG, or None when there is nothing to draw."""
    if not any(each.metrics or each.held_out for each in series):
        return None
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot as plt

    fig, (top, bottom) = plt.subplots(2, 1, figsize=(7, 6), sharex=True)
    for index, each in enumerate(series):
        colour = f"C{index}" if len(series) > 1 else None
        _plot_one(top, bottom, each, rate, colour)
    top.set_ylabel("reward / rate")
    top.set_title(title)
    bottom.set_xlabel("training step")
    for axes in (top, bottom):
        axes.grid(alpha=0.3)
        axes.legend(loc="best", fontsize="small")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path)
    plt.close(fig)
    return path


def _plot_one(top: Any, bottom: Any, each: CurveSeries, rate: str, colour: str | None) -> None:
    """One policy's train reward and held-out rate (top), group reward std and loss (bottom)."""
    metrics, held_out = each.metrics, each.held_out
    steps = [int(line["step"]) for line in metrics]
    top.plot(steps, [line.get("reward_mean") for line in metrics], marker="o", ms=3, color=colour,
             label=each.label("train reward (mean)"))  # fmt: skip
    evals = [
        (int(line["step"]), line["eval_reward_mean"]) for line in metrics if line.get("eval_reward_mean") is not None
    ]
    if evals and not held_out:
        top.plot(*zip(*evals, strict=True), marker="s", ls="--", color=colour, label=each.label("eval reward (mean)"))
    if held_out:
        xs, ys = [int(p["step"]) for p in held_out], [float(p["rate"]) for p in held_out]
        low = [y - float(p["ci95"][0]) for y, p in zip(ys, held_out, strict=True)]
        high = [float(p["ci95"][1]) - y for y, p in zip(ys, held_out, strict=True)]
        top.errorbar(xs, ys, yerr=[low, high], fmt="s-", lw=2, capsize=3, color=colour,
                     label=each.label(f"held-out {rate} (95% CI)"))  # fmt: skip
    solo = colour is None
    bottom.plot(steps, [line.get("group_reward_std") for line in metrics], color="tab:green" if solo else colour,
                label=each.label("group reward std"))  # fmt: skip
    bottom.plot(steps, [line.get("loss") for line in metrics], color="tab:red" if solo else colour, ls="--",
                label=each.label("loss"))  # fmt: skip


def curve_series(data: ReportInput) -> list[CurveSeries]:
    """One series for a shared policy; one per policy (its own server's metrics and held-out curve) apart."""
    training = data.training or {}
    apart = training.get("policy_outcomes") or {}
    if not apart:
        return [CurveSeries(None, _metrics(data), held_out_points(training.get("outcome")))]
    lines = training.get("policy_metrics") or {}
    return [
        CurveSeries(name, [m for m in lines.get(name) or [] if isinstance(m.get("step"), int)], held_out_points(each))
        for name, each in apart.items()
    ]


def _generated_files(workspace: Path) -> list[tuple[str, int]]:
    files = workspace_files(workspace, skip_names=RUN_OUTPUTS | {".gitignore"})
    return [(name, len(blob.splitlines())) for name, blob in files.items()]


def write_report(workspace: Workspace, data: ReportInput, *, commit: bool = True) -> dict[str, Path]:
    """Write report.md, run.json and (with metrics) curves.png into the workspace; commit them."""
    root = workspace.path
    summary = run_summary(data)
    outcome = (data.training or {}).get("outcome")
    curves = plot_curves(
        curve_series(data),
        root / "curves.png",
        title=f"{summary['family'] or 'task'} on {summary['model']}",
        rate=str((outcome or {}).get("rate", "success rate")),
    )
    files = {"report.md": root / "report.md", "run.json": root / "run.json"}
    files["run.json"].write_text(json.dumps(summary, indent=2, default=str) + "\n")
    text = render(data, summary, _generated_files(root), has_curves=curves is not None, history=workspace.history())
    files["report.md"].write_text(text)
    if curves is not None:
        files["curves.png"] = curves
    if commit:
        workspace.commit(f"report: {data.status}", list(files))
    return files
