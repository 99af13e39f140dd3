"""Find and connect to the Docker engine the sandboxes use, or say how to start one.

The engine is usually a private `dockerd` started by `sandboxes/engine.sh` (own socket, data
root and pidfile, no bridge, no iptables), so the address comes from `AGENTJET_DOCKER_HOST`
first, then the usual `DOCKER_HOST`, then that script's default socket, then the system one.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from agentjet.sandbox.errors import SandboxUnavailable

__all__ = ["ENGINE_FIX", "connect", "engine_host"]

# Where `sandboxes/engine.sh start` puts its socket unless AGENTJET_ENGINE_DIR says otherwise.
_ENGINE_DIR_DEFAULT = "/var/lib/agentjet-engine"
_SYSTEM_SOCKET = "/var/run/docker.sock"
ENGINE_FIX = (
    "start a private engine with `sandboxes/engine.sh start` (or `make sandbox-engine`) as root "
    "and export the AGENTJET_DOCKER_HOST it prints"
)


def engine_host() -> str:
    """The engine address to use: the env override, else the first socket that exists, else the system one."""
    for name in ("AGENTJET_DOCKER_HOST", "DOCKER_HOST"):
        value = os.environ.get(name, "").strip()
        if value:
            return value
    engine_dir = Path(os.environ.get("AGENTJET_ENGINE_DIR") or _ENGINE_DIR_DEFAULT)
    for socket in (engine_dir / "docker.sock", Path(_SYSTEM_SOCKET)):
        if socket.is_socket():
            return f"unix://{socket}"
    return f"unix://{_SYSTEM_SOCKET}"


def connect(timeout_s: float = 60.0) -> Any:
    """A `docker.DockerClient` that answered a ping. Raises SandboxUnavailable with the fix otherwise.

    `timeout_s` bounds each API call (not a container's run time: pass timeouts to `wait`).
    """
    try:
        import docker
        from docker.errors import DockerException
    except ImportError as exc:  # the pin is in the main dependencies; a broken venv lands here
        raise SandboxUnavailable(
            f"the docker Python package is missing ({exc}).", "pip install -e . (it pins docker)"
        ) from exc
    host = engine_host()
    client = None
    try:
        client = docker.DockerClient(base_url=host, timeout=timeout_s)
        client.ping()
    except (DockerException, OSError) as exc:
        if client is not None:
            client.close()
        raise SandboxUnavailable(f"no Docker engine answers at {host} ({_first_line(exc)}).", ENGINE_FIX) from exc
    return client


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text.splitlines()[0][:200]
