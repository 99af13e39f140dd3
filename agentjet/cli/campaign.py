"""`agentjet campaign start|examples|status|resume|stop|report`: A3R campaigns from the terminal.

Exit status: 0 done (or stopped on request: `resume` goes on), 1 the campaign failed, 2 nothing
ran (a bad plan, no such repo, a campaign already running there), 130 interrupted (resumable).
A campaign repo defaults to `campaigns/runs/<plan name>-<YYYYmmdd-HHMMSS>` under the current
folder for `start`, and to the newest repo there for the other commands.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from agentjet.core.errors import AgentJetError
from agentjet.core.launch.interrupts import signals_stop_once

if TYPE_CHECKING:
    from agentjet.a3r.plan.campaign_plan import CampaignPlan
    from agentjet.a3r.repo import CampaignRepo
    from agentjet.a3r.session.timing import CampaignResult

__all__ = ["RUNS_DIR", "campaign_app"]

campaign_app = typer.Typer(
    help="A3R campaigns: a markdown plan -> an Optuna study over a pool of training servers, in a git repo.",
    no_args_is_help=True,
)
RUNS_DIR = Path("campaigns") / "runs"
RepoOption = Annotated[
    Path | None, typer.Option("--repo", help=f"campaign repo (default: the newest under {RUNS_DIR})")
]


def _fail(message: object, code: int = 2) -> typer.Exit:
    typer.secho(f"error: {message}", fg=typer.colors.RED, err=True)
    return typer.Exit(code)


def _say(message: str) -> None:
    typer.echo(f"[{time.strftime('%H:%M:%S')}] {message}", err=True)


_STILL_STOPPING = "still stopping: running trials are being failed and queued, the pool stopped (kill -9 forces it)"


def default_repo(plan_name: str) -> Path:
    return RUNS_DIR / f"{plan_name}-{time.strftime('%Y%m%d-%H%M%S')}"


def _find_repo(repo: Path | None) -> CampaignRepo:
    """The given repo, or the newest under campaigns/runs; a clear error when there is none."""
    from agentjet.a3r.repo import CampaignRepo

    if repo is None:
        found = sorted(
            (p for p in RUNS_DIR.glob("*") if (p / "plan.md").is_file() and (p / "campaign.yaml").is_file()),
            key=lambda p: (p / "campaign.yaml").stat().st_mtime,
        )
        if not found:
            raise _fail(f"no campaign repo under {RUNS_DIR}/: give --repo DIR (or start one: agentjet campaign start)")
        repo = found[-1]
    if not repo.is_dir():
        raise _fail(f"{repo} does not exist: give the folder `agentjet campaign start` made (--repo DIR)")
    try:
        return CampaignRepo(repo)
    except AgentJetError as exc:
        raise _fail(exc) from exc


def _load_plan(plan_path: Path, llm: str | None) -> CampaignPlan:
    from agentjet.a3r.plan.planner import plan_from_file, resolve_planner_llm

    try:
        return plan_from_file(plan_path, llm=resolve_planner_llm(llm))
    except AgentJetError as exc:
        raise _fail(exc) from exc


@campaign_app.command("start")
def start(
    plan_arg: Annotated[
        Path, typer.Argument(metavar="PLAN", help="the plan (markdown with YAML front matter), or an example's name")
    ],
    repo: Annotated[Path | None, typer.Option(help=f"new campaign repo (default {RUNS_DIR}/NAME-TIME)")] = None,
    pool: Annotated[str | None, typer.Option(help="override the plan's pool: local:N or URL[,URL...]")] = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="check the plan, show the first trials, run nothing")
    ] = False,
    llm: Annotated[
        str | None, typer.Option(help="planner LLM for a prose-only plan: litellm model name or OpenAI-compatible URL")
    ] = None,
) -> None:
    """Start a campaign: create its git repo, run the study on the pool, confirm the best, commit the report."""
    from agentjet.a3r.plan.campaign_plan import parse_pool
    from agentjet.a3r.plan.examples import resolve_plan
    from agentjet.a3r.session.campaign import EngineOptions, start_campaign

    try:
        plan_path = resolve_plan(plan_arg)
    except AgentJetError as exc:
        raise _fail(exc) from exc
    plan = _load_plan(plan_path, llm)
    pool_value: str | list[Any] | None = None
    if pool is not None:
        try:
            parse_pool(pool)
        except (AgentJetError, ValueError) as exc:
            raise _fail(f"--pool {pool}: {exc}") from exc
        pool_value = pool
    if dry_run:
        from agentjet.cli.campaign_view import dry_run_text

        typer.echo(dry_run_text(plan, pool_value))
        return
    repo_dir = repo if repo is not None else default_repo(plan.name)
    if repo_dir.exists() and any(p.name != "runtime" for p in repo_dir.iterdir()):
        again = " resume it (agentjet campaign resume --repo DIR), or" if (repo_dir / "plan.md").is_file() else ""
        raise _fail(f"{repo_dir} exists and is not empty:{again} pick another --repo")
    plan_text = plan_path.read_text(encoding="utf-8")
    typer.echo(f"campaign {plan.name}: repo {repo_dir}", err=True)
    options = EngineOptions(pool=pool_value, progress=_say)
    _run(lambda: start_campaign(plan, repo_dir, plan_text=plan_text, options=options), repo_dir)


@campaign_app.command("examples")
def examples() -> None:
    """The example plans shipped with AgentJet: `agentjet campaign start NAME` runs one, and where each file is."""
    from agentjet.a3r.plan.examples import EXAMPLES_DIR, example_names, example_summary

    for name in example_names():
        typer.echo(f"{name:<18} {example_summary(name)}")
    typer.echo(f"files: {EXAMPLES_DIR} (copy one to edit it)")


@campaign_app.command("resume")
def resume(repo: RepoOption = None) -> None:
    """Go on with a stopped or killed campaign: void trials run again, finished ones never do."""
    from agentjet.a3r.session.campaign import EngineOptions, resume_campaign
    from agentjet.a3r.session.lock import CampaignLock

    found = _find_repo(repo)
    probe = CampaignLock(found.runtime_dir)
    try:  # a live campaign process is named (pid, heartbeat) and nothing runs
        probe.acquire()
    except AgentJetError as exc:
        raise _fail(exc) from exc
    probe.release()
    typer.echo(f"resuming {found.settings.study}: repo {found.path}", err=True)
    _run(lambda: resume_campaign(found.path, options=EngineOptions(progress=_say)), found.path)


def _run(session: Any, repo_dir: Path) -> None:
    """Run a campaign session, then write and commit the report; exit with the status above."""
    try:
        with signals_stop_once(_STILL_STOPPING):
            result: CampaignResult = session()
    except KeyboardInterrupt:
        typer.secho(f"interrupted: go on with agentjet campaign resume --repo {repo_dir}", err=True)
        _report_quietly(repo_dir)
        raise typer.Exit(130) from None
    except AgentJetError as exc:  # the plan and the repo were checked: the campaign itself failed
        if (repo_dir / "plan.md").is_file():
            _report_quietly(repo_dir)
        raise _fail(exc, 1) from exc
    report = _report_quietly(repo_dir)
    states = ", ".join(f"{n} {s.lower()}" for s, n in sorted(result.states.items())) or "no trials"
    typer.secho(f"campaign {result.study}: {'finished' if result.finished else 'stopped'} ({states})", bold=True)
    if result.best is not None:
        typer.echo(f"best: trial {result.best['number']} -> {result.best['value']:.4f} {result.best['params']}")
    if report is not None:
        typer.echo(f"verdict: {report.analysis.confirmation.verdict}: {report.analysis.confirmation.reason}")
        typer.echo(f"report: {report.path}")
    if not result.finished:
        typer.echo(f"go on with: agentjet campaign resume --repo {repo_dir}")


def _report_quietly(repo_dir: Path) -> Any:
    """The report after a session; a failure to write it is shown, never hides the session's outcome."""
    from agentjet.a3r.repo import CampaignRepo
    from agentjet.a3r.report.writer import write_report

    try:
        return write_report(CampaignRepo(repo_dir))
    except (AgentJetError, OSError, ValueError) as exc:
        typer.secho(f"warning: the report could not be written: {exc}", fg=typer.colors.YELLOW, err=True)
        return None


@campaign_app.command("status")
def status(
    repo: RepoOption = None,
    once: Annotated[bool, typer.Option("--once", help="print the table once and exit")] = False,
    interval_s: Annotated[float, typer.Option("--interval", min=0.2, help="refresh period of the live table, s")] = 2.0,
) -> None:
    """The trials (number, params, state, server, step, value) and the pool: live in a terminal, else once."""
    from agentjet.cli.campaign_view import show_status

    found = _find_repo(repo)
    try:
        show_status(found, once=once, interval_s=interval_s)
    except KeyboardInterrupt:
        raise typer.Exit(0) from None
    except AgentJetError as exc:
        raise _fail(exc) from exc


@campaign_app.command("stop")
def stop(
    repo: RepoOption = None,
    now: Annotated[
        bool, typer.Option("--now", help="also interrupt running trials (failed, queued for resume)")
    ] = False,
    wait: Annotated[bool, typer.Option(help="wait until the campaign process has exited")] = True,
    timeout_s: Annotated[float, typer.Option("--timeout", min=0, help="give up waiting after this long, s")] = 3600.0,
) -> None:
    """Ask the running campaign to stop: no new trials; running ones finish (or, with --now, are re-queued)."""
    from agentjet.a3r.session.lock import is_alive, request_stop

    found = _find_repo(repo)
    if not is_alive(found.runtime_dir):
        raise _fail(f"no campaign process is running in {found.path} (nothing to stop)", 1)
    request_stop(found.runtime_dir, now=now)
    typer.echo(f"stop requested ({'now' if now else 'drain'}) in {found.path}", err=True)
    if not wait:
        return
    deadline = time.monotonic() + timeout_s
    while is_alive(found.runtime_dir):
        if time.monotonic() > deadline:
            raise _fail(f"the campaign is still running after {timeout_s:.0f} s (the stop request stands)", 1)
        time.sleep(0.5)
    typer.echo(f"stopped; go on with: agentjet campaign resume --repo {found.path}")


@campaign_app.command("report")
def report(repo: RepoOption = None) -> None:
    """Analyse the study now (best config, importance, effects, confirmation) and commit report.md + figures."""
    from agentjet.a3r.report.writer import write_report
    from agentjet.a3r.session.study import dashboard_storage

    found = _find_repo(repo)
    try:
        result = write_report(found)
    except AgentJetError as exc:
        raise _fail(exc) from exc
    c = result.analysis.confirmation
    typer.echo(f"{result.path} ({len(result.analysis.rows)} trials, from {result.source})")
    typer.echo(f"verdict: {c.verdict}: {c.reason}")
    typer.echo(f"commit: {result.commit}" if result.commit else "unchanged since the last report (no commit)")
    typer.echo(f"browse: optuna-dashboard {dashboard_storage(found.settings.storage, found.runtime_dir)}")
