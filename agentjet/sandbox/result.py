"""What a sandboxed run returns: how it ended, what it printed (capped), what it used."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

__all__ = ["RunResult", "StopReason"]


class StopReason(StrEnum):
    """Why a run stopped. Only EXITED means the command finished on its own."""

    EXITED = "exited"  # the command exited by itself (any exit status)
    TIMEOUT = "timeout"  # wall clock limit: killed
    MEMORY = "memory"  # the tree went over its memory limit: OOM-killed
    PIDS = "pids"  # the tree hit its process limit (fork refused), whatever the exit status
    CPU = "cpu"  # RLIMIT_CPU: killed by SIGXCPU/SIGKILL
    OUTPUT = "output"  # stdout or stderr went over output_bytes: killed
    FILE_SIZE = "file_size"  # RLIMIT_FSIZE: a write past file_size_bytes (SIGXFSZ)
    SIGNALED = "signal"  # killed by a signal none of our limits sent
    ERROR = "error"  # the sandbox itself failed to start or run the command


@dataclass(frozen=True)
class RunResult:
    """One run. `stopped_by` says which limit fired; `detail` says it in words."""

    backend: str  # "docker" or "bwrap"
    exit_code: int | None  # the command's status; negative = killed by that signal; None = never ran
    stopped_by: StopReason
    stdout: str
    stderr: str
    stdout_truncated: bool
    stderr_truncated: bool
    wall_s: float
    cpu_s: float | None  # user + system CPU of the whole tree, when the backend can read it
    peak_memory_bytes: int | None  # the tree's peak, when the backend can read it
    detail: str = ""

    @property
    def ok(self) -> bool:
        """Exited by itself with status 0."""
        return self.stopped_by is StopReason.EXITED and self.exit_code == 0
