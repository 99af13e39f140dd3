"""One client process of a vibe run: the sandbox it runs in, starting it behind its own episode tap, stopping it.

A generated client is untrusted code, so it runs sandboxed (`auto`: the first backend that works,
as `agentjet sandbox doctor` reports). Without a working sandbox the run is refused unless the
user opted out explicitly, and then it says plainly that the client runs unsandboxed on the host.
Every client process gets its own `EpisodeTap` per server, so the episodes it began are known by id;
the tap puts that server's client token on the client's `/swarm` requests, so the client process
itself holds no token (a run whose policies train apart reaches each server through its own tap).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from agentjet.core import TOKEN_ENV, log_tail, process_mentions
from agentjet.sandbox import Sandbox, SandboxUnavailable
from agentjet.tasks.play.runner import RunSettings
from agentjet.tasks.play.sandboxed_run import PYTHON_ENV, client_run_args, settings_flags
from agentjet.vibe.errors import VibeError
from agentjet.vibe.run.client_standby import READY_ENV
from agentjet.vibe.run.episode_tap import EpisodeTap
from agentjet.vibe.run.swarm_server import LOGS_DIR, Progress, ServerHandle

__all__ = [
    "ClientHandle",
    "ClientSettings",
    "Standby",
    "abort_left_open",
    "resolve_sandbox",
    "spawn_standby",
    "start_client",
    "stop_client",
    "stop_stray_client",
]

log = logging.getLogger(__name__)

SANDBOX_CHOICES = ("auto", "docker", "bwrap", "none")


@dataclass(frozen=True)
class ClientSettings:
    """How a client process runs its episodes (the `agentjet client run` flags it gets)."""

    episodes: int
    concurrency: int = 4
    group_size: int | None = None
    eval_every: int | None = None
    eval_episodes: int = 4
    eval_first: bool = False  # the held-out round first (its episodes begun ahead of any train one)
    base_model: bool = False  # eval episodes sample the base weights beside the trained policy
    update_every: int | None = None  # train episodes per round: then wait for the server's update (on-policy)
    seed: int = 0
    params: tuple[str, ...] = ()
    memory: str = "2g"
    timeout_s: float = 24 * 3600.0

    def run_settings(self) -> RunSettings:
        """The settings of the `client run` this process becomes (the fields both have)."""
        return RunSettings.from_options(self)


Upstream = tuple[str | None, ServerHandle]  # (the task's server name, None for a one-server task; the server)


@dataclass
class ClientHandle:
    """A running (or finished) client process and the taps its episodes go through (one per server)."""

    path: Path
    generation: int
    process: subprocess.Popen[bytes]
    taps: dict[str | None, EpisodeTap]
    servers: dict[str | None, ServerHandle]
    log_path: Path
    sandbox: str
    started_at: float  # wall clock
    stopped: bool = field(default=False)

    @property
    def tap(self) -> EpisodeTap:
        """The tap to the run's first server (the one the watcher reads)."""
        return next(iter(self.taps.values()))

    @property
    def exit_code(self) -> int | None:
        return self.process.poll()

    def log_tail(self, lines: int = 20) -> str:
        return log_tail(self.log_path, lines)


def resolve_sandbox(choice: str, *, allow_unsandboxed: bool, progress: Progress) -> str:
    """The backend name the clients run in, or "none" only when the user opted out explicitly."""
    if choice not in SANDBOX_CHOICES:
        raise VibeError(f"unknown sandbox {choice!r}: use {', '.join(SANDBOX_CHOICES)}")
    if choice == "none":
        if not allow_unsandboxed:
            raise VibeError("sandbox 'none' runs generated code on the host: pass the explicit unsandboxed opt-out")
        progress("WARNING: the generated client runs UNSANDBOXED on this host (you opted out of the sandbox)")
        return "none"
    try:
        backend = Sandbox(choice).name
    except SandboxUnavailable as exc:
        if not allow_unsandboxed:
            raise VibeError(
                f"no sandbox can run the generated client here: {exc.reason} Fix: {exc.fix} "
                "(see `agentjet sandbox doctor`); to run it on the host anyway, opt out of the sandbox explicitly"
            ) from exc
        progress(f"WARNING: no sandbox works here ({exc.reason}); the client runs UNSANDBOXED as you asked")
        return "none"
    progress(f"clients run in the {backend} sandbox")
    return backend


def _argv(workspace: Path, client: Path, sandbox: str, urls: Sequence[str], settings: ClientSettings) -> list[str]:
    head = [sys.executable, "-m", _module(sandbox)]
    if sandbox == "none":
        args = client_run_args(
            str(client), urls, params=settings.params, settings=settings.run_settings(), log_level="WARNING"
        )
        return head + args
    head += ["--workspace", str(workspace), "--client", str(client), "--backend", sandbox]
    head += [arg for url in urls for arg in ("--server", url)]
    flags = settings_flags(settings.run_settings(), settings.params)
    return head + flags + ["--memory", settings.memory, "--timeout-s", str(settings.timeout_s)]


def _module(sandbox: str) -> str:
    """The module a client process runs: `agentjet client run` on the host, or the sandboxed client's host side."""
    return "agentjet.tasks.play.client_run" if sandbox == "none" else "agentjet.vibe.run.sandboxed_client"


def _env() -> dict[str, str]:
    """The host's environment minus any token (the taps hold the run's), plus quiet Python settings."""
    return {**{k: v for k, v in os.environ.items() if k != TOKEN_ENV}, **PYTHON_ENV}


def _log_path(workspace: Path, generation: int) -> Path:
    logs = workspace / LOGS_DIR
    logs.mkdir(parents=True, exist_ok=True)
    return logs / f"client-{generation}.log"


@dataclass
class Standby:
    """The next client process, started early and waiting for its arguments (`client_standby.py`)."""

    process: subprocess.Popen[bytes]
    generation: int
    sandbox: str
    ready_file: Path

    def is_ready(self) -> bool:
        """Warm: its imports and the sandbox probe are done."""
        return self.ready_file.exists()

    def wait_ready(self, timeout_s: float) -> bool:
        deadline = time.monotonic() + timeout_s
        while not self.is_ready() and self.process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        return self.is_ready()

    def fits(self, generation: int, sandbox: str) -> bool:
        return self.generation == generation and self.sandbox == sandbox and self.process.poll() is None

    def go(self, args: list[str]) -> subprocess.Popen[bytes]:
        assert self.process.stdin is not None  # spawned with stdin=PIPE
        self.process.stdin.write((json.dumps(args) + "\n").encode())
        self.process.stdin.close()
        return self.process

    def close(self) -> None:
        """Not needed after all: end of input makes it exit."""
        if self.process.stdin is not None and not self.process.stdin.closed:
            with contextlib.suppress(OSError):
                self.process.stdin.close()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=10)


def spawn_standby(workspace: Path, *, sandbox: str, generation: int) -> Standby:
    """Start the process that will be client `generation`: imports and the sandbox probe happen now."""
    argv = [sys.executable, "-m", "agentjet.vibe.run.client_standby", _module(sandbox)]
    argv += [] if sandbox == "none" else [sandbox]
    ready = _log_path(workspace, generation).with_suffix(".ready")
    ready.unlink(missing_ok=True)
    with _log_path(workspace, generation).open("ab") as sink:
        process = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=sink,
            stderr=subprocess.STDOUT,
            env={**_env(), READY_ENV: str(ready)},
            cwd=workspace,
            start_new_session=True,
        )
    return Standby(process, generation, sandbox, ready)


def start_client(
    workspace: Path,
    client: Path,
    *,
    servers: Sequence[Upstream],
    token_name: str,
    sandbox: str,
    settings: ClientSettings,
    generation: int,
    standby: Standby | None = None,
) -> ClientHandle:
    """Start `client` against its servers, each behind a fresh tap holding that server's client token
    `token_name` (in `standby` when it fits); returns at once."""
    if not client.is_file():
        raise VibeError(f"client file {client} does not exist")
    taps: dict[str | None, EpisodeTap] = {}
    try:
        for name, server in servers:
            taps[name] = EpisodeTap(server.url, server.client_token(token_name)).start()
        urls = [f"{name}={tap.url}" if name else tap.url for name, tap in taps.items()]
        argv = _argv(workspace, client, sandbox, urls, settings)
        if standby is not None and standby.fits(generation, sandbox):
            process = standby.go(argv[3:])  # what follows `python -m MODULE`
        else:
            if standby is not None:
                standby.close()
            with _log_path(workspace, generation).open("ab") as sink:
                process = subprocess.Popen(
                    argv,
                    stdout=sink,
                    stderr=subprocess.STDOUT,
                    env=_env(),
                    cwd=workspace,
                    start_new_session=True,
                )
    except BaseException:
        for tap in taps.values():
            tap.close()
        raise
    log.info("client started generation=%d pid=%d sandbox=%s file=%s", generation, process.pid, sandbox, client)
    return ClientHandle(
        client,
        generation,
        process,
        taps,
        dict(servers),
        _log_path(workspace, generation),
        sandbox,
        time.time(),
    )


def stop_client(handle: ClientHandle, *, timeout_s: float = 30.0) -> None:
    """Stop the process (SIGTERM: it aborts its open episodes; SIGKILL after `timeout_s`), then abort
    any episode it began that is still open, on each server, and close its taps. Safe to call twice."""
    if handle.process.poll() is None:
        handle.process.send_signal(signal.SIGTERM)
        try:
            handle.process.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            log.warning("client pid=%d ignored SIGTERM for %.0f s: killing it", handle.process.pid, timeout_s)
            handle.process.kill()
            handle.process.wait(timeout=timeout_s)
    for name, tap in handle.taps.items():
        if not handle.stopped:
            abort_left_open(handle.servers[name], [e.episode_id for e in tap.episodes()])
        tap.close()
    handle.stopped = True


def abort_left_open(server: ServerHandle, episode_ids: Sequence[str], *, newest: int = 64) -> list[str]:
    """Abort those of the newest `newest` episodes that are still open (a killed client leaves some)."""
    aborted = []
    headers = {"Authorization": f"Bearer {server.token}"}
    with httpx.Client(base_url=server.url, headers=headers, timeout=10.0) as http:
        for episode_id in list(episode_ids)[-newest:]:
            try:
                if http.get(f"/swarm/episodes/{episode_id}").json().get("status") != "open":
                    continue
                if http.post(f"/swarm/episodes/{episode_id}/abort").status_code == 200:
                    aborted.append(episode_id)
            except (httpx.HTTPError, ValueError, AttributeError) as exc:  # the server went, or odd reply
                log.debug("abort of left-open episode id=%s skipped: %s", episode_id, exc)
    if aborted:
        log.warning("aborted %d episode(s) a stopped client left open", len(aborted))
    return aborted


def _runs_in(pid: int, workspace: Path) -> bool:
    """Process `pid` is one of this workspace's clients: it runs in it (a standby's arguments came on stdin)."""
    try:
        cwd = Path(os.readlink(f"/proc/{pid}/cwd"))
    except OSError:
        return process_mentions(pid, str(workspace))
    return cwd == workspace.resolve() or process_mentions(pid, str(workspace))


def stop_stray_client(pid: int, workspace: Path, timeout_s: float = 30.0) -> bool:
    """Stop a client a killed orchestrator left running on this workspace (by its recorded pid)."""
    if not _runs_in(pid, workspace):
        return False
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout_s
    while _runs_in(pid, workspace) and time.monotonic() < deadline:
        time.sleep(0.1)
    if _runs_in(pid, workspace):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    log.warning("stopped a client process pid=%d left by an earlier run", pid)
    return True
