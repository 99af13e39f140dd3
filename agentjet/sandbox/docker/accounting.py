"""Peak memory, CPU time and the pids verdict of a container, readable after it exited.

A container's own cgroup disappears the moment it stops, so each run gets a parent group of its
own (`cgroup_parent=/agentjet-docker/<run>`) that the engine creates and that outlives the
container: its counters are hierarchical (memory.max_usage_in_bytes, cpuacct.usage, pids.peak
on v1; memory.peak, cpu.stat, pids.events on v2). The host reads them, then removes the group.
This needs a local engine using the cgroupfs driver and a host allowed to read and remove the
groups (root); elsewhere runs still work, without these figures.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import re
import time
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Accounting", "Usage"]

_ROOT = Path("/sys/fs/cgroup")
_BASE = "agentjet-docker"  # not "agentjet": the bwrap backend sweeps that one
_log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Usage:
    peak_memory_bytes: int | None
    cpu_s: float | None
    pids_limit_hit: bool
    oom_killed: bool


class Accounting:
    """Where run parents go on this host, or `enabled=False` when the figures cannot be read here."""

    def __init__(self, *, engine_host: str, cgroup_driver: str, root: Path = _ROOT) -> None:
        self.root = root
        self.version = 2 if (root / "cgroup.controllers").exists() else 1
        local = engine_host.startswith("unix://") or engine_host.startswith("/")
        readable = (root / "memory").is_dir() if self.version == 1 else True
        self.enabled = local and cgroup_driver == "cgroupfs" and os.geteuid() == 0 and readable

    def parent(self, run: str) -> str | None:
        """The `cgroup_parent` to give the container, or None (the engine's default) when disabled."""
        return f"/{_BASE}/{run}" if self.enabled else None

    def _dir(self, controller: str, run: str) -> Path:
        return self.root / _BASE / run if self.version == 2 else self.root / controller / _BASE / run

    def usage(self, run: str, pids_limit: int) -> Usage:
        """The run's figures; None for what could not be read."""
        if not self.enabled:
            return Usage(None, None, False, False)
        if self.version == 2:
            group = self._dir("", run)
            usec = _keyed(group / "cpu.stat").get("usage_usec")
            peak_pids = _read_int(group / "pids.peak")
            return Usage(
                peak_memory_bytes=_read_int(group / "memory.peak"),
                cpu_s=None if usec is None else usec / 1e6,
                pids_limit_hit=_keyed(group / "pids.events").get("max", 0) > 0
                or (peak_pids is not None and peak_pids >= pids_limit),
                oom_killed=_keyed(group / "memory.events").get("oom_kill", 0) > 0,
            )
        nanoseconds = _read_int(self._dir("cpuacct", run) / "cpuacct.usage")
        peak_pids = _read_int(self._dir("pids", run) / "pids.peak")  # v1 keeps pids.events in the leaf only
        return Usage(
            peak_memory_bytes=_read_int(self._dir("memory", run) / "memory.max_usage_in_bytes"),
            cpu_s=None if nanoseconds is None else nanoseconds / 1e9,
            pids_limit_hit=peak_pids is not None and peak_pids >= pids_limit,
            oom_killed=False,  # v1 counts oom_kill in the leaf only; the engine's State.OOMKilled says it
        )

    def remove(self, run: str, timeout_s: float = 5.0) -> None:
        """Remove the run's parent in every hierarchy (after the container is gone). Logs, never raises."""
        if not self.enabled or not re.fullmatch(r"[0-9a-f]{16}", run):  # a label we did not write
            return
        dirs = [self._dir("", run)] if self.version == 2 else list(self.root.glob(f"*/{_BASE}/{run}"))
        deadline = time.monotonic() + timeout_s
        for path in dirs:
            while path.is_dir():
                try:
                    path.rmdir()
                except OSError as exc:
                    if exc.errno != errno.EBUSY or time.monotonic() > deadline:
                        _log.warning("cannot remove cgroup %s: %s", path, exc)
                        break
                    time.sleep(0.01)


def _read_int(path: Path) -> int | None:
    with contextlib.suppress(OSError, ValueError, IndexError):
        return int(path.read_text().split()[0])
    return None


def _keyed(path: Path) -> dict[str, int]:
    values: dict[str, int] = {}
    with contextlib.suppress(OSError):
        for line in path.read_text().splitlines():
            key, _, value = line.partition(" ")
            with contextlib.suppress(ValueError):
                values[key] = int(value)
    return values
