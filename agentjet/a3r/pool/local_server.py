"""A local pool member: an `agentjet server start` subprocess the campaign starts, restarts and stops.

Each lives in `<runtime>/<name>/`: `token` (generated once, mode 600, handed to the server in
the environment, never in argv), `server.log` (stdout and stderr of every start, appended),
`train.yaml` (the TrainConfig it starts with), `server.pid` (its process) and `state/` (its
`--state-dir`). It listens on a free port of 127.0.0.1 (a new one when the old port is taken).
Every start, the first of a campaign session included, deletes `state/` first: a new journal,
adapter and optimiser, which is how a trial gets a fresh adapter (the core has no reset
endpoint). A server left in `state/` by a session that was `kill -9`ed would restore that run's
adapter and step, so it is never reused, and one still shutting down (named by `server.pid`) is
stopped before its dir is deleted. The server runs in its own session (a Ctrl-C in the terminal
reaches the campaign, which stops it) under `agentjet.a3r.pool.server_process`, which ends it if the
campaign process dies without stopping it.
"""

from __future__ import annotations

import contextlib
import logging
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO

import psutil
import yaml

from agentjet.a3r.errors import PoolError
from agentjet.a3r.pool.freshness import stale_reason
from agentjet.a3r.pool.members import MemberState, PoolMember, health_state, probe_health
from agentjet.core import AgentJetError, TrainConfig

__all__ = ["LocalMember", "Progress", "free_port", "log_tail"]

log = logging.getLogger(__name__)
Progress = Callable[[str], None]
# machine settings a server keeps (where models are cached); every other AGENTJET_* is the campaign's, not its
_KEEP_ENV = {"AGENTJET_CACHE_DIR"}
_STOP_GRACE_S = 15.0
_PROGRESS_EVERY_S = 10.0
_PORT_TAKEN = ("address already in use", "errno 98")


def free_port() -> int:
    """A port of 127.0.0.1 nobody listens on now (the server binds it a moment later)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def log_tail(path: Path, lines: int = 15) -> str:
    """The last lines of a log file ('' if there is none)."""
    if not path.is_file():
        return ""
    with path.open("rb") as handle:
        handle.seek(max(0, path.stat().st_size - 32 * 1024))
        text = handle.read().decode(errors="replace")
    return "\n".join(text.splitlines()[-lines:])


def _write_private(path: Path, text: str) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as handle:
        handle.write(text)
    path.chmod(0o600)


class LocalMember(PoolMember):
    """One `agentjet server start` subprocess on 127.0.0.1, owned by the pool."""

    kind = "local"
    restartable = True

    def __init__(self, name: str, home: Path, *, model: str, config: TrainConfig | None = None) -> None:
        home.mkdir(parents=True, exist_ok=True)
        token_path = home / "token"
        if token_path.is_file():
            token = token_path.read_text().strip()
        else:
            token = "ajt_" + secrets.token_urlsafe(24)
            _write_private(token_path, token)
        super().__init__(name, "", token, model)
        self.home = home
        self.state_dir = home / "state"
        self.config_path = home / "train.yaml"
        self.log_path = home / "server.log"
        self.pid_path = home / "server.pid"
        self._config = config or TrainConfig()
        self._process: subprocess.Popen[bytes] | None = None
        self._port: int | None = None

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None else None

    def spawn(self) -> None:
        """Start the server process on an empty state dir (returns at once; `wait_ready` waits for it)."""
        with self._lock:
            self.state = MemberState.STARTING
            self._clear_state()
            self._port = self._port or free_port()
            self.url = f"http://127.0.0.1:{self._port}"
            self.config_path.write_text(yaml.safe_dump(self._config.model_dump(mode="json"), sort_keys=False))
            command = [
                *(sys.executable, "-m", "agentjet.a3r.pool.server_process", "--parent-pid", str(os.getpid()), "--"),
                *("server", "start", "--model", str(self.model), "--host", "127.0.0.1", "--port", str(self._port)),
                *("--state-dir", str(self.state_dir), "--config", str(self.config_path), "--log-level", "WARNING"),
            ]
            env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTJET_") or k in _KEEP_ENV}
            env["AGENTJET_TOKEN"] = str(self.token)
            with self.log_path.open("ab") as log_file:
                _log_line(log_file, f"--- {time.strftime('%Y-%m-%d %H:%M:%S')} start model={self.model} {self.url}")
                self._process = subprocess.Popen(
                    command, stdin=subprocess.DEVNULL, stdout=log_file, stderr=subprocess.STDOUT,
                    env=env, cwd=self.home, start_new_session=True,
                )  # fmt: skip
            self.pid_path.write_text(f"{self._process.pid}\n")
            self.fresh = True

    def _clear_state(self) -> None:
        """Delete `state/` (after stopping a server an earlier campaign process left on it); PoolError if it stays."""
        self._stop_leftover()
        try:
            shutil.rmtree(self.state_dir)
        except FileNotFoundError:
            pass
        except OSError as exc:
            raise PoolError(f"server {self.name}: cannot delete its old state dir {self.state_dir}: {exc}") from exc

    def _stop_leftover(self) -> None:
        """The server `server.pid` names, if it is not this object's and still runs on this state dir: a
        `kill -9`ed campaign's server shutting down, which could still write into the new server's dir."""
        try:
            pid = int(self.pid_path.read_text())
        except (OSError, ValueError):
            return
        if self._process is not None and self._process.pid == pid:
            return  # ours: `_terminate` waited for it, or it exited
        try:
            leftover = psutil.Process(pid)
            if str(self.state_dir) not in leftover.cmdline():
                return  # the pid was reused by another process
            log.warning("stopping a server left by an earlier campaign process name=%s pid=%d", self.name, pid)
            os.killpg(pid, signal.SIGTERM)
            try:
                leftover.wait(timeout=_STOP_GRACE_S)
            except psutil.TimeoutExpired:
                os.killpg(pid, signal.SIGKILL)
                leftover.wait(timeout=_STOP_GRACE_S)
        except (psutil.NoSuchProcess, ProcessLookupError):
            return
        except (psutil.Error, OSError) as exc:
            raise PoolError(
                f"server {self.name}: cannot stop the server (pid {pid}) left on {self.state_dir}: {exc}"
            ) from exc

    def wait_ready(self, deadline: float, progress: Progress | None = None) -> None:
        """Until /health says the engine rolls; PoolError (with the log's tail) if it exits or time runs out.

        A port taken between `free_port` and the server's bind is retried once on a new port."""
        said = time.monotonic()
        while True:
            if self.state is MemberState.STOPPED:
                raise PoolError(f"server {self.name} was stopped while starting")
            state, detail = health_state(self.url, timeout_s=2.0)
            if state is not None and state not in ("offline", "booting"):
                self.mark_up()
                return
            if detail == "failed":
                tail = log_tail(self.log_path)
                raise PoolError(f"server {self.name}: its model failed to load; {self.log_path}:\n{tail}")
            reason = f"state {state}" if state is not None else detail
            exited = self._process is not None and self._process.poll() is not None
            if exited and any(p in log_tail(self.log_path, 5).lower() for p in _PORT_TAKEN):
                self._port = None
                self.spawn()
                continue
            if exited:
                raise PoolError(f"server {self.name} exited while starting ({self._exit_text()}); "
                                f"{self.log_path}:\n{log_tail(self.log_path)}")  # fmt: skip
            if time.monotonic() > deadline:
                raise PoolError(f"server {self.name} was not ready in time ({reason}); see {self.log_path}")
            if progress is not None and time.monotonic() - said >= _PROGRESS_EVERY_S:
                progress(f"{self.name}: still starting ({reason})")
                said = time.monotonic()
            time.sleep(0.2)

    def _exit_text(self) -> str:
        code = self._process.poll() if self._process is not None else None
        if code is None:
            return "running"
        return f"killed by signal {-code}" if code < 0 else f"exit code {code}"

    def is_dead(self) -> bool:
        return self._process is None or self._process.poll() is not None

    def probe(self) -> str | None:
        """The process first: a refused connection from a server that just died says less than its exit."""
        reason = None if self.is_dead() else probe_health(self.url)
        if self.is_dead():
            return f"process {self.pid} {self._exit_text()}; last log lines:\n{log_tail(self.log_path, 5)}"
        return reason

    def reset_for_trial(self, model: str, config: TrainConfig) -> None:
        """Fresh (its status says untouched) and serving `model`: PUT the config (no trainer built yet);
        else restart on an empty state dir."""
        if self.fresh and self.model == model and not self.is_dead():
            try:
                with self.client() as client:
                    if stale_reason(client.status()) is None:
                        client.configure(config)
                        self.fresh = False
                        return
            except AgentJetError:  # a 409 (trainer built meanwhile) or a lost server: a restart settles both
                pass
        self.restart(model=model, config=config)
        self.fresh = False

    def restart(self, *, model: str | None = None, config: TrainConfig | None = None) -> None:
        """Stop it, start it again on an empty state dir (same port when free) and wait until it rolls."""
        with self._lock:
            if self.state is MemberState.STOPPED:
                raise PoolError(f"server {self.name} was stopped with its pool: it is not restarted")
            self.state = MemberState.STARTING
            self._terminate()
            self.model = model or self.model
            self._config = config or self._config
            self.restarts += 1
            self.spawn()
        try:
            self.wait_ready(time.monotonic() + 600.0)
        except PoolError as exc:
            self.mark_down(str(exc))
            raise
        self.fresh = True

    def stop(self) -> None:
        """SIGTERM, then SIGKILL after a grace period; the process is reaped (no zombie, no orphan)."""
        with self._lock:
            self.state = MemberState.STOPPED
            self._terminate()

    def signal_stop(self) -> None:
        """SIGTERM without waiting (the pool stops every server at once, then waits in `stop`)."""
        if self._process is not None and self._process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self._process.pid, signal.SIGTERM)

    def _terminate(self) -> None:
        process = self._process
        if process is None:
            return
        self.signal_stop()
        try:
            process.wait(timeout=_STOP_GRACE_S)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def _log_line(handle: IO[bytes], text: str) -> None:
    handle.write(text.encode() + b"\n")
    handle.flush()
