"""The swarm server of a vibe run: start one as a subprocess, adopt the one a killed run left, or reuse a URL.

A started server gets a free loopback port, its own state dir in the workspace (`state/`), a
generated token in `state/token` (mode 600, handed over in the environment, never in argv) and
the run's `train.yaml`. `state/launch.json` remembers its pid and URL, so a resumed run (after
`kill -9` of the orchestrator) adopts the server still running instead of starting a second one
on the same state dir. Only the public HTTP API is used to talk to it.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from agentjet.core import AgentJetError, SwarmClient, TokenNotFound
from agentjet.vibe.errors import VibeError

__all__ = [
    "LOGS_DIR",
    "STATE_DIR",
    "Progress",
    "ServerHandle",
    "connect_server",
    "ensure_server",
    "free_port",
    "log_tail",
    "process_mentions",
    "read_launch_file",
    "start_server",
    "stop_server",
    "write_launch_file",
]

log = logging.getLogger(__name__)

Progress = Callable[[str], None]
STATE_DIR = "state"  # the server's state dir, inside the workspace (git-ignored)
LOGS_DIR = "state/logs"  # server and client logs (run state too: ignored)
LAUNCH_FILE = "launch.json"
_PROGRESS_EVERY_S = 5.0


@dataclass
class ServerHandle:
    """A server the run trains on. `process` is set when this process started it; `pid` when it is ours."""

    url: str
    token: str
    model: str
    pid: int | None = None
    process: subprocess.Popen[bytes] | None = None
    state_dir: Path | None = None
    log_path: Path | None = None
    cold_start_s: float | None = None  # process start -> rolling, when started here
    adopted: bool = False
    _client_token: str | None = None

    def client_token(self, name: str) -> str:
        """The token the run's client processes get: a client token named `name` (least privilege: it
        can begin and end only its own episodes), issued once per handle; the previous one of that name
        (a resumed run's) is revoked first. Given a token that cannot issue tokens, that token."""
        if self._client_token is None:
            with self.swarm() as swarm:
                try:
                    with contextlib.suppress(TokenNotFound):
                        swarm.revoke_token(name)
                    self._client_token = str(swarm.create_token(name)["token"])
                except AgentJetError as exc:  # a client token (403), or a server without client tokens
                    log.info("client processes use the run's token: no client token issued (%s)", exc)
                    self._client_token = self.token
        return self._client_token

    @property
    def is_ours(self) -> bool:
        return self.pid is not None

    def is_alive(self) -> bool:
        if self.process is not None:
            return self.process.poll() is None
        return self.pid is not None and _pid_alive(self.pid)

    def swarm(self, *, retries: int = 3, timeout_s: float = 30.0) -> SwarmClient:
        return SwarmClient(self.url, token=self.token, retries=retries, timeout_s=timeout_s)


def process_mentions(pid: int, text: str) -> bool:
    """Whether process `pid` runs with `text` in its command line (guards against a recycled pid)."""
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return False
    return text in cmdline


def _pid_alive(pid: int) -> bool:
    """Running (a zombie, exited but not yet reaped by its parent, is not)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True  # no procfs: trust the signal check
    return stat.rpartition(")")[2].split()[:1] != ["Z"]


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def read_launch_file(workspace: Path) -> dict[str, Any]:
    """What the last launch in this workspace recorded ({} if nothing)."""
    path = workspace / STATE_DIR / LAUNCH_FILE
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def write_launch_file(workspace: Path, **fields: Any) -> None:
    """Merge `fields` into `state/launch.json` (written whole, then renamed)."""
    data = {**read_launch_file(workspace), **fields}
    path = workspace / STATE_DIR / LAUNCH_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, indent=2))
    tmp.replace(path)


def _write_token(path: Path) -> str:
    token = "ajt_" + secrets.token_urlsafe(24)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as handle:
        handle.write(token)
    path.chmod(0o600)
    return token


def _health_state(url: str) -> str | None:
    try:
        body = httpx.get(f"{url}/health", timeout=2.0).json()
    except (httpx.HTTPError, ValueError):
        return None
    state = body.get("state") if isinstance(body, dict) else None
    return state if isinstance(state, str) else None


def connect_server(url: str, token: str | None) -> ServerHandle:
    """Reuse a running server (`--server URL`): its status must answer with this token."""
    token = token or os.environ.get("AGENTJET_TOKEN")
    if not token:
        raise VibeError(f"reusing {url} needs its server token: pass --token or set AGENTJET_TOKEN")
    try:
        with SwarmClient(url, token=token, retries=2, timeout_s=10.0) as client:
            status = client.status()
    except AgentJetError as exc:
        raise VibeError(f"the server at {url} does not answer /swarm/status with this token: {exc}") from exc
    return ServerHandle(url=url.rstrip("/"), token=token, model=str(status.get("model", "?")))


def _adopt(workspace: Path, model: str) -> ServerHandle | None:
    """The server a killed run left running on this workspace's state dir, if it still answers."""
    record = read_launch_file(workspace)
    pid, url, state = record.get("server_pid"), record.get("server_url"), workspace / STATE_DIR
    if not isinstance(pid, int) or not isinstance(url, str) or not process_mentions(pid, str(state)):
        return None
    if _health_state(url) is None:
        return None
    token = (state / "token").read_text().strip()
    log.info("adopting the running server pid=%d url=%s", pid, url)
    return ServerHandle(
        url=url,
        token=token,
        model=str(record.get("model", model)),
        pid=pid,
        state_dir=state,
        log_path=workspace / LOGS_DIR / "server.log",
        adopted=True,
    )


def ensure_server(
    workspace: Path, *, model: str, config_path: Path, progress: Progress, ready_timeout_s: float = 600.0
) -> ServerHandle:
    """The run's own server: adopted if one still runs on `workspace/state`, else started and waited for."""
    adopted = _adopt(workspace, model)
    if adopted is not None:
        progress(f"server already running (pid {adopted.pid}, {adopted.url}): adopted, not restarted")
        return adopted

    def remember(handle: ServerHandle) -> None:  # before it is ready: a resumed run adopts a starting server
        write_launch_file(workspace, server_pid=handle.pid, server_url=handle.url, model=model)

    return start_server(
        workspace / STATE_DIR, workspace / LOGS_DIR / "server.log", model=model, config_path=config_path,
        progress=progress, ready_timeout_s=ready_timeout_s, on_spawn=remember,
    )  # fmt: skip


def start_server(
    state: Path,
    log_path: Path,
    *,
    model: str,
    config_path: Path | None = None,
    progress: Progress = lambda _: None,
    ready_timeout_s: float = 600.0,
    on_spawn: Callable[[ServerHandle], None] | None = None,
    extra_args: Sequence[str] = (),
) -> ServerHandle:
    """`agentjet server start` in its own session on a free loopback port with a fresh token in
    `state/token`, waited for until it rolls; stopped again (and VibeError with its log) if it never does.
    `extra_args` go on its command line (e.g. `--idle-timeout-s 2`; never a token)."""
    state.mkdir(parents=True, exist_ok=True)
    log_path.parent.mkdir(parents=True, exist_ok=True)
    token = _write_token(state / "token")
    url = f"http://127.0.0.1:{free_port()}"
    argv = [sys.executable, "-m", "agentjet.cli.main", "server", "start", "--model", model, "--host", "127.0.0.1"]
    argv += ["--port", url.rpartition(":")[2], "--state-dir", str(state), "--log-level", "WARNING"]
    argv += ["--config", str(config_path)] if config_path is not None else []
    argv += list(extra_args)
    env = {**os.environ, "AGENTJET_TOKEN": token, "TOKENIZERS_PARALLELISM": "false"}
    progress(f"starting a {model} server on {url} (state {state})")
    started = time.monotonic()
    with log_path.open("ab") as sink:
        process = subprocess.Popen(argv, stdout=sink, stderr=subprocess.STDOUT, env=env, start_new_session=True)
    handle = ServerHandle(url, token, model, pid=process.pid, process=process, state_dir=state, log_path=log_path)
    try:
        if on_spawn is not None:
            on_spawn(handle)
        _wait_ready(handle, started, ready_timeout_s, progress)
    except BaseException:
        stop_server(handle)
        raise
    handle.cold_start_s = time.monotonic() - started
    progress(f"server ready in {handle.cold_start_s:.1f} s")
    return handle


def _wait_ready(handle: ServerHandle, started: float, timeout_s: float, progress: Progress) -> None:
    said = started
    while True:
        state = _health_state(handle.url)
        if state == "rolling":
            return
        now = time.monotonic()
        if not handle.is_alive():
            raise VibeError(f"the server exited while starting (see {handle.log_path}):\n{log_tail(handle.log_path)}")
        if now - started > timeout_s:
            raise VibeError(f"the server was not ready after {timeout_s:.0f} s (state {state}); see {handle.log_path}")
        if now - said >= _PROGRESS_EVERY_S:
            progress(f"server {state or 'starting'}... {now - started:.0f} s")
            said = now
        time.sleep(0.1)


def log_tail(path: Path | None, lines: int = 20) -> str:
    """The last lines of a log file ('' if there is none)."""
    if path is None or not path.is_file():
        return ""
    with path.open("rb") as handle:
        handle.seek(max(0, path.stat().st_size - 64 * 1024))
        text = handle.read().decode(errors="replace")
    return "\n".join(text.splitlines()[-lines:])


def stop_server(handle: ServerHandle, timeout_s: float = 30.0) -> None:
    """Stop a server this run owns (SIGTERM, then SIGKILL); a reused one is left alone."""
    if handle.pid is None:
        return
    with contextlib.suppress(ProcessLookupError):
        os.kill(handle.pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout_s
    while handle.is_alive() and time.monotonic() < deadline:
        time.sleep(0.1)
    if handle.is_alive():
        log.warning("server pid=%d ignored SIGTERM for %.0f s: killing it", handle.pid, timeout_s)
        with contextlib.suppress(ProcessLookupError):
            os.kill(handle.pid, signal.SIGKILL)
    if handle.process is not None:
        handle.process.wait(timeout=timeout_s)
