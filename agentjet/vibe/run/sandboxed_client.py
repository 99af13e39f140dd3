"""The host side of one sandboxed client process of a vibe run (`python -m agentjet.vibe.run.sandboxed_client`).

`agentjet client run --sandbox` stages the client file alone; a vibe client also needs what lies
beside it (`reward.py`, `data/*.jsonl`). This process stages the workspace's client files and runs
them as that command does (`sandboxed_run.run_in_sandbox`: the inner `client run ... --json` through a
swarm bridge per `--server`; a token, read from AGENTJET_TOKEN, stays on the host: vibe gives none, its
episode taps hold the run's), then writes the inner
summary as JSON on stdout. It runs
as its own process so the orchestrator can stop it (SIGTERM or SIGINT: the sandbox is stopped and
its open episodes aborted) without touching the server. Exit status: 0 with a summary, 1 without
one, 130 when stopped.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
from collections.abc import Sequence
from pathlib import Path
from types import FrameType

from agentjet.core import TOKEN_ENV
from agentjet.sandbox import SandboxError
from agentjet.tasks.play.runner import RunSettings
from agentjet.tasks.play.sandboxed_run import client_limits, ending, run_in_sandbox
from agentjet.vibe.generate.contract import RUN_OUTPUTS, workspace_files

__all__ = ["client_files", "main"]


def client_files(workspace: Path, client: Path) -> tuple[str, dict[str, bytes]]:
    """(the client's name inside the sandbox, files to stage): the workspace minus run state and git.

    A client file outside the workspace is staged at the top under its own name."""
    files = workspace_files(workspace, skip_names=RUN_OUTPUTS)
    client = client.resolve()
    try:
        name = client.relative_to(workspace.resolve()).as_posix()
    except ValueError:
        name = client.name
        files[name] = client.read_bytes()
    return name, files


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m agentjet.vibe.run.sandboxed_client")
    parser.add_argument("--workspace", type=Path, required=True)
    parser.add_argument("--client", type=Path, required=True)
    parser.add_argument(
        "--server", action="append", required=True, help="a URL the bridge forwards to (NAME=URL, one per server)"
    )
    parser.add_argument("--backend", required=True, choices=("docker", "bwrap"))
    parser.add_argument("--episodes", type=int, default=16)
    parser.add_argument("--concurrency", type=int, default=4)
    parser.add_argument("--group-size", type=int, default=None)
    parser.add_argument("--eval-every", type=int, default=None)
    parser.add_argument("--eval-episodes", type=int, default=8)
    parser.add_argument("--eval-first", action="store_true")
    parser.add_argument("--base-model", action="store_true")
    parser.add_argument("--update-every", type=int, default=None)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--param", action="append", default=[])
    parser.add_argument("--memory", default="2g")
    parser.add_argument("--timeout-s", type=float, default=24 * 3600.0)
    return parser


def _interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    signal.signal(signal.SIGTERM, _interrupt)  # stopped like Ctrl-C: the sandbox and its episodes go
    settings = RunSettings.from_options(args)
    task, files = client_files(args.workspace, args.client)
    limits = client_limits(memory=args.memory, timeout_s=args.timeout_s)
    try:
        run = run_in_sandbox(
            task,
            files=files,
            backend=args.backend,
            servers=args.server,
            token=os.environ.get(TOKEN_ENV),
            params=args.param,
            settings=settings,
            limits=limits,
        )
    except KeyboardInterrupt:
        sys.stderr.write("sandboxed client stopped; its open episodes were aborted\n")
        return 130
    except SandboxError as exc:
        sys.stderr.write(f"sandbox error: {exc}\n")
        return 1
    sys.stderr.write(run.result.stderr)
    if run.summary is None:
        sys.stderr.write(f"\nthe sandboxed client ended without a summary: {ending(run.result)}\n")
        return 1
    sys.stdout.write(json.dumps(run.summary) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
