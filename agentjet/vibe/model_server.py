"""A throwaway swarm server for one model: started with the public CLI for a check, stopped after.

Validation plays a few real episodes before training starts; when the run has no server yet, it
gets one here: `agentjet server start` in its own process group on a free loopback port, with a
temporary state dir and a fresh token (handed over in the environment, never in argv). Only the
public CLI and HTTP API are used.
"""

from __future__ import annotations

import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

import httpx

from agentjet.sandbox import SwarmAccess
from agentjet.vibe.errors import VibeError

__all__ = ["model_server"]


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _state(url: str) -> str | None:
    try:
        body = httpx.get(f"{url}/health", timeout=2.0).json()
    except (httpx.HTTPError, ValueError):
        return None
    return str(body.get("state")) if isinstance(body, dict) else None


def _tail(path: Path, lines: int = 20) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return ""


@contextmanager
def model_server(model: str, *, ready_timeout_s: float = 600.0) -> Iterator[SwarmAccess]:
    """A rolling server for `model` (its access: URL and token); VibeError with its log if it never rolls."""
    state_dir = Path(tempfile.mkdtemp(prefix="agentjet-vibe-check-"))
    log_path = state_dir / "server.log"
    port, token = _free_port(), secrets.token_urlsafe(24)
    url = f"http://127.0.0.1:{port}"
    argv = [sys.executable, "-m", "agentjet.cli.main", "server", "start", "--model", model, "--host", "127.0.0.1"]
    argv += ["--port", str(port), "--state-dir", str(state_dir / "state"), "--log-level", "WARNING"]
    env = {**os.environ, "AGENTJET_TOKEN": token, "TOKENIZERS_PARALLELISM": "false"}
    with log_path.open("ab") as sink:
        process = subprocess.Popen(argv, stdout=sink, stderr=subprocess.STDOUT, env=env, start_new_session=True)
    try:
        deadline = time.monotonic() + ready_timeout_s
        while _state(url) != "rolling":
            if process.poll() is not None:
                raise VibeError(
                    f"the {model} server exited with {process.returncode} while starting:\n{_tail(log_path)}"
                )
            if time.monotonic() > deadline:
                raise VibeError(f"the {model} server did not roll within {ready_timeout_s:.0f} s:\n{_tail(log_path)}")
            time.sleep(0.2)
        yield SwarmAccess(url, token)
    finally:
        _stop(process)
        shutil.rmtree(state_dir, ignore_errors=True)


def _stop(process: subprocess.Popen[bytes], timeout_s: float = 30.0) -> None:
    """SIGTERM to the server's process group, SIGKILL if it lingers."""
    if process.poll() is None:
        with suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            with suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait()
