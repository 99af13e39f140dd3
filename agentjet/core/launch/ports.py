"""Loopback ports for the processes we start: a free one now, and whether a start lost its port to another."""

from __future__ import annotations

import socket

__all__ = ["free_port", "port_was_taken"]

_PORT_TAKEN = ("address already in use", "errno 98")


def free_port() -> int:
    """A port of 127.0.0.1 nobody listens on now. The child binds it a moment later, so another process can take
    it first: a start that fails with `port_was_taken` is retried on a new one."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def port_was_taken(log_text: str) -> bool:
    """Whether a child's last log lines say its port was in use when it tried to listen."""
    lowered = log_text.lower()
    return any(marker in lowered for marker in _PORT_TAKEN)
