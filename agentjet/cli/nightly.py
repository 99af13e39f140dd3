"""`agentjet nightly run|bisect|report|install|rerecord`: regression benchmarks across commits.

Exit status: 0 nothing regressed (or the command did its job), 1 a regression was found in the
commits just measured, 2 nothing could be judged (a usage mistake, an unknown commit, a broken
history store). Progress goes to stderr; results (a summary, or JSON with `--json`) to stdout.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from agentjet.nightly.detect import Verdict
    from agentjet.nightly.history import History

__all__ = ["nightly_app"]

nightly_app = typer.Typer(
    help="Nightly regression benchmarks: speed and training quality per commit, a history, bisection.",
    no_args_is_help=True,
)
CACHE = Path.home() / ".cache" / "agentjet" / "nightly"
StoreOption = Annotated[
    str, typer.Option("--store", help="history: a SQLite path or URL, or postgresql://... for a team")
]
RepoOption = Annotated[Path, typer.Option("--repo", help="the git repository to measure")]
SuiteOption = Annotated[str, typer.Option("--suite", help="quick (<= 10 min) or full (adds SmolLM2)")]
MetricOption = Annotated[list[str] | None, typer.Option("--metric", help="measure only these metrics (repeatable)")]
RepeatsOption = Annotated[
    int | None, typer.Option("--repeats", min=1, help="samples per metric (default: each metric's)")
]
JsonOption = Annotated[bool, typer.Option("--json", help="print JSON")]
CacheOption = Annotated[Path, typer.Option("--cache", help="worktrees and environments")]
DEFAULT_STORE = str(CACHE / "history.db")


def _fail(message: object) -> typer.Exit:
    typer.secho(f"error: {message}", fg=typer.colors.RED, err=True)
    return typer.Exit(2)


def _progress(message: str) -> None:
    sys.stderr.write(f"[nightly] {message}\n")
    sys.stderr.flush()


def _history(store: str) -> History:
    from agentjet.nightly.history import History

    try:
        return History(store)
    except Exception as exc:  # a bad URL, a locked or corrupt file, an unreachable server: one sentence
        raise _fail(f"cannot open the history store {store}: {exc}") from exc


def _repo(repo: Path) -> Path:
    from agentjet.nightly.worktree import git

    resolved = repo.resolve()
    if not (resolved / ".git").exists():
        raise _fail(f"{repo} is not a git repository")
    return Path(git(resolved, "rev-parse", "--show-toplevel"))


def _verdict_line(verdict: Verdict) -> str:
    effect = "" if verdict.effect is None else f" effect {verdict.effect:+.1%}"
    p = "" if verdict.p_value is None else f" p={verdict.p_value:.2g}"
    return f"{verdict.status:11s} {verdict.metric:36s} {verdict.commit[:10]} {verdict.subject[:50]}{effect}{p}"


@nightly_app.command("run")
def run_command(
    rev: Annotated[
        str, typer.Option("--rev", help="a commit, or a range A..B (every commit after A up to B)")
    ] = "HEAD",
    suite: SuiteOption = "quick",
    metric: MetricOption = None,
    repeats: RepeatsOption = None,
    store: StoreOption = DEFAULT_STORE,
    repo: RepoOption = Path("."),
    cache: CacheOption = CACHE,
    report: Annotated[Path | None, typer.Option("--report", help="also write the dashboard to this folder")] = None,
    as_json: JsonOption = False,
) -> None:
    """Measure REV (or every commit of a range) in its own worktree, store the samples, judge them."""
    from agentjet.nightly.dashboard import analyse_history, write_dashboard
    from agentjet.nightly.detect import flagged
    from agentjet.nightly.machine import fingerprint
    from agentjet.nightly.runner import RunOptions, record_revision
    from agentjet.nightly.suites import probes_for
    from agentjet.nightly.worktree import InfraError, Worktrees, revisions

    root = _repo(repo)
    try:
        probes_for(suite, metric or ())
        chosen = revisions(root, rev)
    except (ValueError, InfraError) as exc:
        raise _fail(exc) from exc
    history = _history(store)
    worktrees = Worktrees(root, cache)
    options = RunOptions(suite=suite, metrics=tuple(metric or ()), repeats=repeats)
    new_ids: set[int | None] = set()
    for index, revision in enumerate(chosen, 1):
        _progress(f"[{index}/{len(chosen)}] {revision.sha[:10]} {revision.subject[:60]}")
        record = record_revision(history, worktrees, revision, options, _progress)
        new_ids.add(record.run_id)
    machine = fingerprint()
    runs, analyses = analyse_history(history, machine=machine, suite=suite)
    regressions = [v for v in flagged(analyses) if v.run_id in new_ids]
    judged = [v for a in analyses for v in a.verdicts if v.run_id in new_ids]
    infra = [r for r in runs if r.run_id in new_ids and r.status == "infra_failure"]
    if report is not None:
        write_dashboard(history, report, machine=machine, suite=suite)
    if as_json:
        typer.echo(
            json.dumps(
                {
                    "machine": machine,
                    "suite": suite,
                    "regressions": [_verdict_dict(v) for v in regressions],
                    "verdicts": [_verdict_dict(v) for v in judged],
                    "infra_failures": [{"commit": r.commit, "error": r.error} for r in infra],
                },
                indent=2,
            )
        )
    else:
        for verdict in judged:
            typer.echo(_verdict_line(verdict))
        for record in infra:
            typer.echo(f"{'infra':11s} {record.commit[:10]} {record.subject[:50]}: {record.error}")
        typer.echo(f"{len(regressions)} regression(s) in {len(chosen)} commit(s); history: {history.url}")
    raise typer.Exit(1 if regressions else 0)


def _verdict_dict(verdict: Verdict) -> dict[str, object]:
    return {
        "metric": verdict.metric,
        "commit": verdict.commit,
        "subject": verdict.subject,
        "status": verdict.status,
        "effect": verdict.effect,
        "p_value": verdict.p_value,
        "reason": verdict.reason,
    }


@nightly_app.command("bisect")
def bisect_command(
    metric: Annotated[str, typer.Argument(help="the metric that regressed, e.g. server.latency_ratio")],
    good: Annotated[str, typer.Option("--good", help="a commit where it was fine")],
    bad: Annotated[str, typer.Option("--bad", help="a later commit where it is bad")] = "HEAD",
    suite: SuiteOption = "quick",
    repeats: RepeatsOption = None,
    repo: RepoOption = Path("."),
    cache: CacheOption = CACHE,
    as_json: JsonOption = False,
) -> None:
    """Find the first commit between --good and --bad where METRIC is bad (`git bisect run`, re-measuring)."""
    from agentjet.nightly.bisect import bisect
    from agentjet.nightly.worktree import InfraError, Worktrees

    root = _repo(repo)
    try:
        result = bisect(
            root, metric, good, bad, worktrees=Worktrees(root, cache), suite=suite, repeats=repeats, progress=_progress
        )
    except (ValueError, InfraError) as exc:
        raise _fail(exc) from exc
    if as_json:
        typer.echo(json.dumps(result.to_dict(), indent=2))
        return
    typer.echo(f"first bad commit: {result.first_bad.sha} {result.first_bad.subject}")
    typer.echo(f"  {metric}: good {result.good} -> bad {result.bad} ({result.metric.unit})")
    for step in result.steps:
        typer.echo(f"  {step['answer']:5s} {step['sha'][:10]} {step['subject'][:50]}: {step['samples']}")
    typer.echo(f"  {len(result.steps)} probe(s), {result.seconds:.0f} s")


@nightly_app.command("report")
def report_command(
    out: Annotated[Path, typer.Option("--out", help="folder for index.html, the plots and summary.md")] = Path(
        "nightly-report"
    ),
    store: StoreOption = DEFAULT_STORE,
    suite: Annotated[str | None, typer.Option("--suite", help="only this suite's runs")] = None,
    machine: Annotated[str | None, typer.Option("--machine", help="fingerprint (default: the busiest)")] = None,
    commit_url: Annotated[
        str | None, typer.Option("--commit-url", help="link template, e.g. https://.../{sha}")
    ] = None,
    as_json: JsonOption = False,
) -> None:
    """Write the static dashboard (one plot per metric over commits) and print the summary."""
    from agentjet.nightly.dashboard import analyse_history, markdown_summary, summary_json, write_dashboard

    history = _history(store)
    try:
        index = write_dashboard(history, out, machine=machine, suite=suite, commit_url=commit_url)
    except ValueError as exc:
        raise _fail(exc) from exc
    runs, analyses = analyse_history(history, machine=machine, suite=suite)
    notes = history.notes()
    if as_json:
        typer.echo(json.dumps(summary_json(runs, analyses, notes=notes), indent=2, default=str))
    else:
        typer.echo(markdown_summary(runs, analyses, notes=notes))
        typer.echo(f"dashboard: {index}")


@nightly_app.command("install")
def install_command(
    at: Annotated[str, typer.Option("--at", help="time of day, HH:MM (24 h, local time)")] = "02:00",
    suite: SuiteOption = "quick",
    store: StoreOption = DEFAULT_STORE,
    repo: RepoOption = Path("."),
    report: Annotated[Path, typer.Option("--report", help="where each night's dashboard goes")] = CACHE / "report",
    backend: Annotated[str, typer.Option("--backend", help="auto, systemd or cron")] = "auto",
) -> None:
    """Run `agentjet nightly run` every night at --at (a systemd timer; cron where systemd is absent)."""
    from agentjet.nightly.schedule import Schedule, install

    root = _repo(repo)
    program = shutil.which("agentjet") or str(Path(sys.executable).with_name("agentjet"))
    command = (program, "nightly", "run", "--suite", suite, "--store", store, "--repo", str(root))
    command += ("--report", str(report.resolve()))
    if backend not in ("auto", "systemd", "cron"):
        raise _fail(f"--backend {backend}: choose auto, systemd or cron")
    try:
        installed = install(Schedule(at=at, command=command, workdir=root, log=CACHE / "nightly.log"), backend=backend)  # type: ignore[arg-type]
    except (ValueError, RuntimeError) as exc:
        raise _fail(exc) from exc
    typer.echo(f"installed ({installed.backend}): {' '.join(command)} every day at {at}")
    for path in installed.files:
        typer.echo(f"  {path}")
    typer.echo(f"  to remove: {installed.how_to_remove}")


@nightly_app.command("rerecord")
def rerecord_command(
    reason: Annotated[str, typer.Option("--reason", help="why the reference curves change (kept in the history)")],
    store: StoreOption = DEFAULT_STORE,
    repo: RepoOption = Path("."),
) -> None:
    """Re-record the training invariants' reference curves from this checkout, and say why in the history."""
    from agentjet.nightly.invariants import record_references
    from agentjet.nightly.worktree import git

    if len(reason.strip()) < 8:
        raise _fail("--reason must say why the references change (at least a few words)")
    root = _repo(repo)
    paths = record_references(reason.strip())
    history = _history(store)
    history.add_note("rerecord", reason.strip(), commit=git(root, "rev-parse", "HEAD"))
    for path in paths:
        typer.echo(f"recorded {path}")
    typer.echo(f"reason kept in {history.url}; commit the new references with the change that explains them")
