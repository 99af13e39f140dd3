"""Capped capture of a sandbox's stdout/stderr: keep the first `cap` bytes, count the rest, never hold more.

A run that prints gigabytes must not grow host memory: everything past the cap is dropped as it
arrives, and `over` tells the backend to stop the run (StopReason.OUTPUT).
"""

from __future__ import annotations

__all__ = ["CappedOutput"]


class CappedOutput:
    """One stream. Not thread-safe: one reader thread feeds it, others read it after that thread ends."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.seen = 0  # bytes the command wrote, kept or not
        self._kept = bytearray()

    def feed(self, chunk: bytes) -> bool:
        """Keep what fits under the cap; True once the stream went over it."""
        self.seen += len(chunk)
        room = self.cap - len(self._kept)
        if room > 0:
            self._kept += chunk[:room]
        return self.over

    @property
    def over(self) -> bool:
        return self.seen > self.cap

    def text(self) -> str:
        """What was kept, decoded (invalid UTF-8 replaced, never an error)."""
        return self._kept.decode("utf-8", errors="replace")
