"""What `agentjet campaign status` and `start --dry-run` show: the trials table and the study setup.

Status reads the repo only (the study, `study.json`, the heartbeat file), never the campaign
process, so it works while a campaign runs, after it stopped, and after a `kill -9`.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import typer

if TYPE_CHECKING:
    from rich.console import RenderableType

    from agentjet.a3r.plan.campaign_plan import CampaignPlan
    from agentjet.a3r.repo import CampaignRepo

__all__ = ["dry_run_text", "first_trials", "show_status", "status_rows"]

_COLUMNS = ("#", "kind", "params", "state", "server", "step", "value", "time")


def first_trials(plan: CampaignPlan, count: int) -> list[dict[str, Any]]:
    """The params the plan's sampler proposes first (an in-memory study: nothing is stored)."""
    import optuna

    from agentjet.a3r.plan.campaign_plan import search_space_distributions
    from agentjet.a3r.session.study import make_sampler

    verbosity = optuna.logging.get_verbosity()
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    try:
        study = optuna.create_study(direction=plan.objective.direction, sampler=make_sampler(plan, parallel=False))
        dists = search_space_distributions(plan)
        return [study.ask(dists).params for _ in range(count)]
    finally:
        optuna.logging.set_verbosity(verbosity)


def dry_run_text(plan: CampaignPlan, pool: str | list[Any] | None) -> str:
    """The study setup and its first trials' params, as `start --dry-run` prints them."""
    from agentjet.a3r.plan.campaign_plan import parse_pool, trial_setup
    from agentjet.a3r.session.study import grid_size
    from agentjet.a3r.trial.records import describe_params

    pool_spec = parse_pool(pool) if pool is not None else plan.pool
    budget = plan.budget
    space = "; ".join(f"{n} {_spec(s.model_dump(exclude_defaults=True))}" for n, s in plan.search_space.items())
    task = plan.task.family or plan.task.workspace or plan.task.client
    size = grid_size(plan)
    trials = budget.trials if size is None else min(size, budget.trials or size)
    count = max(1, min(trials or 5, 5))
    lines = [
        f"plan {plan.name} (stage {plan.stage}): {plan.objective.direction} {plan.objective.metric}",
        f"task {task} {plan.task.params or ''}; model {plan.model}",
        f"search space: {space or '(none: every trial runs the base config)'}",
        f"sampler {plan.sampler.name} (seed {plan.sampler_seed}); pruner {plan.pruner.name}; storage {plan.storage}",
        f"budget: {trials if trials is not None else 'no'} trials, wall clock {budget.wall_clock or 'none'}, "
        f"{budget.steps_per_trial} steps per trial, eval every {budget.eval_every} on {budget.eval_items} items",
        f"pool: {pool_spec.to_plan_value()} ({pool_spec.size} server(s)); "
        f"confirmation: {plan.seeds.confirm} re-run(s) of the best",
        f"first {count} trial(s) as the sampler proposes them:",
    ]
    for number, params in enumerate(first_trials(plan, count)):
        setup = trial_setup(plan, params)
        fresh = " (fresh server/adapter)" if setup.restart else ""
        lines.append(f"  {number}: {describe_params(params)} on {setup.model}{fresh}")
    lines.append("dry run: nothing was started and nothing was written")
    return "\n".join(lines)


def _spec(data: Mapping[str, Any]) -> str:
    if "choices" in data:
        return "{" + ", ".join(map(str, data["choices"])) + "}"
    extra = " log" if data.get("log") else (f" step {data['step']}" if data.get("step") else "")
    return f"[{data.get('low')}, {data.get('high')}]{extra}"


def status_rows(records: Sequence[Mapping[str, Any]], heartbeat: Mapping[str, Any] | None) -> list[list[str]]:
    """One row per trial (the _COLUMNS), live step/value/server from the heartbeat for running trials."""
    from agentjet.a3r.trial.records import describe_params

    live = {int(r["number"]): r for r in (heartbeat or {}).get("running", [])}
    rows = []
    for rec in sorted(records, key=lambda r: int(r["number"])):
        run = live.get(int(rec["number"]), {})
        attrs = rec.get("user_attrs") or {}
        state = str(rec.get("state", ""))
        if state == "FAIL" and rec.get("retried"):
            state = "FAIL (re-queued)"
        value = run.get("value") if run else rec.get("value")
        step = run.get("step") if run else attrs.get("steps_done")
        took = run.get("elapsed_s") if run else rec.get("duration_s")
        rows.append([
            str(rec["number"]), str(rec.get("kind") or "search"), describe_params(rec.get("params") or {}), state,
            str(run.get("server") or rec.get("server") or ""), "" if step is None else str(step),
            "" if value is None else f"{float(value):.4f}", "" if took is None else f"{float(took):.0f} s",
        ])  # fmt: skip
    return rows


def _header(repo: CampaignRepo, beat: Mapping[str, Any] | None, alive: bool, source: str) -> list[str]:
    if alive and beat:
        age = time.time() - float(beat.get("updated_at", time.time()))
        who = f"running (pid {beat.get('pid')}, phase {beat.get('phase')}, heartbeat {age:.0f} s ago)"
    else:
        who = "not running" + (f" (last phase: {beat.get('phase')})" if beat else "")
    lines = [f"campaign {repo.settings.study}: {who}", f"repo {repo.path} (trials from {source})"]
    pool = (beat or {}).get("pool") or []
    if alive and pool:
        lines.append("pool: " + ", ".join(f"{m['name']} {m['state']}{' busy' if m.get('busy') else ''}" for m in pool))
    return lines


def _snapshot(repo: CampaignRepo, maximize: bool) -> tuple[list[str], list[list[str]]]:
    from agentjet.a3r.report.writer import load_records
    from agentjet.a3r.session.lock import is_alive, read_heartbeat

    records, source = load_records(repo)
    beat = read_heartbeat(repo.runtime_dir)
    alive = is_alive(repo.runtime_dir)
    header = [*_header(repo, beat, alive, source), *_summary(records, maximize)]
    return header, status_rows(records, beat if alive else None)


def _summary(records: Sequence[Mapping[str, Any]], maximize: bool) -> list[str]:
    """Trials per state and the best completed search trial so far."""
    from agentjet.a3r.trial.records import describe_params

    states: dict[str, int] = {}
    for rec in records:
        states[str(rec.get("state"))] = states.get(str(rec.get("state")), 0) + 1
    lines = [f"trials: {', '.join(f'{n} {s.lower()}' for s, n in sorted(states.items())) or 'none yet'}"]
    done = [r for r in records if r.get("state") == "COMPLETE" and r.get("kind", "search") == "search"]
    done = [r for r in done if isinstance(r.get("value"), int | float)]
    if done:
        best = (max if maximize else min)(done, key=lambda r: float(r["value"]))
        params = describe_params(best.get("params") or {})
        lines.append(f"best so far: trial {best['number']} -> {float(best['value']):.4f} ({params})")
    return lines


def _plain(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    table = [list(_COLUMNS), *rows]
    widths = [max(len(r[i]) for r in table) for i in range(len(_COLUMNS))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(r, widths, strict=True)).rstrip() for r in table]
    return "\n".join([*header, "", *(lines if rows else ["no trials yet"])])


def _rich(header: Sequence[str], rows: Sequence[Sequence[str]]) -> RenderableType:
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    table = Table(*_COLUMNS, header_style="bold")
    colours = {"COMPLETE": "green", "RUNNING": "cyan", "PRUNED": "yellow", "WAITING": "dim"}
    for row in rows:
        style = colours.get(row[3], "red" if row[3].startswith("FAIL") else "")
        table.add_row(*row, style=style)
    return Group(*(Text(line) for line in header), table)


def show_status(repo: CampaignRepo, *, once: bool, interval_s: float) -> None:
    """Plain text once when stdout is not a terminal or with `once`; else a live table until the campaign ends."""
    from agentjet.a3r.session.lock import is_alive

    maximize = repo.load_plan().objective.direction == "maximize"
    if not sys.stdout.isatty():
        typer.echo(_plain(*_snapshot(repo, maximize)))
        return
    from rich.console import Console
    from rich.live import Live

    console = Console()
    if once or not is_alive(repo.runtime_dir):
        console.print(_rich(*_snapshot(repo, maximize)))
        return
    with Live(_rich(*_snapshot(repo, maximize)), console=console, refresh_per_second=4) as live:
        while is_alive(repo.runtime_dir):
            time.sleep(interval_s)
            live.update(_rich(*_snapshot(repo, maximize)))
        live.update(_rich(*_snapshot(repo, maximize)))
