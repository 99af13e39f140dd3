"""A local pool member: an `agentjet server start` subprocess the campaign starts, restarts and stops.

Each lives in `<runtime>/<name>/`: `token` (generated once, mode 600, handed to the server with
`--token-file`, never in argv), `server.log` (stdout and stderr of every start, appended),
`train.yaml` (the TrainConfig it starts with), `server.pid` (its process) and `state/` (its
`--state-dir`). It listens on a free port of 127.0.0.1 (a new one when the old port is taken).
Every start, the first of a campaign session included, deletes `state/` first: a new journal,
adapter and optimiser, which is how a trial gets a fresh adapter (the core has no reset
endpoint). A server left in `state/` by a session that was `kill -9`ed would restore that run's
adapter and step, so it is never reused, and one still shutting down (named by `server.pid`) is
stopped before its dir is deleted. The process is the core's `ServerProcess`: its own session (a
Ctrl-C in the terminal reaches the campaign, which stops it), and it dies with the campaign
process if that dies without stopping it.
"""

from __future__ import annotations

import logging
import os
import shutil
import time
from collections.abc import Callable
from pathlib import Path

import yaml

from agentjet.a3r.errors import PoolError
from agentjet.a3r.pool.freshness import stale_reason
from agentjet.a3r.pool.members import MemberState, PoolMember, probe_health
from agentjet.core import (
    AgentJetError,
    ServerProcess,
    ServerStartFailed,
    TrainConfig,
    log_tail,
    process_mentions,
    stop_process_group,
)

__all__ = ["LocalMember", "Progress"]

log = logging.getLogger(__name__)
Progress = Callable[[str], None]
# machine settings a server keeps (where models are cached); every other AGENTJET_* is the campaign's, not its
_KEEP_ENV = {"AGENTJET_CACHE_DIR"}
_STOP_GRACE_S = 15.0
_PROGRESS_EVERY_S = 10.0


def _engine_ready(state: str) -> bool:
    return state not in ("offline", "booting")


class LocalMember(PoolMember):
    """One `agentjet server start` subprocess on 127.0.0.1, owned by the pool."""

    kind = "local"
    restartable = True

    def __init__(self, name: str, home: Path, *, model: str, config: TrainConfig | None = None) -> None:
        home.mkdir(parents=True, exist_ok=True)
        token_path = home / "token"
        self.home = home
        self.state_dir = home / "state"
        self.config_path = home / "train.yaml"
        self.log_path = home / "server.log"
        self.pid_path = home / "server.pid"
        self._config = config or TrainConfig()
        self._server = ServerProcess(
            model, self.state_dir, log_path=self.log_path, token_file=token_path,
            token=token_path.read_text().strip() if token_path.is_file() else None,
            flags=["--config", str(self.config_path), "--log-level", "WARNING"],
            env={k: v for k, v in os.environ.items() if not k.startswith("AGENTJET_") or k in _KEEP_ENV},
            cwd=home, before_start=self._prepare_start, on_start=self._started,
        )  # fmt: skip
        super().__init__(name, "", self._server.token, model)

    @property
    def pid(self) -> int | None:
        return self._server.pid

    def spawn(self) -> None:
        """Start the server process on an empty state dir (returns at once; `wait_ready` waits for it)."""
        with self._lock:
            self.state = MemberState.STARTING
            self._server.model = str(self.model)
            self._server.start()

    def _prepare_start(self) -> None:  # before every start, a retry on a new port included
        self._clear_state()
        self.config_path.write_text(yaml.safe_dump(self._config.model_dump(mode="json"), sort_keys=False))

    def _started(self, server: ServerProcess) -> None:
        self.url = server.url
        self.pid_path.write_text(f"{server.pid}\n")
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
        if pid == self._server.pid or not process_mentions(pid, str(self.state_dir)):
            return  # ours (`_terminate` waited for it, or it exited), gone, or a pid reused by another process
        log.warning("stopping a server left by an earlier campaign process name=%s pid=%d", self.name, pid)
        try:
            stop_process_group(pid, grace_s=_STOP_GRACE_S, kill_wait_s=_STOP_GRACE_S)
        except OSError as exc:
            raise PoolError(
                f"server {self.name}: cannot stop the server (pid {pid}) left on {self.state_dir}: {exc}"
            ) from exc

    def wait_ready(self, deadline: float, progress: Progress | None = None) -> None:
        """Until /health says the engine is ready; PoolError (with the log's tail) if it exits, its model fails
        to load or time runs out. A port taken between choosing it and the server's bind is retried."""

        def check() -> None:
            if self.state is MemberState.STOPPED:
                raise PoolError(f"server {self.name} was stopped while starting")

        def said(state: str | None, _waited_s: float) -> None:
            if progress is not None:
                progress(f"{self.name}: still starting ({f'state {state}' if state else 'not answering yet'})")

        try:
            self._server.wait_ready(
                deadline, ready=_engine_ready, check=check, progress=said, progress_every_s=_PROGRESS_EVERY_S
            )
        except ServerStartFailed as exc:
            raise PoolError(f"server {self.name}: {exc}") from exc
        self.mark_up()

    def is_dead(self) -> bool:
        return not self._server.is_alive()

    def probe(self) -> str | None:
        """The process first: a refused connection from a server that just died says less than its exit."""
        reason = None if self.is_dead() else probe_health(self.url)
        if self.is_dead():
            return f"process {self.pid} {self._server.exit_text()}; last log lines:\n{log_tail(self.log_path, 5)}"
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
            self._server.stop(grace_s=_STOP_GRACE_S)
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
            self._server.stop(grace_s=_STOP_GRACE_S)

    def signal_stop(self) -> None:
        """SIGTERM without waiting (the pool stops every server at once, then waits in `stop`)."""
        self._server.signal_stop()
