"""The server pool a campaign schedules trials on: starts local servers, watches every member, hands them out.

`ServerPool.from_spec("local:2", runtime_dir, model="tiny")` starts two `agentjet server start`
processes (`agentjet.a3r.pool.local_server`) and waits until both roll; URL members (`pool:
[http://gpu-a:8710]`, token from `$AGENTJET_TOKEN` or the member's `token_env`) are used as
given. A heartbeat thread per member polls it (local: the process, then `GET /health`; remote:
`GET /swarm/status` with its token); a dead process is down at once, an unreachable server after
`misses` heartbeats in a row, each with the reason. With `auto_restart`, a down local member
that no trial holds is restarted. `acquire()` / `release()` hand out members that are up and
free. `close()` (also on leaving `with`, and at interpreter exit) stops every local server.
"""

from __future__ import annotations

import atexit
import logging
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from agentjet.a3r.errors import PoolError
from agentjet.a3r.plan.pool_spec import PoolSpec, parse_pool
from agentjet.a3r.pool.local_server import LocalMember, Progress
from agentjet.a3r.pool.members import MemberState, PoolMember, RemoteMember, SyntheticMember
from agentjet.core import TrainConfig

__all__ = ["PoolMember", "ServerPool"]

log = logging.getLogger(__name__)


def _log_progress(message: str) -> None:
    log.info("%s", message)


class ServerPool:
    """Members plus their heartbeats. Thread-safe: the scheduler's threads acquire and release concurrently."""

    def __init__(
        self, members: Sequence[PoolMember], *, heartbeat_s: float = 2.0, misses: int = 3, auto_restart: bool = True
    ) -> None:
        if not members:
            raise PoolError("a pool needs at least one member")
        self.members = list(members)
        self.heartbeat_s = heartbeat_s
        self.misses = misses
        self.auto_restart = auto_restart
        self._changed = threading.Condition()
        self._closing = threading.Event()
        self._threads = [
            threading.Thread(target=self._heartbeat, args=(m,), name=f"heartbeat-{m.name}", daemon=True)
            for m in self.members
        ]
        for thread in self._threads:
            thread.start()
        atexit.register(self.close)

    @classmethod
    def from_spec(
        cls,
        spec: PoolSpec | str | list[Any],
        runtime_dir: Path,
        *,
        model: str = "tiny",
        config: TrainConfig | None = None,
        start_timeout_s: float = 600.0,
        progress: Progress = _log_progress,
        **options: Any,
    ) -> ServerPool:
        """Start the local servers (in parallel), wait until each rolls, then watch them all.

        `options` go to `ServerPool(...)` (heartbeat_s, misses, auto_restart). On any failure, or
        Ctrl-C while waiting, the servers started so far are stopped before the error propagates."""
        pool_spec = spec if isinstance(spec, PoolSpec) else parse_pool(spec)
        members: list[PoolMember] = []
        try:
            local = [
                LocalMember(f"local-{i}", Path(runtime_dir) / f"local-{i}", model=model, config=config)
                for i in range(pool_spec.local)
            ]
            for member in local:
                members.append(member)
                member.spawn()
                progress(f"{member.name}: starting {model} at {member.url} (pid {member.pid}, log {member.log_path})")
            deadline = time.monotonic() + start_timeout_s
            for member in local:
                member.wait_ready(deadline, progress)
                progress(f"{member.name}: ready at {member.url}")
            for server in pool_spec.servers:
                remote = RemoteMember(server.url, server.token(), server.token_env)
                members.append(remote)
                _first_check(remote, progress)
        except BaseException:
            _stop_all(members)
            raise
        return cls(members, **options)

    @classmethod
    def synthetic(cls, size: int, **options: Any) -> ServerPool:
        """`size` members with no server: for synthetic trials (scheduler bench, tests)."""
        return cls([SyntheticMember(i) for i in range(size)], **options)

    def __enter__(self) -> ServerPool:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def member(self, name: str) -> PoolMember:
        for m in self.members:
            if m.name == name:
                return m
        raise KeyError(f"no pool member {name!r}; members: {', '.join(m.name for m in self.members)}")

    def acquire(self, timeout: float | None = None) -> PoolMember:
        """A member that is up and free, marked busy; PoolError when none frees up within `timeout` s.

        Fresh members (no trial since they started) come first: they need no restart."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._changed:
            while True:
                if self._closing.is_set():
                    raise PoolError("the pool is closed")
                ready = [m for m in self.members if not m.busy and m.usable]
                free = min(ready, key=lambda m: not m.fresh, default=None)
                if free is not None:
                    free.busy = True
                    return free
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    raise PoolError(f"no pool server was free and healthy within {timeout:.1f} s: {self.describe()}")
                self._changed.wait(0.5 if left is None else min(left, 0.5))  # health changes are polled

    def release(self, member: PoolMember) -> None:
        with self._changed:
            member.busy = False
            self._changed.notify_all()

    @contextmanager
    def lease(self, timeout: float | None = None) -> Iterator[PoolMember]:
        member = self.acquire(timeout)
        try:
            yield member
        finally:
            self.release(member)

    def restart(self, member: PoolMember) -> None:
        """Restart a local member on a fresh state dir (PoolError for remote ones) and wait until it rolls."""
        member.restart()
        self._notify()

    def mark_down(self, member: PoolMember, reason: str) -> None:
        """What a trial saw (a lost connection) counts like a failed heartbeat that is definitive."""
        member.mark_down(reason)
        self._notify()

    def describe(self) -> str:
        return "; ".join(
            f"{m.name} {m.state.value}{' busy' if m.busy else ''}{f' ({m.down_reason})' if m.down_reason else ''}"
            for m in self.members
        )

    def close(self) -> None:
        """Stop the heartbeats and every local server (SIGTERM all, then wait; SIGKILL stragglers). Idempotent."""
        if self._closing.is_set():
            return
        self._closing.set()
        atexit.unregister(self.close)
        self._notify()
        for thread in self._threads:
            thread.join(timeout=self.heartbeat_s + 10.0)
        _stop_all(self.members)

    def _notify(self) -> None:
        with self._changed:
            self._changed.notify_all()

    def _heartbeat(self, member: PoolMember) -> None:
        missed = 0
        while not self._closing.wait(self.heartbeat_s):
            if member.state in (MemberState.STARTING, MemberState.STOPPED):
                continue
            reason = member.probe()
            was = member.state
            if reason is None:
                missed = 0
                member.mark_up()
            else:
                missed += 1
                if member.is_dead() or missed >= self.misses:
                    member.mark_down(reason)
            if member.state is not was:
                self._notify()
            if member.state is MemberState.DOWN and isinstance(member, LocalMember):
                self._maybe_restart(member)

    def _maybe_restart(self, member: LocalMember) -> None:
        if not self.auto_restart or member.busy or self._closing.is_set():
            return
        log.warning("restarting %s after: %s", member.name, member.down_reason)
        try:
            member.restart()
        except PoolError as exc:
            log.error("restart of %s failed: %s", member.name, exc)
        self._notify()


def _first_check(member: RemoteMember, progress: Progress) -> None:
    reason = member.probe()
    if reason is None:
        member.mark_up()
        progress(f"{member.name}: up (model {member.model})")
    else:
        member.mark_down(reason)
        progress(f"{member.name}: down for now ({reason}); the heartbeat keeps trying")


def _stop_all(members: Sequence[PoolMember]) -> None:
    """SIGTERM every local server first, so they shut down in parallel, then reap each."""
    for member in members:
        if isinstance(member, LocalMember):
            member.signal_stop()
    for member in members:
        member.stop()
