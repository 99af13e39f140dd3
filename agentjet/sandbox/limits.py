"""What a sandboxed run may use, and the parser for the sizes users type (`512m`, `1g`).

Every limit applies to the whole process tree of the run, not one process: memory and pids
through the cgroup (Docker's, or our own under bwrap), CPU time and file size through rlimits,
wall time and output size by the host watching the run.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["Limits", "parse_size"]

_UNITS = {"": 1, "b": 1, "k": 1024, "m": 1024**2, "g": 1024**3}
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmg]?)(?:i?b)?\s*$", re.IGNORECASE)


def parse_size(text: str | int) -> int:
    """`512m` -> 536870912; plain integers are bytes. Raises ValueError with the accepted forms."""
    if isinstance(text, int):
        if text < 0:
            raise ValueError(f"a size must be >= 0, got {text}")
        return text
    match = _SIZE.match(text)
    if match is None:
        raise ValueError(f"cannot read size {text!r}: use bytes or a number with k, m or g (e.g. 512m, 1g)")
    return int(float(match.group(1)) * _UNITS[match.group(2).lower()])


@dataclass(frozen=True)
class Limits:
    """Resource limits of one run. Defaults suit a swarm client or a reward function."""

    memory_bytes: int = 512 * 1024**2  # whole tree, RAM + swap; exceeding it OOM-kills the run
    pids: int = 128  # processes + threads of the whole tree; a fork bomb hits this
    cpus: float = 1.0  # cores' worth of CPU bandwidth (a throttle, never a kill)
    cpu_seconds: int | None = None  # total CPU time per process (RLIMIT_CPU); None = no limit beyond wall time
    timeout_s: float = 30.0  # wall clock from start to kill
    output_bytes: int = 1024**2  # per stream kept; more output stops the run
    file_size_bytes: int = 64 * 1024**2  # largest file a process may write (RLIMIT_FSIZE)
    workdir_bytes: int = 256 * 1024**2  # size of the private, writable work dir (a tmpfs)
    tmp_bytes: int = 64 * 1024**2  # size of the private /tmp (a tmpfs)

    def __post_init__(self) -> None:
        for name in ("memory_bytes", "pids", "output_bytes", "file_size_bytes", "workdir_bytes", "tmp_bytes"):
            if getattr(self, name) <= 0:
                raise ValueError(f"Limits.{name} must be > 0, got {getattr(self, name)}")
        if self.cpus <= 0:
            raise ValueError(f"Limits.cpus must be > 0, got {self.cpus}")
        if self.timeout_s <= 0:
            raise ValueError(f"Limits.timeout_s must be > 0, got {self.timeout_s}")
        if self.cpu_seconds is not None and self.cpu_seconds <= 0:
            raise ValueError(f"Limits.cpu_seconds must be > 0, got {self.cpu_seconds}")
