"""What the chat refuses before any route runs: other hosts, other origins, large bodies, login guessing.

- **Host**: bound to loopback, only `127.0.0.1`, `localhost` and `::1` are answered (400 otherwise),
  so a page that rebinds its own DNS name to 127.0.0.1 gets nothing back from this origin.
- **Origin**: a POST whose `Origin` is another origin is 403 (the cookie is SameSite=Strict too).
- **Size**: a body over `max_body_bytes` (declared by Content-Length) is 413; a chunked body, whose
  size nobody declared, is 411.
- **Login guessing**: after `max_failures` wrong tokens from one address within `window_s`, further
  login attempts from it are 429 until the window has passed.
"""

from __future__ import annotations

import time
from collections import defaultdict, deque
from urllib.parse import urlsplit

from fastapi import Request
from fastapi.responses import JSONResponse

__all__ = ["LoginThrottle", "refuse"]

_LOOPBACK_HOSTS = {"127.0.0.1", "localhost", "::1", "[::1]"}


class LoginThrottle:
    """Failed logins per client address in a sliding window."""

    def __init__(self, *, max_failures: int = 10, window_s: float = 60.0) -> None:
        self.max_failures, self.window_s = max_failures, window_s
        self._failures: defaultdict[str, deque[float]] = defaultdict(deque)

    def _recent(self, client: str) -> deque[float]:
        failures, now = self._failures[client], time.monotonic()
        while failures and now - failures[0] > self.window_s:
            failures.popleft()
        return failures

    def blocked(self, client: str) -> bool:
        return len(self._recent(client)) >= self.max_failures

    def failed(self, client: str) -> None:
        self._recent(client).append(time.monotonic())
        if len(self._failures) > 10_000:  # a flood of addresses must not grow this without bound
            self._failures.pop(next(iter(self._failures)))


def refuse(request: Request, *, loopback: bool, max_body_bytes: int) -> JSONResponse | None:
    """The refusal for a request that must not reach a route, else None."""
    host = request.headers.get("host", "")
    name = host.rsplit(":", 1)[0] if not host.startswith("[") else host.split("]")[0] + "]"
    if loopback and name not in _LOOPBACK_HOSTS:
        return _error(400, "this chat answers on its loopback address only")
    if request.method == "POST":
        origin = request.headers.get("origin")
        if origin is not None and urlsplit(origin).netloc != host:
            return _error(403, "cross-origin request refused")
        if "chunked" in request.headers.get("transfer-encoding", "").lower():
            return _error(411, "send the body with a Content-Length")
        length = request.headers.get("content-length", "0")
        if not length.isdigit() or int(length) > max_body_bytes:
            return _error(413, f"the body is over {max_body_bytes} bytes")
    return None


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"detail": message}, status_code=status)
