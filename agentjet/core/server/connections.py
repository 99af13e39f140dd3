"""Connection limits uvicorn lacks: a cap on open connections and timeouts for slow or silent peers.

uvicorn times out only idle keep-alive connections. A peer that connects and sends nothing,
sends its request head a byte at a time, stalls half-way through a body, or stops reading a
streamed reply would hold its connection (and a task) forever, before any authentication.
`GuardedH11Protocol` is uvicorn's h11 protocol with four more rules: at most `max_connections`
open at once (more get a 503 and are closed), a request head must arrive within
`header_timeout_s` of its first byte (or of the connection opening), its body within
`body_timeout_s` of the head, and a reply may stall on a peer that does not read for at most
`write_timeout_s`. An expired peer's connection is closed; its request, if the app runs one,
sees a disconnect. Request bodies are bounded separately, before auth (`limits.BodyLimit`).
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from dataclasses import dataclass
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

__all__ = ["ConnectionLimits", "GuardedH11Protocol", "guarded_protocol"]

log = logging.getLogger(__name__)

_WARN_EVERY_S = 60.0


@dataclass(frozen=True)
class ConnectionLimits:
    max_connections: int = 1024
    header_timeout_s: float = 10.0
    body_timeout_s: float = 60.0
    write_timeout_s: float = 60.0


class _Refusals:
    """Counts closed connections per reason; one WARNING per reason and minute, not one per peer."""

    def __init__(self) -> None:
        self.counts: dict[str, int] = {}
        self._warned_at: dict[str, float] = {}

    def note(self, reason: str) -> None:
        self.counts[reason] = self.counts.get(reason, 0) + 1
        now = time.monotonic()
        if now - self._warned_at.get(reason, -_WARN_EVERY_S) >= _WARN_EVERY_S:
            self._warned_at[reason] = now
            log.warning("connection closed reason=%s total=%d (logged once a minute)", reason, self.counts[reason])


REFUSALS = _Refusals()


def _busy_reply() -> bytes:
    body = json.dumps(
        {
            "error": {
                "message": "too many open connections; retry",
                "type": "server_error",
                "code": "too_many_connections",
                "param": None,
            }
        }  # fmt: skip
    ).encode()
    head = (
        "HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\nconnection: close\r\n"
        f"retry-after: 1\r\ncontent-length: {len(body)}\r\n\r\n"
    )
    return head.encode() + body


class GuardedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with the limits above; `limits` is set on a subclass (`guarded_protocol`)."""

    limits = ConnectionLimits()

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._deadline: asyncio.TimerHandle | None = None
        self._deadline_kind: str | None = None
        self._write_stall: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        if len(self.connections) > self.limits.max_connections:
            REFUSALS.note("max_connections")
            transport.write(_busy_reply())
            transport.close()
            return
        self._arm("header", self.limits.header_timeout_s)

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        self._follow_request()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._follow_request()

    def _follow_request(self) -> None:
        """Arm the timer the request's stage needs: its head, its body, or none (the app has it)."""
        if self.transport.is_closing():
            return
        state = self.conn.their_state
        if state is h11.IDLE and self.conn.trailing_data[0]:
            self._arm("header", self.limits.header_timeout_s)  # a head has begun arriving
        elif state is h11.SEND_BODY:
            self._arm("body", self.limits.body_timeout_s)
        elif state is not h11.IDLE:
            self._disarm()

    def _arm(self, kind: str, delay_s: float) -> None:
        if self._deadline_kind == kind:
            return  # the deadline counts from the stage's start, not from each byte
        self._disarm()
        self._deadline_kind = kind
        self._deadline = self.loop.call_later(delay_s, self._expire, kind)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
        self._deadline, self._deadline_kind = None, None

    def _expire(self, kind: str) -> None:
        self._deadline, self._deadline_kind = None, None
        REFUSALS.note(f"{kind}_timeout")
        self.transport.close()

    def pause_writing(self) -> None:
        super().pause_writing()
        if self._write_stall is None:
            self._write_stall = self.loop.call_later(self.limits.write_timeout_s, self._write_stalled)

    def resume_writing(self) -> None:
        super().resume_writing()
        if self._write_stall is not None:
            self._write_stall.cancel()
            self._write_stall = None

    def _write_stalled(self) -> None:
        self._write_stall = None
        REFUSALS.note("write_timeout")
        self.transport.abort()  # the peer is not reading: its buffered reply is dropped

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        if self._write_stall is not None:
            self._write_stall.cancel()
            self._write_stall = None
        super().connection_lost(exc)


def guarded_protocol(limits: ConnectionLimits) -> type[GuardedH11Protocol]:
    """A protocol class for `uvicorn.Config(http=...)` carrying these limits."""
    return type("GuardedH11Protocol", (GuardedH11Protocol,), {"limits": limits})
