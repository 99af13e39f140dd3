"""`agentjet client run`: flags -> a family, its servers and clients, then one `TaskRunner` run.

Kept apart from the Typer command so the flag rules (which `--server` names a family needs,
`--param` parsing) are plain functions with plain errors (`ConfigError`), testable without a CLI.
`python -m agentjet.tasks.play.client_run TASK --server URL [...]` (`main`) is the same run on the host
without the CLI (vibe's client processes and their standby): the same flags but --sandbox and
--token*, the token from AGENTJET_TOKEN, the same output and exit status.
"""

from __future__ import annotations

import argparse
import os
import re
import signal
import sys
import threading
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from types import FrameType
from typing import Any

from rich.console import Console

from agentjet.core import TOKEN_ENV, AgentJetError, ConfigError, SwarmClient, error_line, log_to_stderr
from agentjet.tasks.play.run_report import show_summary
from agentjet.tasks.play.runner import RunSettings, TaskRunner
from agentjet.tasks.registry import load_family, parse_params

__all__ = ["client_run", "main", "resolve_servers"]

_NAMED = re.compile(r"^([A-Za-z_][A-Za-z0-9_.-]*)=(.+)$")


def resolve_servers(needed: Sequence[str], specs: Sequence[str]) -> dict[str, str]:
    """`--server` values -> {server name: url}. One plain URL serves a single-server family;
    otherwise every server the family names needs a NAME=URL."""
    if not specs:
        raise ConfigError(f"give --server URL (this task needs: {', '.join(needed)})")
    named: dict[str, str] = {}
    plain: list[str] = []
    for spec in specs:
        match = _NAMED.match(spec)
        if match and "://" not in match.group(1):
            named[match.group(1)] = match.group(2)
        else:
            plain.append(spec)
    how = f"this task needs servers {', '.join(needed)} (one --server NAME=URL each, or one URL for one server)"
    if plain:
        if len(specs) == 1 and len(needed) == 1:
            return {needed[0]: plain[0]}
        raise ConfigError(f"{how}; got {list(specs)}")
    unknown = sorted(set(named) - set(needed))
    missing = [name for name in needed if name not in named]
    problems = [f"{what} {', '.join(names)}" for what, names in (("missing", missing), ("unknown", unknown)) if names]
    if problems:
        raise ConfigError(f"{how}: {'; '.join(problems)}")
    return {name: named[name] for name in needed}


def client_run(
    task: str,
    *,
    servers: Sequence[str],
    token: str | None,
    params: Sequence[str] = (),
    settings: RunSettings,
    show_progress: bool = True,
    console: Console | None = None,
) -> dict[str, Any]:
    """Load the task, connect to its servers, run it; returns the summary (Ctrl-C included)."""
    family = load_family(task, parse_params(params))
    urls = resolve_servers(tuple(family.servers), servers)
    with ExitStack() as stack:
        stack.enter_context(_sigterm_interrupts())
        clients = {name: stack.enter_context(SwarmClient(url, token=token)) for name, url in urls.items()}
        runner = TaskRunner(family, clients, settings, show_progress=show_progress, console=console)
        return runner.run()


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m agentjet.tasks.play.client_run")
    parser.add_argument("task", help="registered task (word, countdown, ...) or a .py client file")
    parser.add_argument("--server", action="append", required=True, help="server URL, or NAME=URL")
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--episodes", type=int, default=16)
    parser.add_argument("--eval-every", type=int, default=None)
    parser.add_argument("--eval-episodes", type=int, default=8)
    parser.add_argument("--eval-first", action="store_true", help="an eval round before training (the base policy)")
    parser.add_argument("--base-model", action="store_true", help="eval episodes sample the base weights")
    parser.add_argument("--group-size", type=int, default=None)
    parser.add_argument("--update-every", type=int, default=None)
    parser.add_argument("--param", action="append", default=[])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", action="store_true", dest="as_json")
    parser.add_argument("--log-level", default="WARNING")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """`agentjet client run TASK ...` without the CLI: the run, its summary on stdout, the exit status
    (0; 130 when interrupted; 2 with one `error: <sentence>` line on stderr)."""
    args = _parser().parse_args(argv)
    log_to_stderr(args.log_level)
    try:
        settings = RunSettings.from_options(args)
        token = os.environ.get(TOKEN_ENV) or None
        summary = client_run(args.task, servers=args.server, token=token, params=args.param, settings=settings)
    except (AgentJetError, ValueError, TimeoutError) as exc:
        sys.stderr.write(error_line(exc) + "\n")
        return 2
    except KeyboardInterrupt:  # before the runner took over (it reports its own): what the CLI's Ctrl-C prints
        sys.stderr.write("\nAborted!\n")
        return 1
    return show_summary(summary, as_json=args.as_json)


def _interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


@contextmanager
def _sigterm_interrupts() -> Iterator[None]:
    """`kill PID` stops a run like Ctrl-C does (open episodes aborted), not mid-flight."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, _interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


if __name__ == "__main__":
    sys.exit(main())
