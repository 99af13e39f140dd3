"""The `agentjet` CLI: models, server status, and a real `server start` subprocess."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
from typer.testing import CliRunner

from agentjet.cli.main import app
from agentjet.core.testing import RunningServer

runner = CliRunner()


def test_models_list_shows_registered_models() -> None:
    result = runner.invoke(app, ["models", "list"])
    assert result.exit_code == 0
    assert "smollm2-135m" in result.output and "tiny" in result.output


def test_models_prepare_unknown_name_is_a_clear_error() -> None:
    result = runner.invoke(app, ["models", "prepare", "gpt-9"])
    assert result.exit_code == 2
    assert "unknown model 'gpt-9'" in result.output


def test_status_once_shows_the_live_numbers(live_server: Callable[..., RunningServer], echo_backend: Any) -> None:
    server = live_server(echo_backend)
    result = runner.invoke(
        app, ["server", "status", "--url", server.url, "--token", "test-server-token-012345", "--once"]
    )
    assert result.exit_code == 0, result.output
    assert "rolling" in result.output and "echo" in result.output


def test_status_once_with_a_wrong_token_fails(live_server: Callable[..., RunningServer], echo_backend: Any) -> None:
    server = live_server(echo_backend)
    result = runner.invoke(app, ["server", "status", "--url", server.url, "--token", "wrong", "--once"])
    assert result.exit_code == 1


def test_server_start_serves_tiny_and_writes_a_private_token(tmp_path: Path, free_port: int) -> None:
    port = free_port
    env = {k: v for k, v in os.environ.items() if not k.startswith("AGENTJET_") or k == "AGENTJET_CACHE_DIR"}
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "agentjet.cli.main",
            "server",
            "start",
            "--model",
            "tiny",
            "--port",
            str(port),
            "--state-dir",
            str(tmp_path / "state"),
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        url = f"http://127.0.0.1:{port}"
        _wait_for(lambda: _state(url) == "rolling", timeout_s=120)
        token = (tmp_path / "state" / "token").read_text()
        assert oct((tmp_path / "state" / "token").stat().st_mode & 0o777) == "0o600"
        assert httpx.get(f"{url}/swarm/status").status_code == 401
        status = httpx.get(f"{url}/swarm/status", headers={"Authorization": f"Bearer {token}"}).json()
        assert status["model"] == "tiny" and status["state"] == "rolling"
    finally:
        proc.send_signal(signal.SIGINT)
        _, stderr = proc.communicate(timeout=30)
    assert "generated an admin token" in stderr
    assert token.strip() not in stderr  # the token itself is never logged


def _state(url: str) -> str | None:
    try:
        return httpx.get(f"{url}/health", timeout=2).json().get("state")
    except httpx.TransportError:
        return None


def _wait_for(condition: Callable[[], bool], timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, "condition not met in time"
        time.sleep(0.1)


def test_the_cli_loads_without_the_server_side() -> None:
    """Sandboxed clients start `python -m agentjet client run` on an image with the client's packages only:
    building the app must import no server (fastapi, torch, transformers) until a command needs it."""
    import subprocess
    import sys

    heavy = ("fastapi", "uvicorn", "torch", "transformers", "peft")
    probe = f"import sys, agentjet.cli.main; print([m for m in {heavy!r} if m in sys.modules])"
    loaded = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=True)
    assert loaded.stdout.strip() == "[]"
