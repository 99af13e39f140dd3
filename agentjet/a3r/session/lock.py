"""One live campaign process per repo: a lock file, a heartbeat file, and a stop request file.

- `runtime/campaign.lock`: the campaign process holds an exclusive `flock` on it for as long as it
  runs. The kernel drops the lock when the process dies (even by `kill -9`), so a second `start` or
  `resume` knows at once whether the first one is alive, with no stale-pid guessing.
- `runtime/campaign.json`: the heartbeat, rewritten every few seconds by the live process (pid,
  host, time, phase, running trials with their server/step/value, the pool). `status` reads it.
- `runtime/STOP`: `request_stop` writes it (`drain`: start no new trials and let the running ones
  finish; `now`: also interrupt the running ones at their next report, fail them and queue their
  params again). The engine polls it and removes it when it starts.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import socket
import time
from pathlib import Path
from typing import IO, Any, Literal

from agentjet.a3r.errors import CampaignError

__all__ = [
    "CampaignLock",
    "StopMode",
    "clear_stop",
    "is_alive",
    "read_heartbeat",
    "request_stop",
    "stop_requested",
]

StopMode = Literal["drain", "now"]
LOCK_FILE = "campaign.lock"
HEARTBEAT_FILE = "campaign.json"
STOP_FILE = "STOP"


def read_heartbeat(runtime_dir: Path) -> dict[str, Any] | None:
    """The last heartbeat written (whether or not its process still lives), or None."""
    try:
        data = json.loads((runtime_dir / HEARTBEAT_FILE).read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def is_alive(runtime_dir: Path) -> bool:
    """Whether a campaign process holds this repo's lock now."""
    path = runtime_dir / LOCK_FILE
    if not path.exists():
        return False
    with path.open("a") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        fcntl.flock(handle, fcntl.LOCK_UN)
        return False


def request_stop(runtime_dir: Path, *, now: bool = False) -> None:
    runtime_dir.mkdir(parents=True, exist_ok=True)
    (runtime_dir / STOP_FILE).write_text("now\n" if now else "drain\n")


def stop_requested(runtime_dir: Path) -> StopMode | None:
    try:
        text = (runtime_dir / STOP_FILE).read_text().strip()
    except OSError:
        return None
    return "now" if text == "now" else "drain"


def clear_stop(runtime_dir: Path) -> None:
    with contextlib.suppress(FileNotFoundError):
        (runtime_dir / STOP_FILE).unlink()


class CampaignLock:
    """The lock of one repo, held by this process from `acquire` to `release`; also writes the heartbeat."""

    def __init__(self, runtime_dir: Path) -> None:
        self.runtime_dir = runtime_dir
        self.worker = f"{socket.gethostname()}:{os.getpid()}"
        self.started_at = time.time()
        self._handle: IO[str] | None = None

    def acquire(self) -> None:
        """Take the lock, or CampaignError naming the live process (pid, host, last heartbeat)."""
        self.runtime_dir.mkdir(parents=True, exist_ok=True)
        handle = (self.runtime_dir / LOCK_FILE).open("a")
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.close()
            raise CampaignError(self._refusal()) from None
        handle.truncate(0)
        handle.write(f"{self.worker}\n")
        handle.flush()
        self._handle = handle

    def _refusal(self) -> str:
        beat = read_heartbeat(self.runtime_dir) or {}
        age = f", last heartbeat {time.time() - float(beat['updated_at']):.0f} s ago" if "updated_at" in beat else ""
        who = f"pid {beat.get('pid', '?')} on {beat.get('host', '?')}"
        return (
            f"a campaign process is already running in {self.runtime_dir.parent} ({who}{age}); "
            "stop it first (agentjet campaign stop), or wait for it to finish"
        )

    def beat(self, status: dict[str, Any]) -> None:
        """Write the heartbeat file whole (write, then rename: a reader never sees half of it)."""
        data = {
            "pid": os.getpid(),
            "host": socket.gethostname(),
            "worker": self.worker,
            "started_at": self.started_at,
            "updated_at": time.time(),
            **status,
        }
        path = self.runtime_dir / HEARTBEAT_FILE
        tmp = path.with_name(f".{HEARTBEAT_FILE}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(data, indent=1, default=str))
        tmp.replace(path)

    def release(self) -> None:
        if self._handle is None:
            return
        fcntl.flock(self._handle, fcntl.LOCK_UN)
        self._handle.close()
        self._handle = None

    @property
    def held(self) -> bool:
        return self._handle is not None
