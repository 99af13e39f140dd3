"""The uvicorn settings of a swarm server: connection limits, timeouts, TLS. One place for the CLI and tests."""

from __future__ import annotations

import ipaddress
import logging
from typing import Any

import uvicorn
from fastapi import FastAPI

from agentjet.core.config import ServerSettings
from agentjet.core.errors import ConfigError
from agentjet.core.server.connections import ConnectionLimits, guarded_protocol

__all__ = ["is_loopback", "uvicorn_config"]

log = logging.getLogger(__name__)


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _tls(settings: ServerSettings) -> dict[str, Any]:
    cert, key = settings.ssl_certfile, settings.ssl_keyfile
    if (cert is None) != (key is None):
        raise ConfigError("TLS needs both --ssl-certfile and --ssl-keyfile")
    if cert is None or key is None:
        return {}
    for path in (cert, key):
        if not path.is_file():
            raise ConfigError(f"TLS file {path} does not exist")
    return {"ssl_certfile": str(cert), "ssl_keyfile": str(key)}


def uvicorn_config(app: FastAPI, *, host: str, port: int, log_level: str = "warning") -> uvicorn.Config:
    """A `uvicorn.Config` for `app` with the limits of the `ServerSettings` it was created with."""
    settings: ServerSettings = app.state.settings
    limits = ConnectionLimits(
        max_connections=settings.max_connections,
        header_timeout_s=settings.header_timeout_s,
        body_timeout_s=settings.body_timeout_s,
        write_timeout_s=settings.write_timeout_s,
    )
    tls = _tls(settings)
    where: dict[str, Any] = {"uds": str(settings.uds)} if settings.uds else {"host": host, "port": port}
    if settings.uds is None and not is_loopback(host):
        log.warning(
            "listening on %s, not loopback: anyone who can reach port %d can try tokens%s; "
            "see docs/security.md (TLS, reverse proxy)",
            host,
            port,
            "" if tls else " and read them off the wire (no TLS)",
        )
    return uvicorn.Config(
        app,
        **where,
        http=guarded_protocol(limits),
        lifespan="on",
        log_level=log_level,
        access_log=False,
        timeout_keep_alive=max(1, round(settings.keep_alive_s)),
        server_header=False,
        **tls,
    )
