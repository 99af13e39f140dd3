"""Start a swarm server as a subprocess (so tests can SIGKILL it) and wait until it rolls."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import httpx

__all__ = ["start_server_process"]


def start_server_process(script: str, state: Path, port: int, *, timeout_s: float = 60.0) -> subprocess.Popen[bytes]:
    """Run `python -c script STATE PORT` with a clean AGENTJET_* env; return once /health says rolling."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTJET_") or k == "AGENTJET_CACHE_DIR"}
    proc = subprocess.Popen([sys.executable, "-c", script, str(state), str(port)], env=env)
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/health", timeout=1).json()["state"] == "rolling":
                return proc
        except httpx.TransportError:
            pass
        assert time.monotonic() < deadline and proc.poll() is None, "server did not start"
        time.sleep(0.05)
