"""`agentjet client run --sandbox docker|bwrap`: the same run, re-executed inside a sandbox.

The host never imports the task (a client file is untrusted code): it stages the file's folder into the
sandbox's work dir, starts a `SwarmBridge` to each server (the token stays here) and runs
`python3 -m agentjet client run ... --json` inside, which reaches the server at
`http://127.0.0.1:PORT` through the forwarder (several servers, `--server NAME=URL` each: one port
each). The inner summary comes back as JSON on stdout.
Ctrl-C stops the sandbox; the bridge then aborts the episodes it left open. Vibe's sandboxed client
runs the same way with its workspace staged instead (`files=`); `client_run_args` and
`settings_flags` are the `client run` command line every caller builds.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from agentjet.core import ConfigError
from agentjet.sandbox.api import Sandbox
from agentjet.sandbox.bridge import SwarmAccess
from agentjet.sandbox.errors import SandboxError
from agentjet.sandbox.folder import folder_files
from agentjet.sandbox.limits import Limits, parse_size
from agentjet.sandbox.result import RunResult
from agentjet.tasks.play.runner import RunSettings

__all__ = [
    "PYTHON_ENV",
    "SANDBOXES",
    "SandboxedRun",
    "client_limits",
    "client_run_args",
    "ending",
    "explain",
    "inner_command",
    "parse_summary",
    "port_of",
    "run_in_sandbox",
    "settings_flags",
]

SANDBOXES = ("none", "docker", "bwrap")
_NAMED = re.compile(r"^([A-Za-z_][A-Za-z0-9_.-]*)=(.+)$")


@dataclass(frozen=True)
class SandboxedRun:
    """What came back: the inner run's summary (None if it printed none) and the sandbox's result."""

    summary: dict[str, Any] | None
    result: RunResult


def client_limits(*, memory: str = "2g", timeout_s: float = 24 * 3600.0) -> Limits:
    """Limits for a whole client run: room for openai/LangChain and concurrent episodes, long wall time."""
    return Limits(memory_bytes=parse_size(memory), pids=512, cpus=1.0, timeout_s=timeout_s, output_bytes=16 * 1024**2)


def _named_servers(servers: Sequence[str]) -> list[tuple[str | None, str]]:
    """(server name or None, url) of each `--server`: one plain URL alone, else NAME=URL each, on distinct
    ports (inside the sandbox each server is reached on its own port of the sandbox's loopback)."""
    if not servers:
        raise ConfigError("--sandbox needs a --server URL (or one NAME=URL per server)")
    named: list[tuple[str | None, str]] = []
    for spec in servers:
        match = _NAMED.match(spec)
        name, url = (match.group(1), match.group(2)) if match and "://" not in match.group(1) else (None, spec)
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ConfigError(f"--server {url!r} must look like http://HOST:PORT")
        named.append((name, url))
    if len(named) > 1 and any(name is None for name, _ in named):
        raise ConfigError(f"several servers need a NAME=URL each; got {list(servers)}")
    ports = [port_of(url) for _, url in named]
    if len(set(ports)) != len(ports):
        raise ConfigError(f"--sandbox reaches each server on its own port; these share one: {list(servers)}")
    return named


def _staged_task(task: str) -> tuple[str, dict[str, str | bytes] | None]:
    """(the task as the inner run names it, files to stage): a client file comes with its folder
    (sibling modules, `data/`), minus version control, virtual environments and caches."""
    path = Path(task)
    if task.endswith(".py") or "/" in task:
        if not path.is_file():
            raise ConfigError(f"client file {task!r} does not exist")
        files: dict[str, str | bytes] = dict(folder_files(path.resolve().parent))
        return path.name, files
    return task, None


def settings_flags(settings: RunSettings, params: Sequence[str] = ()) -> list[str]:
    """The `client run` flags that reproduce `settings` and `params`."""
    argv = ["--episodes", str(settings.episodes), "--concurrency", str(settings.concurrency)]
    argv += ["--eval-episodes", str(settings.eval_episodes), "--seed", str(settings.seed)]
    for flag, value in (
        ("--eval-every", settings.eval_every),
        ("--group-size", settings.group_size),
        ("--update-every", settings.update_every),
    ):
        if value is not None:
            argv += [flag, str(value)]
    if settings.eval_first:
        argv.append("--eval-first")
    if settings.base_model:
        argv.append("--base-model")
    for param in params:
        argv += ["--param", param]
    return argv


def client_run_args(
    task: str, servers: str | Sequence[str], *, params: Sequence[str], settings: RunSettings, log_level: str
) -> list[str]:
    """What follows `client run` for a run of `task` against `servers` (URL, or NAME=URL each) that prints
    its summary as JSON."""
    flags = [a for server in ([servers] if isinstance(servers, str) else servers) for a in ("--server", server)]
    return [task, *flags, "--json", *settings_flags(settings, params), "--log-level", log_level]


def inner_command(
    task: str, servers: str | Sequence[str], *, params: Sequence[str], settings: RunSettings, log_level: str
) -> list[str]:
    """The `client run` the sandbox executes (its own summary as JSON on stdout)."""
    args = client_run_args(task, servers, params=params, settings=settings, log_level=log_level)
    return ["python3", "-m", "agentjet", "client", "run", *args]


def run_in_sandbox(
    task: str,
    *,
    backend: str,
    servers: Sequence[str],
    token: str | None,
    params: Sequence[str] = (),
    settings: RunSettings,
    limits: Limits | None = None,
    log_level: str = "WARNING",
    files: Mapping[str, str | bytes] | None = None,
) -> SandboxedRun:
    """Run the task inside `backend`; raises ConfigError for bad flags, SandboxError (SandboxUnavailable) if
    it cannot run. `files`: what to stage instead of a client file's folder, `task` then naming the client
    inside (vibe stages a whole workspace)."""
    if backend not in SANDBOXES[1:]:
        raise ConfigError(f"unknown sandbox {backend!r}: use {', '.join(SANDBOXES)}")
    named = _named_servers(servers)
    inner_task, staged = (task, files) if files is not None else _staged_task(task)
    inside = [f"http://127.0.0.1:{port_of(url)}" for _, url in named]  # the forwarder listens on each server's port
    command = inner_command(
        inner_task,
        [f"{name}={url}" if name else url for (name, _), url in zip(named, inside, strict=True)],
        params=params,
        settings=settings,
        log_level=log_level,
    )
    sandbox = Sandbox(backend)
    swarm = [SwarmAccess(url, token) for _, url in named]
    result = sandbox.run(command, files=staged, limits=limits or client_limits(), swarm=swarm, env=PYTHON_ENV)
    return SandboxedRun(parse_summary(result.stdout), result)


# the environment of a Python process in a sandbox: unbuffered output, no tokenizer thread pools
PYTHON_ENV = {"PYTHONUNBUFFERED": "1", "TOKENIZERS_PARALLELISM": "false"}


def port_of(url: str) -> int:
    """The server URL's port: the forwarder inside a sandbox listens on the same one."""
    parts = urlsplit(url)
    return parts.port or (443 if parts.scheme == "https" else 80)


def parse_summary(stdout: str) -> dict[str, Any] | None:
    """The inner `--json` summary: the last JSON object on stdout (a client file may print too)."""
    start = stdout.rfind("\n{")
    text = stdout[start + 1 :] if start >= 0 else stdout
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def ending(result: RunResult) -> str:
    """How a sandboxed run ended, in words: its exit status and the limit that stopped it."""
    detail = f": {result.detail}" if result.detail else ""
    return f"exit {result.exit_code}, stopped by {result.stopped_by.value}{detail}"


def explain(run: SandboxedRun) -> SandboxError:
    """Why a sandboxed run gave no summary: the limit that fired, or the tail of its stderr."""
    tail = "\n".join(run.result.stderr.strip().splitlines()[-15:])
    return SandboxError(
        f"the sandboxed client run ended without a summary ({ending(run.result)})" + (f":\n{tail}" if tail else "")
    )
