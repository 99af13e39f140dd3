"""`agentjet client run`: run a task family (built-in or a client file) against servers, optionally sandboxed."""

from __future__ import annotations

from types import SimpleNamespace
from typing import TYPE_CHECKING, Annotated, Any

import typer

from agentjet.cli.credentials import TokenFileOption, TokenOption, cli_token
from agentjet.cli.one_shot import fail, setup_logging
from agentjet.core.errors import AgentJetError

if TYPE_CHECKING:
    from agentjet.tasks.play.runner import RunSettings

__all__ = ["client_app"]

client_app = typer.Typer(help="Run task families (built-in or a client file) against servers.", no_args_is_help=True)


@client_app.command("run")
def client_run(
    ctx: typer.Context,
    task: Annotated[str, typer.Argument(help="registered task (word, countdown, ...) or a .py client file")],
    server: Annotated[list[str], typer.Option(help="server URL, or NAME=URL for each server the task names")],
    token: TokenOption = None,
    token_file: TokenFileOption = None,
    concurrency: Annotated[int, typer.Option(min=1, help="episodes in flight at once")] = 4,
    episodes: Annotated[int, typer.Option(min=0, help="train episodes")] = 16,
    eval_every: Annotated[int | None, typer.Option(min=1, help="run the eval split every M train episodes")] = None,
    eval_episodes: Annotated[int, typer.Option(min=1, help="episodes per eval round")] = 8,
    eval_first: Annotated[
        bool, typer.Option(help="an eval round before training: the base policy's score, train episodes alongside")
    ] = False,
    base_model: Annotated[
        bool, typer.Option(help="eval episodes sample the base weights beside the policy (the base's score)")
    ] = False,
    group_size: Annotated[int | None, typer.Option(min=1, help="episodes per task (default: server's, else 8)")] = None,
    update_every: Annotated[
        int | None, typer.Option(min=1, help="agree to an update (all_clients) every U episodes and wait for it")
    ] = None,
    param: Annotated[list[str] | None, typer.Option(help="task parameter key=value (repeatable)")] = None,
    seed: Annotated[int, typer.Option(help="dataset seed")] = 0,
    as_json: Annotated[bool, typer.Option("--json", help="print the summary as JSON on stdout")] = False,
    log_level: Annotated[str, typer.Option(help="DEBUG, INFO, WARNING")] = "WARNING",
    sandbox: Annotated[
        str, typer.Option(help="none, docker or bwrap: run the client sandboxed (one --server)")
    ] = "none",
    sandbox_memory: Annotated[str, typer.Option(help="memory of the sandboxed run (e.g. 2g)")] = "2g",
    sandbox_timeout: Annotated[
        float, typer.Option(min=1, help="wall-clock seconds before the sandbox is killed")
    ] = 86400.0,
) -> None:
    """Run episodes of a task family with a progress bar and a summary; Ctrl-C aborts the open episodes."""
    from agentjet.tasks.play.client_run import client_run as run_task
    from agentjet.tasks.play.run_report import show_summary
    from agentjet.tasks.play.runner import RunSettings

    setup_logging(log_level)
    try:
        token = cli_token(ctx, token, token_file, None)
        settings = RunSettings.from_options(SimpleNamespace(**ctx.params))  # --episodes, --concurrency, ... --seed
        if sandbox == "none":
            summary = run_task(task, servers=server, token=token, params=param or [], settings=settings)
        else:
            summary = _client_run_sandboxed(
                task, sandbox, server, token, param or [], settings, log_level, sandbox_memory, sandbox_timeout
            )
    except (AgentJetError, ValueError, TimeoutError) as exc:
        raise fail(exc) from exc
    raise typer.Exit(show_summary(summary, as_json=as_json))  # JSON or the table; 130 when interrupted


def _client_run_sandboxed(
    task: str,
    backend: str,
    servers: list[str],
    token: str | None,
    params: list[str],
    settings: RunSettings,
    log_level: str,
    memory: str,
    timeout_s: float,
) -> dict[str, Any]:
    """`client run --sandbox`: the inner run's summary; its stderr (logs) is shown here afterwards."""
    from agentjet.tasks.play.sandboxed_run import client_limits, explain, run_in_sandbox

    limits = client_limits(memory=memory, timeout_s=timeout_s)
    typer.secho(f"running {task} in a {backend} sandbox (Ctrl-C stops it)", err=True, fg=typer.colors.CYAN)
    try:
        run = run_in_sandbox(
            task,
            backend=backend,
            servers=servers,
            token=token,
            params=params,
            settings=settings,
            limits=limits,
            log_level=log_level,
        )
    except KeyboardInterrupt:
        typer.secho("interrupted: sandbox stopped, its open episodes aborted", err=True, fg=typer.colors.YELLOW)
        raise typer.Exit(130) from None
    if run.result.stderr.strip():
        typer.echo(run.result.stderr.rstrip(), err=True)
    if run.summary is None:
        raise explain(run)
    return run.summary
