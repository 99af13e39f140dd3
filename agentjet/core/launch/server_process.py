"""One `agentjet server start` child on a free loopback port: its token file, log, readiness wait and stop.

The one way the layers above the core (a vibe run, a campaign's pool, the benchmarks) start a
swarm server of their own. The child is `python -m agentjet server start --model M --host
127.0.0.1 --port P --state-dir D --token-file F` plus the caller's flags, in its own session
(a Ctrl-C in the terminal reaches the caller, which stops it) with stdout and stderr appended to
one log file, with tcmalloc preloaded where the machine has it (`allocator.py`). The admin token goes
to F with mode 600, never on argv or in the environment. A port taken between `free_port` and the
server's bind is retried on a new one. `die_with_parent` runs it under `parent_watch`, so it ends
when its parent dies without stopping it (a vibe run's server is the exception: a resumed run
adopts it). Thread-safety: one owner at a time.
"""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import httpx

from agentjet.core.access.private_files import write_private_file
from agentjet.core.access.tokens import new_admin_token
from agentjet.core.errors import AgentJetError, ServerStartFailed
from agentjet.core.launch.allocator import allocator_library, with_allocator
from agentjet.core.launch.child_process import log_tail, signal_process_group, stop_process_group
from agentjet.core.launch.ports import free_port, port_was_taken
from agentjet.core.sdk.client_core import TOKEN_ENV

__all__ = ["ServerProcess", "is_rolling"]

log = logging.getLogger(__name__)

_POLL_S = 0.1
_PORT_RETRIES = 5
_TAIL_LINES = 20
Progress = Callable[[str | None, float], None]  # (engine state or None when it does not answer yet, seconds waited)


def _child_env(env: Mapping[str, str]) -> dict[str, str]:
    """The server child's environment: no client token, and tcmalloc preloaded where there is one (`allocator.py`).

    A bad AGENTJET_ALLOCATOR preloads nothing here: the child refuses it in one line, in its log."""
    try:
        library = allocator_library(env)
    except AgentJetError:
        library = None
    return with_allocator({k: v for k, v in env.items() if k != TOKEN_ENV}, library)


def is_rolling(state: str) -> bool:
    """Ready once the engine rolls (episodes can begin and nothing is training yet)."""
    return state == "rolling"


class ServerProcess:
    """One `agentjet server start` child: `start()` (returns at once), `wait_ready()`, `stop()`.

    `before_start` runs before every start (a retry on a new port included), `on_start` after each
    (the pid and URL are new then)."""

    def __init__(
        self,
        model: str,
        state_dir: Path,
        *,
        log_path: Path,
        token: str | None = None,
        token_file: Path | None = None,
        flags: Sequence[str] = (),
        port: int | None = None,
        env: Mapping[str, str] | None = None,
        cwd: Path | None = None,
        die_with_parent: bool = True,
        before_start: Callable[[], None] | None = None,
        on_start: Callable[[ServerProcess], None] | None = None,
    ) -> None:
        self.model = model
        self.state_dir = state_dir
        self.log_path = log_path
        self.token = token or new_admin_token()
        self.token_file = token_file or state_dir / "token"
        self.flags = list(flags)
        self.port = port or free_port()
        self.process: subprocess.Popen[bytes] | None = None
        self._log_start = 0  # where the log of the latest start begins
        self._env = _child_env(os.environ if env is None else env)
        self._cwd = cwd
        self._die_with_parent = die_with_parent
        self._before_start = before_start
        self._on_start = on_start

    def __repr__(self) -> str:  # never the token
        return f"ServerProcess(model={self.model!r}, url={self.url!r}, pid={self.pid})"

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def pid(self) -> int | None:
        return self.process.pid if self.process is not None else None

    def argv(self) -> list[str]:
        """The child's command line (no secret in it)."""
        start = [sys.executable, "-m", "agentjet"]
        if self._die_with_parent:
            start = [sys.executable, "-m", "agentjet.core.launch.parent_watch", "--parent-pid", str(os.getpid()), "--"]
        own = ["--model", self.model, "--host", "127.0.0.1", "--port", str(self.port)]
        own += ["--state-dir", str(self.state_dir), "--token-file", str(self.token_file)]
        return [*start, "server", "start", *own, *self.flags]

    def start(self) -> None:
        """Write the token file and fork the server (quick); `wait_ready` waits for it."""
        if self._before_start is not None:
            self._before_start()
        write_private_file(self.token_file, self.token)
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        with self.log_path.open("ab") as sink:
            self._log_start = sink.tell()
            sink.write(f"--- {time.strftime('%Y-%m-%d %H:%M:%S')} start model={self.model} {self.url}\n".encode())
            sink.flush()
            self.process = subprocess.Popen(
                self.argv(), stdin=subprocess.DEVNULL, stdout=sink, stderr=subprocess.STDOUT,
                env=self._env, cwd=self._cwd, start_new_session=True,
            )  # fmt: skip
        log.info("server started pid=%d url=%s log=%s", self.process.pid, self.url, self.log_path)
        if self._on_start is not None:
            self._on_start(self)

    def exit_code(self) -> int | None:
        """None while it runs (or before it started), else its exit status (-N: killed by signal N)."""
        return self.process.poll() if self.process is not None else None

    def exit_text(self) -> str:
        code = self.exit_code()
        if code is None:
            return "running"
        return f"killed by signal {-code}" if code < 0 else f"exit code {code}"

    def is_alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def wait_ready(
        self,
        deadline: float,
        *,
        ready: Callable[[str], bool] = is_rolling,
        check: Callable[[], None] | None = None,
        progress: Progress | None = None,
        progress_every_s: float = 5.0,
    ) -> None:
        """Poll `/health` until `ready(state)`; a lost port is retried on a new one.

        `deadline` is a `time.monotonic()` instant; `check` runs every poll (raise from it to give up);
        `progress` hears how it goes every `progress_every_s`. ServerStartFailed, naming the log and
        quoting its tail, if the server exits, its backend fails to boot, or the deadline passes."""
        started = said = time.monotonic()
        retries = _PORT_RETRIES
        while True:
            if check is not None:
                check()
            health = _health(self.url)
            state = health.get("state") if health is not None else None
            if isinstance(state, str) and ready(state):
                return
            if state == "offline" and health is not None and health.get("status") == "ok":
                raise self._failure("its backend failed to boot (the engine stays offline)")
            if not self.is_alive():
                if retries > 0 and port_was_taken(self._log_of_this_start()):
                    retries -= 1
                    log.info("port %d was taken before the server bound it: starting on another", self.port)
                    self.port = free_port()
                    self.start()
                    continue
                raise self._failure(f"it exited while starting ({self.exit_text()})")
            now = time.monotonic()
            if now > deadline:
                raise self._failure(f"it was not ready after {now - started:.0f} s (state {state or 'no answer'})")
            if progress is not None and now - said >= progress_every_s:
                progress(state if isinstance(state, str) else None, now - started)
                said = now
            time.sleep(_POLL_S)

    def _log_of_this_start(self) -> str:
        with self.log_path.open("rb") as handle:
            handle.seek(self._log_start)
            return handle.read().decode(errors="replace")

    def _failure(self, why: str) -> ServerStartFailed:
        return ServerStartFailed(f"the {self.model} server on {self.url} did not start: {why}; "
                                 f"{self.log_path}:\n{log_tail(self.log_path, _TAIL_LINES)}")  # fmt: skip

    def signal_stop(self) -> None:
        """SIGTERM to its process group without waiting (to stop several servers in parallel, then `stop` each)."""
        if self.process is not None and self.process.poll() is None:
            signal_process_group(self.process.pid, signal.SIGTERM)

    def stop(self, grace_s: float = 15.0) -> None:
        """SIGTERM to its process group, SIGKILL after `grace_s`; the child is reaped. Safe to call twice."""
        if self.process is not None:
            stop_process_group(self.process.pid, process=self.process, grace_s=grace_s)


def _health(url: str) -> dict[str, Any] | None:
    """The `/health` body (public: no token), or None while the server does not answer."""
    try:
        body = httpx.get(f"{url}/health", timeout=2.0).json()
    except (httpx.HTTPError, ValueError):
        return None
    return body if isinstance(body, dict) else None
