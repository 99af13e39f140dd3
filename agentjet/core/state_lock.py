"""One server per state dir: an exclusive flock on `<state-dir>/server.lock` for the server's lifetime.

Two servers on one journal would pool and train the same episodes twice, and `agentjet server
repair` must never move a journal a running server still writes. The lock dies with its process
(also on kill -9), so a crash never leaves a stale lock behind.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from pathlib import Path

from agentjet.core.errors import ConfigError

__all__ = ["StateDirLock"]


class StateDirLock:
    """Held by a running server; `holder()` tells others whether one is."""

    def __init__(self, state_dir: Path) -> None:
        self.path = state_dir / "server.lock"
        self._fd: int | None = None

    def acquire(self) -> None:
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            pid = _read_pid(fd)
            os.close(fd)
            raise ConfigError(
                f"another server{f' (pid {pid})' if pid else ''} is using the state dir {self.path.parent}: "
                "stop it, or give this one its own --state-dir"
            ) from None
        os.ftruncate(fd, 0)
        os.write(fd, str(os.getpid()).encode())
        self._fd = fd

    def release(self) -> None:
        if self._fd is not None:
            with contextlib.suppress(OSError):
                os.close(self._fd)
            self._fd = None

    def holder(self) -> int | None:
        """The pid of the server holding the lock (0 if unknown), or None when no server holds it."""
        if not self.path.exists():
            return None
        fd = os.open(self.path, os.O_RDONLY)
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return _read_pid(fd) or 0
        finally:
            os.close(fd)
        return None


def _read_pid(fd: int) -> int | None:
    try:
        text = os.pread(fd, 32, 0).decode().strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None
