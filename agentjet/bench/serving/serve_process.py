"""The servers of `agentjet bench serve` as child processes: start one, wait until it rolls, stop it.

Each is `python -m agentjet.bench.serving.serve_worker KIND` in its own process, so the benchmark client
and the server share no GIL and no event loop. The admin token is fresh per run (the server
refuses short ones); the client sends it as `admin_headers()`.
"""

from __future__ import annotations

import os
import select
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

from agentjet.core.access.tokens import new_admin_token

__all__ = ["admin_headers", "bench_server", "best_device"]

_TOKEN = new_admin_token()  # the server refuses short admin tokens; a fresh one per run
_START_TIMEOUT_S = 900.0  # a vllm serve on 2 CPU cores takes about a minute


@contextmanager
def bench_server(
    kind: str,
    state_dir: Path,
    *,
    model: str = "tiny",
    max_batch_size: int = 32,
    backend: str = "transformers",
    vllm_python: Path | None = None,
) -> Iterator[tuple[str, int]]:
    """Run `python -m agentjet.bench.serving.serve_worker KIND`; yield (URL, pid) once /health says rolling."""
    device = best_device() if kind == "model" else "cpu"
    extra = ["--backend", backend] + (["--vllm-python", str(vllm_python)] if backend == "vllm" and vllm_python else [])
    command = [
        sys.executable,
        "-m",
        "agentjet.bench.serving.serve_worker",
        kind,
        "--model",
        model,
        "--state-dir",
        str(state_dir),
        "--token",
        _TOKEN,
        "--max-batch-size",
        str(max_batch_size),
        "--device",
        device,
        *extra,
    ]
    with tempfile.TemporaryFile() as log_file:
        proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=log_file, env=os.environ.copy())
        try:
            url = f"http://127.0.0.1:{_read_port(proc, log_file)}"
            _wait_rolling(url, proc, log_file)
            yield url, proc.pid
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=15)
            if proc.stdout is not None:
                proc.stdout.close()


def admin_headers() -> dict[str, str]:
    """The admin token of every bench server this run started (episodes begin and end with it)."""
    return {"Authorization": f"Bearer {_TOKEN}"}


def best_device() -> str:
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


def _worker_failed(proc: subprocess.Popen[bytes], log_file: Any, why: str) -> RuntimeError:
    log_file.seek(0)
    tail = log_file.read().decode(errors="replace")[-2000:]
    return RuntimeError(f"bench server {why} (exit code {proc.poll()}); its log ends:\n{tail}")


def _read_port(proc: subprocess.Popen[bytes], log_file: Any) -> int:
    assert proc.stdout is not None
    ready, _, _ = select.select([proc.stdout], [], [], _START_TIMEOUT_S)
    line = proc.stdout.readline().decode() if ready else ""
    if not line.startswith("PORT "):
        raise _worker_failed(proc, log_file, "did not report its port")
    return int(line.split()[1])


def _wait_rolling(url: str, proc: subprocess.Popen[bytes], log_file: Any) -> None:
    deadline = time.monotonic() + _START_TIMEOUT_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise _worker_failed(proc, log_file, "exited during startup")
        try:
            if httpx.get(f"{url}/health", timeout=5).json().get("state") == "rolling":
                return
        except httpx.TransportError:
            pass  # not accepting yet
        time.sleep(0.05)
    raise _worker_failed(proc, log_file, f"was not rolling within {_START_TIMEOUT_S:.0f} s")
