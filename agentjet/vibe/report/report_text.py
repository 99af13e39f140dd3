"""The text of `report.md`: one section per part of the run, tables for the checks, plain words for the rest."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from agentjet.vibe.report.outcome_text import outcome_section
from agentjet.vibe.report.report_input import ReportInput

__all__ = ["render"]


def _cell(value: object, limit: int = 160) -> str:
    text = "" if value is None else str(value)
    text = " ".join(text.split()).replace("|", "\\|")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _table(header: Sequence[str], rows: Sequence[Sequence[object]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(_cell(v) for v in row) + " |" for row in rows]
    return lines + [""]


def _duration(seconds: object) -> str:
    if not isinstance(seconds, int | float):
        return "not reached"
    if seconds < 120:
        return f"{seconds:.1f} s"
    whole = round(seconds)  # 719.6 s is 12 min 0 s, not 11 min 60 s
    return f"{whole // 60} min {whole % 60} s"


def _reward(value: object) -> str:
    return f"{value:.3f}" if isinstance(value, int | float) else "-"


def _names(values: object) -> str:
    return ", ".join(str(v) for v in values) if isinstance(values, list) and values else "-"


def _asked(data: ReportInput) -> list[str]:
    lines = ["## What was asked", "", f"> {data.sentence}", ""]
    spec = data.spec
    if not spec:
        return lines + ["No task spec was made.", ""]
    params = ", ".join(f"{k}={v!r}" for k, v in (spec.get("params") or {}).items()) or "defaults"
    model = f"**{spec.get('model')}**"
    if spec.get("requested_model"):
        model += f" (asked for: {spec.get('requested_model')})"
    lines += [
        f"- **Task:** `{spec.get('name')}`, family `{spec.get('family')}` ({params}); planner: {spec.get('planner')}",
        f"- **Policy model:** {model}",
    ]
    if spec.get("model_note"):
        lines.append(f"- **Model note:** {spec['model_note']}")
    dataset, budget = spec.get("dataset") or {}, spec.get("budget") or {}
    metric = spec.get("success_metric") or {}
    lines += [
        f"- **Environment:** {spec.get('environment')}",
        f"- **Actors:** {_names(spec.get('actors'))}; trained: {_names(spec.get('trained_roles'))}",
        f"- **Reward:** {spec.get('reward')}",
        f"- **Dataset:** {dataset.get('train_items')} train / {dataset.get('eval_items')} eval items, "
        f"seed {dataset.get('seed')}",
        f"- **Success metric:** `{metric.get('name')}`: {metric.get('description')}",
        f"- **Budget:** {budget.get('steps')} steps" + (f", {budget['minutes']} min" if budget.get("minutes") else ""),
        "",
        "### Assumptions",
        "",
    ]
    assumptions = spec.get("assumptions") or []
    return lines + ([f"- {a}" for a in assumptions] if assumptions else ["- none"]) + [""]


def _generated(files: Sequence[tuple[str, int]], history: Sequence[tuple[str, str]]) -> list[str]:
    lines = ["## What was generated", ""]
    lines += _table(("file", "lines"), [(f"`{name}`", count) for name, count in files]) if files else ["Nothing.", ""]
    if history:
        lines += [f"The workspace is a git repo with {len(history)} commits; the latest:", ""]
        lines += [f"- `{sha[:8]}` {subject}" for sha, subject in history[:15]] + [""]
    return lines


def _validation(result: Mapping[str, Any] | None) -> list[str]:
    lines = ["## Validation", ""]
    if not result:
        return lines + ["Not run.", ""]
    verdict = "passed" if result.get("ok") else "FAILED"
    lines += [f"In the `{result.get('backend', '?')}` sandbox: **{verdict}**.", ""]
    checks = result.get("checks") or []
    rows = [(c.get("name"), "ok" if c.get("ok") else "FAILED", c.get("summary")) for c in checks]
    return lines + _table(("check", "result", "how"), rows)


def _red_team(result: Mapping[str, Any] | None) -> list[str]:
    lines = ["## Red team of the reward", ""]
    if not result:
        return lines + ["Not run.", ""]
    lines += [f"Verdict: **{result.get('verdict')}**: {result.get('reason', '')}", ""]
    reference = result.get("reference")
    policies = ([reference] if isinstance(reference, Mapping) else []) + list(result.get("policies") or [])
    rows = [
        (p.get("name"), p.get("description"), _reward(p.get("mean")), p.get("episodes"), p.get("errors"))
        for p in policies
    ]
    return lines + _table(("policy", "what it does", "mean reward", "episodes", "errors"), rows)


def _repairs(repairs: Sequence[Mapping[str, Any]]) -> list[str]:
    lines = ["## Repairs", ""]
    if not repairs:
        return lines + ["None were needed.", ""]
    rows = [(r.get("node"), r.get("attempt"), r.get("error"), r.get("summary")) for r in repairs]
    return lines + _table(("node", "attempt", "what failed", "what was changed"), rows)


def _training(summary: Mapping[str, Any], training: Mapping[str, Any] | None, has_curves: bool) -> list[str]:
    lines = ["## Training", ""]
    if not training:
        return lines + ["Training did not start.", ""]
    server = training.get("server") or {}
    if server:
        lines.append(f"- **Server:** {server.get('model')} at {server.get('url')} ({server.get('how', 'started')})")
    if training.get("sandbox"):
        lines.append(f"- **Client sandbox:** {training['sandbox']}")
    lines += [
        f"- **Outcome:** {training.get('status')}: {training.get('reason', '')}",
        f"- **Steps:** {summary['steps']}; time to the first training step: "
        f"{_duration(summary['time_to_first_step_s'])}",
        f"- **Train reward:** {_reward(summary['first_train_reward'])} at the first step, "
        f"{_reward(summary['last_train_reward'])} at the last; "
        f"last held-out mean reward: {_reward(summary['last_eval_reward'])}",
        "",
    ]
    if has_curves:
        lines += ["![reward and eval curves](curves.png)", ""]
    actions = training.get("actions") or []
    if actions:
        lines += ["### Trouble seen and what was done", ""]
        rows = [(a.get("step"), a.get("trouble"), a.get("detail"), a.get("kind"), a.get("why")) for a in actions]
        lines += _table(("step", "trouble", "detail", "action", "why"), rows)
    swaps = training.get("hot_swaps") or []
    if swaps:
        lines += ["### Client hot-swaps (the server was never restarted)", ""]
        swapped = [(s.get("generation"), f"`{s.get('client')}`", f"{s.get('latency_s')} s") for s in swaps]
        lines += _table(("client generation", "file", "edit -> first episode"), swapped)
    return lines


def render(
    data: ReportInput,
    summary: Mapping[str, Any],
    files: Sequence[tuple[str, int]],
    *,
    has_curves: bool,
    history: Sequence[tuple[str, str]] = (),
) -> str:
    """The whole report.md."""
    name = (data.spec or {}).get("name") or data.run_id or "run"
    head = [
        f"# Vibe run `{name}`",
        "",
        f"**Status: {data.status}**" + (f": {data.message}" if data.message else ""),
        "",
        f"Time to the first training step: **{_duration(summary['time_to_first_step_s'])}**; "
        f"total: **{_duration(summary['total_s'])}**; steps: {summary['steps']}; repairs: {summary['repairs']}.",
        "",
        f"Held-out result: **{summary['outcome_line']}**.",
        "",
    ]
    timings = [(node, _duration(t.get("elapsed_s"))) for node, t in data.timings.items()]
    tail = ["## Time per node", "", *_table(("node", "elapsed"), timings)] if timings else []
    training = data.training or {}
    body = outcome_section(training.get("outcome"), data.spec, training.get("policy_outcomes")) if data.training else []
    body += _asked(data) + _generated(files, history) + _validation(data.validation) + _red_team(data.red_team)
    body += _repairs(data.repairs) + _training(summary, data.training, has_curves)
    return "\n".join(head + body + tail).rstrip() + "\n"
