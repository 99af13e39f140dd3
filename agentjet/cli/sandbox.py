"""`agentjet sandbox ...`: build the sandbox image, check which backends work, run a command in one."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import typer

from agentjet.cli.credentials import TokenFileOption, TokenOption, cli_token
from agentjet.core import AgentJetError
from agentjet.sandbox.errors import SandboxError

if TYPE_CHECKING:
    from agentjet.sandbox.limits import Limits
    from agentjet.sandbox.result import RunResult

sandbox_app = typer.Typer(help="Sandboxes for generated and untrusted code (Docker, bubblewrap).", no_args_is_help=True)


def _fail(exc: Exception) -> typer.Exit:
    typer.secho(f"error: {exc}", fg=typer.colors.RED, err=True)
    return typer.Exit(2)


@sandbox_app.command("build")
def build(
    force: Annotated[bool, typer.Option("--force", help="rebuild the rootfs and re-import even if up to date")] = False,
    no_docker: Annotated[bool, typer.Option("--no-docker", help="build the rootfs only (for bwrap)")] = False,
) -> None:
    """Build the sandbox rootfs (debootstrap + pip wheels, root) and import it into the engine, unless up to date."""
    from agentjet.sandbox.docker.image import build as build_image

    try:
        ref = build_image(lambda line: typer.echo(line, err=True), docker=not no_docker, force=force)
    except SandboxError as exc:
        raise _fail(exc) from exc
    typer.echo(ref.tag)


@sandbox_app.command("doctor")
def doctor(as_json: Annotated[bool, typer.Option("--json", help="one JSON object per backend")] = False) -> None:
    """Which backends work here (each runs a probe command), and for each that does not, why and the fix."""
    import dataclasses
    import json

    from agentjet.sandbox.doctor import diagnose

    reports = diagnose()
    if as_json:
        typer.echo(json.dumps([dataclasses.asdict(report) for report in reports], indent=2))
    for report in [] if as_json else reports:
        if report.works:
            typer.secho(f"{report.name:<7} works    {report.detail}", fg=typer.colors.GREEN)
        else:
            typer.secho(f"{report.name:<7} no       {report.reason}", fg=typer.colors.RED)
            typer.echo(f"{'':<7} fix:     {report.fix}")
    working = [report.name for report in reports if report.works]
    if not as_json:
        typer.echo(f"auto picks: {working[0]}" if working else "auto picks: nothing works here")
    raise typer.Exit(0 if working else 1)


# The CLI's exit status when a limit stopped the command (otherwise the command's own, 128+N for signal N).
LIMIT_EXIT_CODES = {
    "file_size": 119,
    "memory": 120,
    "pids": 121,
    "cpu": 122,
    "output": 123,
    "timeout": 124,
    "error": 2,
}


@sandbox_app.command(
    "run",
    epilog="Exit status: the command's (128+N when killed by signal N); when a limit stopped it: "
    + ", ".join(f"{name} {code}" for name, code in LIMIT_EXIT_CODES.items() if name != "error")
    + "; 2 when it could not run.",
)
def run(
    ctx: typer.Context,
    command: Annotated[list[str], typer.Argument(help="the command and its arguments, after --")],
    backend: Annotated[str, typer.Option(help="auto, docker or bwrap")] = "auto",
    memory: Annotated[str | None, typer.Option(help="memory of the whole tree, RAM + swap (default 512m)")] = None,
    pids: Annotated[int | None, typer.Option(help="processes + threads of the whole tree (default 128)")] = None,
    cpus: Annotated[float | None, typer.Option(help="cores' worth of CPU bandwidth (default 1)")] = None,
    cpu_seconds: Annotated[int | None, typer.Option(help="CPU seconds per process (default: no limit)")] = None,
    timeout: Annotated[float | None, typer.Option(help="wall-clock seconds before the kill (default 30)")] = None,
    output: Annotated[str | None, typer.Option(help="output kept per stream; more stops the run (default 1m)")] = None,
    file_size: Annotated[str | None, typer.Option(help="largest file the command may write (default 64m)")] = None,
    workdir_size: Annotated[str | None, typer.Option(help="size of /work, holding a copy of . (default 256m)")] = None,
    swarm: Annotated[str | None, typer.Option(help="swarm server URL the command may reach (no network)")] = None,
    token: TokenOption = None,
    token_file: TokenFileOption = None,
    env: Annotated[list[str] | None, typer.Option("--env", "-e", help="NAME=VALUE for the command (repeat)")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="the whole result as JSON")] = False,
) -> None:
    """Run COMMAND in a sandbox with the current directory copied in as its work dir; print how it ended."""
    from pathlib import Path

    from agentjet.sandbox.api import Sandbox
    from agentjet.sandbox.bridge import SwarmAccess

    try:
        limits = _limits(memory, pids, cpus, cpu_seconds, timeout, output, file_size, workdir_size)
        variables = _env_pairs(env or [])
        sandbox = Sandbox(backend)
        access = SwarmAccess(swarm, cli_token(ctx, token, token_file, None)) if swarm else None
        result = sandbox.run(command, files=Path.cwd(), limits=limits, swarm=access, env=variables)
    except (SandboxError, AgentJetError, ValueError) as exc:
        raise _fail(exc) from exc
    _print_result(result, as_json=as_json)
    raise typer.Exit(_exit_status(result))


def _limits(
    memory: str | None,
    pids: int | None,
    cpus: float | None,
    cpu_seconds: int | None,
    timeout: float | None,
    output: str | None,
    file_size: str | None,
    workdir_size: str | None,
) -> Limits:
    """Limits() with what the user typed on top (sizes through parse_size)."""
    import dataclasses

    from agentjet.sandbox.limits import Limits, parse_size

    given: dict[str, Any] = {
        "memory_bytes": None if memory is None else parse_size(memory),
        "pids": pids,
        "cpus": cpus,
        "cpu_seconds": cpu_seconds,
        "timeout_s": timeout,
        "output_bytes": None if output is None else parse_size(output),
        "file_size_bytes": None if file_size is None else parse_size(file_size),
        "workdir_bytes": None if workdir_size is None else parse_size(workdir_size),
    }
    return dataclasses.replace(Limits(), **{name: value for name, value in given.items() if value is not None})


def _env_pairs(pairs: list[str]) -> dict[str, str]:
    variables: dict[str, str] = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name:
            raise ValueError(f"--env takes NAME=VALUE, got {pair!r}")
        variables[name] = value
    return variables


def _print_result(result: RunResult, *, as_json: bool) -> None:
    """The command's output on our stdout/stderr, then a summary on stderr (or everything as JSON)."""
    import dataclasses
    import json
    import sys

    from agentjet.sandbox.verdict import human_size

    if as_json:
        typer.echo(json.dumps(dataclasses.asdict(result), indent=2))
        return
    sys.stdout.write(result.stdout + ("\n[stdout truncated]\n" if result.stdout_truncated else ""))
    sys.stdout.flush()
    sys.stderr.write(result.stderr + ("\n[stderr truncated]\n" if result.stderr_truncated else ""))
    cpu = "?" if result.cpu_s is None else f"{result.cpu_s:.2f} s"
    peak = "?" if result.peak_memory_bytes is None else human_size(result.peak_memory_bytes)
    color = typer.colors.GREEN if result.ok else typer.colors.YELLOW
    typer.secho(
        f"[{result.backend}] exit status {result.exit_code}, stopped by: {result.stopped_by.value}"
        f" ({result.detail})\n[{result.backend}] wall {result.wall_s:.2f} s, cpu {cpu}, peak memory {peak}",
        fg=color,
        err=True,
    )


def _exit_status(result: RunResult) -> int:
    from agentjet.sandbox.result import StopReason

    if result.stopped_by in (StopReason.EXITED, StopReason.SIGNALED):
        code = result.exit_code or 0
        return 128 - code if code < 0 else code
    return LIMIT_EXIT_CODES[result.stopped_by.value]
