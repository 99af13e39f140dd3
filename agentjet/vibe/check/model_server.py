"""A throwaway swarm server for one model: started with the public CLI for a check, stopped after.

Validation plays a few real episodes before training starts; when the run has no server yet, it
gets one here (`swarm_server.start_server` on a temporary state dir, deleted afterwards); it dies
with this process if this process dies first.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from agentjet.sandbox import SwarmAccess
from agentjet.vibe.run.swarm_server import start_server, stop_server

__all__ = ["model_server"]


@contextmanager
def model_server(model: str, *, ready_timeout_s: float = 600.0) -> Iterator[SwarmAccess]:
    """A rolling server for `model` (its access: URL and token); VibeError with its log if it never rolls."""
    scratch = Path(tempfile.mkdtemp(prefix="agentjet-vibe-check-"))
    try:
        handle = start_server(scratch / "state", scratch / "server.log", model=model, ready_timeout_s=ready_timeout_s)
        try:
            yield SwarmAccess(handle.url, handle.token)
        finally:
            stop_server(handle)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
