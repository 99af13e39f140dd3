"""A child process in its own process group: whether it still runs, what it runs, its stop, its log's tail.

Every process we start for isolation (a swarm server, a `vllm serve`) leads its own process group
(`start_new_session=True`), so a stop reaches what it started in turn (engine workers, training ranks).
A pid alone is enough to stop one that an earlier process of ours started (a killed run's server):
`process_mentions` guards against a pid reused by another program first.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = ["log_tail", "pid_alive", "process_mentions", "signal_process_group", "stop_process_group"]

log = logging.getLogger(__name__)

_POLL_S = 0.1
_TAIL_BYTES = 64 * 1024


def pid_alive(pid: int) -> bool:
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


def process_mentions(pid: int, text: str) -> bool:
    """Whether process `pid` runs with `text` in its command line (guards against a recycled pid)."""
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return False
    return text in cmdline


def stop_process_group(
    pid: int, *, process: subprocess.Popen[Any] | None = None, grace_s: float = 15.0, kill_wait_s: float = 30.0
) -> None:
    """SIGTERM to the process group `pid` leads, SIGKILL to the group if `pid` still runs after `grace_s`.

    `process` is the Popen when `pid` is our child: it is reaped (no zombie). Returns once `pid` is gone, or
    `kill_wait_s` after the SIGKILL (logged: a process stuck in the kernel)."""

    def gone() -> bool:
        return process.poll() is not None if process is not None else not pid_alive(pid)

    if gone():
        return
    signal_process_group(pid, signal.SIGTERM)
    if _wait_until(gone, grace_s):
        return
    log.warning("pid=%d ignored SIGTERM for %.0f s: killing its process group", pid, grace_s)
    signal_process_group(pid, signal.SIGKILL)
    if not _wait_until(gone, kill_wait_s):
        log.error("pid=%d still runs %.0f s after SIGKILL", pid, kill_wait_s)


def signal_process_group(pid: int, sig: signal.Signals) -> None:
    """Send `sig` to the process group `pid` leads (nothing if it is gone)."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pid, sig)


def _wait_until(done: Callable[[], bool], timeout_s: float) -> bool:
    deadline = time.monotonic() + timeout_s
    while not done():
        if time.monotonic() >= deadline:
            return False
        time.sleep(_POLL_S)
    return True


def log_tail(path: Path | None, lines: int = 20) -> str:
    """The last `lines` lines of a log file ('' if there is none); only its last 64 KiB are read."""
    if path is None or not path.is_file():
        return ""
    with path.open("rb") as handle:
        handle.seek(max(0, path.stat().st_size - _TAIL_BYTES))
        text = handle.read().decode(errors="replace")
    return "\n".join(text.splitlines()[-lines:])
