"""Start a swarm server as a subprocess (so tests can SIGKILL it), wait until it rolls, watch its status.

`start_training_server` runs the real `tiny` model with training on (token `SERVER_TOKEN`, the
TrainConfig from `<state>/train.yaml`): the crash/resume tests drive it and read its state dir.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx

__all__ = ["SERVER_TOKEN", "start_server_process", "start_training_server", "swarm_status", "wait_for_step"]

SERVER_TOKEN = "tok-01234567890123456789"
_TRAINING_SERVER = f"""
import sys
from pathlib import Path
import uvicorn
from agentjet.core.backends.transformers_backend import TransformersBackend
from agentjet.core.config import ServerSettings
from agentjet.core.models import resolve_model
from agentjet.core.server.app import create_app
state = Path(sys.argv[1])
port = int(sys.argv[2])
settings = ServerSettings(
    model="tiny", state_dir=state, token={SERVER_TOKEN!r}, port=port, config=state / "train.yaml"
)
backend = TransformersBackend(resolve_model("tiny"), name="tiny")
app = create_app(settings, backend=backend, model_path=resolve_model("tiny"))
uvicorn.run(app, host="127.0.0.1", port=settings.port, log_level="warning")
"""


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


def start_training_server(state: Path, port: int) -> subprocess.Popen[bytes]:
    """A training server on `tiny` over `state` (which must hold `train.yaml`)."""
    return start_server_process(_TRAINING_SERVER, state, port)


def swarm_status(port: int) -> dict[str, Any]:
    """`GET /swarm/status` of the server on `port`, with the server token."""
    headers = {"Authorization": f"Bearer {SERVER_TOKEN}"}
    body: dict[str, Any] = httpx.get(f"http://127.0.0.1:{port}/swarm/status", headers=headers, timeout=5).json()
    return body


def wait_for_step(port: int, step: int, timeout_s: float = 30.0) -> dict[str, Any]:
    """The status once the engine is rolling again at `step` or later (after an update, or a restore)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        status = swarm_status(port)
        if status["step"] >= step and status["state"] == "rolling":
            return status
        time.sleep(0.05)
    raise TimeoutError(f"never reached step {step}: {swarm_status(port)}")
