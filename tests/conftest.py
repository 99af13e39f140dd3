"""Fixtures shared by the whole suite: a clean AGENTJET_* env, the tiny model, servers on loopback."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from agentjet.core.backends.base import Backend
from agentjet.core.backends.fakes import EchoBackend, ScriptedBackend, load_tokenizer
from agentjet.core.config import ServerSettings
from agentjet.core.models import resolve_model
from agentjet.core.server.app import create_app
from agentjet.core.testing import RunningServer, serve_in_thread

TOKEN = "test-server-token-012345"


# Settings that describe this machine rather than configure a server: where caches, the sandbox
# engine and image are, and whether sandbox tests may skip (`make test` sets these).
_MACHINE_ENV = {
    "AGENTJET_CACHE_DIR",
    "AGENTJET_DOCKER_HOST",
    "AGENTJET_ENGINE_DIR",
    "AGENTJET_REQUIRE_BROWSER",
    "AGENTJET_REQUIRE_CRON",
    "AGENTJET_REQUIRE_POSTGRES",
    "AGENTJET_REQUIRE_SANDBOX",
    "AGENTJET_REQUIRE_TCMALLOC",
    "AGENTJET_SANDBOX_IMAGE",
    "AGENTJET_SANDBOX_ROOTFS",
}


@pytest.fixture(autouse=True)
def _clean_agentjet_env(monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    for name in list(os.environ):
        if name.startswith("AGENTJET_") and name not in _MACHINE_ENV:
            monkeypatch.delenv(name, raising=False)


@pytest.fixture(scope="session")
def tiny_model() -> Path:
    return resolve_model("tiny")


@pytest.fixture(scope="session")
def tiny_tokenizer(tiny_model: Path) -> Any:
    return load_tokenizer(tiny_model)


@pytest.fixture
def echo_backend(tiny_tokenizer: Any) -> EchoBackend:
    return EchoBackend(tiny_tokenizer)


@pytest.fixture
def scripted_backend(tiny_tokenizer: Any) -> Callable[..., ScriptedBackend]:
    def make(script: Any, **kwargs: Any) -> ScriptedBackend:
        return ScriptedBackend(tiny_tokenizer, script, **kwargs)

    return make


@pytest.fixture
def make_settings(tmp_path: Path) -> Callable[..., ServerSettings]:
    def make(**overrides: Any) -> ServerSettings:
        values: dict[str, Any] = {"model": "tiny", "state_dir": tmp_path / "state", "token": TOKEN}
        values.update(overrides)
        return ServerSettings(**values)

    return make


@pytest.fixture
def live_server(make_settings: Callable[..., ServerSettings]) -> Iterator[Callable[..., RunningServer]]:
    """Factory: `live_server(backend, **settings)` -> a real uvicorn server on 127.0.0.1:free port.

    The first server of a test uses `tmp_path/state`; later ones get their own state dirs (one
    server per state dir: the server refuses a second)."""
    stack: list[Any] = []

    def start(backend: Backend | None = None, **overrides: Any) -> RunningServer:
        settings = make_settings(**overrides)
        if stack and "state_dir" not in overrides:
            settings = settings.model_copy(update={"state_dir": settings.state_dir.with_name(f"state-{len(stack)}")})
        cm = serve_in_thread(create_app(settings, backend=backend))
        running = cm.__enter__()
        stack.append(cm)
        _wait_rolling(running.url)
        return running

    yield start
    for cm in reversed(stack):
        cm.__exit__(None, None, None)


def _wait_rolling(url: str, timeout_s: float = 120.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        state = httpx.get(f"{url}/health", timeout=5).json().get("state")
        if state == "rolling":
            return
        time.sleep(0.05)
    raise TimeoutError(f"server at {url} never reached rolling")


@pytest.fixture
def server_headers() -> dict[str, str]:
    return {"Authorization": f"Bearer {TOKEN}"}


@pytest.fixture
def free_port() -> int:
    """A free loopback port for a server started as a subprocess (closed before it binds)."""
    import socket

    with socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])
