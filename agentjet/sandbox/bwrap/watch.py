"""Watch one sandboxed process from the host: read its output incrementally, enforce wall time and output size.

Output is read in 64 KiB chunks and only the first `output_bytes` of each stream are kept, so a
run printing gigabytes costs the host no memory; going past the cap or the deadline calls
`on_limit` (the backend kills the whole cgroup) and records why. A third pipe carries the
sandbox shell's status lines (`started`, `rc N`, `big PATH`).
"""

from __future__ import annotations

import contextlib
import os
import selectors
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass

from agentjet.sandbox.limits import Limits
from agentjet.sandbox.result import StopReason

__all__ = ["Watched", "parse_status", "watch"]

_CHUNK = 64 * 1024
_STATUS_CAP = 8 * 1024  # the command could write into the status pipe; never keep more than this
_REAP_S = 10.0  # after a kill, how long the killed process may take to be reaped


@dataclass
class Watched:
    """What the host saw of one run."""

    returncode: int | None = None
    stdout: bytes = b""
    stderr: bytes = b""
    stdout_truncated: bool = False
    stderr_truncated: bool = False
    killed_for: StopReason | None = None  # TIMEOUT or OUTPUT when we killed it
    started: bool = False  # the sandbox shell ran (bwrap set up every mount)
    status_rc: int | None = None  # the command's status as the sandbox shell saw it
    big_file: str = ""  # a file that reached RLIMIT_FSIZE


def parse_status(text: str, into: Watched) -> None:
    """Fold the status lines into `into`; unknown lines are ignored."""
    for line in text.splitlines():
        word, _, rest = line.partition(" ")
        if word == "started":
            into.started = True
        elif word == "rc" and rest.strip().isdigit():
            into.status_rc = int(rest)
        elif word == "big" and rest:
            into.big_file = rest


def watch(proc: subprocess.Popen[bytes], status_fd: int, limits: Limits, *, on_limit: Callable[[], object]) -> Watched:
    """Read until every pipe closes or a limit fires, then reap `proc`. Closes `status_fd`."""
    assert proc.stdout is not None and proc.stderr is not None
    out, err = proc.stdout.fileno(), proc.stderr.fileno()
    buffers = {out: bytearray(), err: bytearray(), status_fd: bytearray()}
    caps = {out: limits.output_bytes, err: limits.output_bytes, status_fd: _STATUS_CAP}
    deadline = time.monotonic() + limits.timeout_s
    seen = Watched()
    try:
        truncated = _read(buffers, caps, deadline, seen, capped={out, err})
        _reap(proc, deadline, seen, on_limit)
    finally:
        os.close(status_fd)
    seen.stdout, seen.stderr = bytes(buffers[out]), bytes(buffers[err])
    seen.stdout_truncated, seen.stderr_truncated = out in truncated, err in truncated
    parse_status(buffers[status_fd].decode(errors="replace"), seen)
    return seen


def _read(
    buffers: dict[int, bytearray], caps: dict[int, int], deadline: float, seen: Watched, *, capped: set[int]
) -> set[int]:
    """Fill `buffers` up to `caps` until all close; going past a `capped` fd's cap or the deadline stops it."""
    truncated: set[int] = set()
    with selectors.DefaultSelector() as selector:
        for fd in buffers:
            os.set_blocking(fd, False)
            selector.register(fd, selectors.EVENT_READ)
        while selector.get_map() and seen.killed_for is None:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                seen.killed_for = StopReason.TIMEOUT
                break
            for key, _ in selector.select(timeout=remaining):
                fd = int(key.fd)
                try:
                    chunk = os.read(fd, _CHUNK)
                except BlockingIOError:
                    continue
                if not chunk:
                    selector.unregister(fd)
                    continue
                room = max(caps[fd] - len(buffers[fd]), 0)
                buffers[fd] += chunk[:room]
                if len(chunk) > room and fd in capped:
                    truncated.add(fd)
                    seen.killed_for = StopReason.OUTPUT
    return truncated


def _reap(proc: subprocess.Popen[bytes], deadline: float, seen: Watched, on_limit: Callable[[], object]) -> None:
    """Wait for the process (the pipes may close before it exits); a limit that fired kills it first."""
    if seen.killed_for is None:
        try:
            proc.wait(timeout=max(deadline - time.monotonic(), 0.0))
        except subprocess.TimeoutExpired:
            seen.killed_for = StopReason.TIMEOUT
    if seen.killed_for is not None:
        on_limit()
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=_REAP_S)
    seen.returncode = proc.returncode
