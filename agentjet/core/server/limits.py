"""The request-size limit, applied before routing and authentication (pure ASGI middleware).

A body larger than `max_bytes` is refused with 413 (`request_too_large`, OpenAI error shape):
at once when its Content-Length says so, before a byte of it is read, and otherwise (a chunked
body) as soon as the bytes received pass the limit: the app's read raises an HTTP 413 that the
one error handler shapes (`errors.py`). Nothing past the limit is buffered, so no request can
make the server hold more than `max_bytes` of it in memory, whoever sends it.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from starlette.exceptions import HTTPException

__all__ = ["BodyLimit"]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]


def _content_length(scope: Scope) -> int | None:
    for name, value in scope.get("headers", ()):
        if name == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None
    return None


class BodyLimit:
    """`app` behind a body-size limit; other scopes (lifespan) pass through untouched."""

    def __init__(self, app: App, *, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        declared = _content_length(scope)
        if declared is not None and declared > self.max_bytes:
            return await self._refuse(send, declared)
        received = 0

        async def counted_receive() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.max_bytes:
                    raise HTTPException(413, detail=self.message(received))
            return message

        await self.app(scope, counted_receive, send)

    def message(self, size: int) -> str:
        return f"request body of {size}+ bytes is over this server's limit of {self.max_bytes} (--max-request-bytes)"

    async def _refuse(self, send: Send, size: int) -> None:
        message = self.message(size)
        body = json.dumps(
            {"error": {"message": message, "type": "invalid_request_error", "code": "request_too_large", "param": None}}
        ).encode()
        headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                   (b"connection", b"close")]  # fmt: skip
        await send({"type": "http.response.start", "status": 413, "headers": headers})
        await send({"type": "http.response.body", "body": body})
