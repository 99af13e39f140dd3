"""Run a real swarm server (uvicorn on 127.0.0.1, a free port) in a background thread.

Used by the test-suite, the demo and benchmarks: the server is real HTTP on loopback, only
the backend may be a fake.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import uvicorn
from fastapi import FastAPI

from agentjet.core.server.http_server import uvicorn_config

__all__ = ["RunningServer", "serve_in_thread"]


@dataclass(frozen=True)
class RunningServer:
    url: str
    port: int
    app: FastAPI


def _serve(server: uvicorn.Server) -> None:
    """uvicorn exits the process (SystemExit) when the app refuses to start; here only the thread ends."""
    try:
        asyncio.run(server.serve())
    except SystemExit:
        pass


@contextmanager
def serve_in_thread(
    app: FastAPI, *, host: str = "127.0.0.1", port: int = 0, timeout_s: float = 120.0
) -> Iterator[RunningServer]:
    """Start uvicorn for `app` in a daemon thread; yield once it accepts connections; stop on exit.

    A swarm server app (`create_app`) runs with its settings' connection limits, as the CLI runs it."""
    if getattr(app.state, "settings", None) is not None:
        config = uvicorn_config(app, host=host, port=port)
    else:
        config = uvicorn.Config(app, host=host, port=port, log_level="warning", lifespan="on")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=_serve, args=(server,), daemon=True, name="agentjet-server")
    thread.start()
    deadline = time.monotonic() + timeout_s
    while not server.started:
        if not thread.is_alive():
            raise RuntimeError("server thread died during startup (see log)")
        if time.monotonic() > deadline:
            raise TimeoutError(f"server did not start within {timeout_s}s")
        time.sleep(0.01)
    bound = server.servers[0].sockets[0].getsockname()[1]
    try:
        scheme = "https" if config.ssl_certfile else "http"
        yield RunningServer(url=f"{scheme}://{host}:{bound}", port=bound, app=app)
    finally:
        server.should_exit = True
        thread.join(timeout=30)
