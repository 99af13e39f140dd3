"""A loopback ASGI pass-through to one swarm server: each request forwarded, each reply relayed back.

Two proxies stand on it: the sandbox bridge (`bridge.py`: route rules, token injection, episode
tracking) and vibe's episode tap (notes each episode begun through it). `PassThrough` does what
they share: read the request, forward it without hop-by-hop headers, relay the reply chunk by chunk
(SSE as it is sampled) and answer a gone server with a 502 in the OpenAI error shape. Subclasses
override its three hooks (`refusal`, `request_headers`, `whole_reply`) for what differs.
`ServerThread` serves one on loopback from a daemon thread.
"""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
from collections.abc import Awaitable, Callable, MutableMapping, Sequence
from dataclasses import dataclass
from typing import Any

import httpx
import uvicorn

__all__ = [
    "CLIENT_KEEPALIVE_S",
    "HOP_BY_HOP",
    "UPSTREAM_KEEPALIVE_S",
    "Headers",
    "Message",
    "PassThrough",
    "Reply",
    "Scope",
    "ServerThread",
    "reply_headers",
]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
Headers = list[tuple[bytes, bytes]]

# Keep-alive on both legs, so that the side that reuses an idle connection always closes it first. A server
# that closes an idle connection just as its client sends a request on it makes that request fail with a
# connection error (seen: two agent calls of one vibe run at once, whose SDK does not retry): the agents'
# httpx pools drop idle connections after 5 s, so our listener keeps them 65 s (as the swarm server does,
# `ServerSettings.keep_alive_s`); our own pool to the server drops them after 2 s, below any sane setting.
CLIENT_KEEPALIVE_S = 65
UPSTREAM_KEEPALIVE_S = 2.0

HOP_BY_HOP = frozenset(
    b"connection keep-alive proxy-authenticate proxy-authorization te trailer transfer-encoding upgrade".split()
)


@dataclass(frozen=True)
class Reply:
    """A whole reply the pass-through sends itself; its content-length is set from `body`."""

    status: int
    headers: Headers
    body: bytes


class _HungUp(Exception):
    """The client closed the connection before its request body was complete."""

    def __init__(self, partial: bytes) -> None:
        super().__init__("the client hung up mid-request")
        self.partial = partial


class _TooLarge(Exception):
    """The request body passed the pass-through's limit."""


def reply_headers(response: httpx.Response) -> Headers:
    """The server's reply headers a pass-through sends on: names lower-cased, hop-by-hop ones dropped."""
    return [(k.lower(), v) for k, v in response.headers.raw if k.lower() not in HOP_BY_HOP]


class PassThrough:
    """The ASGI app: forward every HTTP request to `upstream` and relay its reply; each hook's default passes all.

    `timeout_s` bounds connecting and sending (reads never time out: a stream may idle while the
    model works). `max_body_bytes`: a longer request body gets 413 (None: no limit).
    `forwards_abandoned`: a request whose client hung up before its body was complete is still
    forwarded with what came (else dropped, unanswered). `stops_on_hang_up`: a client that hangs up
    mid-reply stops the relay (else it reads the server's reply to its end).
    """

    error_type = "passthrough_error"  # the OpenAI error `type` of the replies the pass-through makes itself
    unreachable_code = "upstream_unreachable"  # the `code` of its 502 when the server cannot be reached

    def __init__(
        self,
        upstream: str,
        *,
        timeout_s: float,
        max_body_bytes: int | None = None,
        forwards_abandoned: bool = False,
        stops_on_hang_up: bool = True,
    ) -> None:
        self.upstream = upstream.rstrip("/")
        self.timeout_s = timeout_s
        self.max_body_bytes = max_body_bytes
        self.forwards_abandoned = forwards_abandoned
        self.stops_on_hang_up = stops_on_hang_up
        self.client: httpx.AsyncClient | None = None  # opened by the lifespan startup, before any request
        self._loop: asyncio.AbstractEventLoop | None = None  # the serving loop, set by the lifespan startup
        self._open: set[asyncio.Task[Any]] = set()  # the requests being forwarded now
        self._draining = False

    # ---- hooks -------------------------------------------------------------------------------------

    def refusal(self, scope: Scope) -> Reply | None:
        """The reply to a request that must not pass (its body unread), or None to forward it."""
        return None

    def request_headers(self, scope: Scope) -> Headers:
        """The headers forwarded with the request (httpx sets content-length from the body)."""
        return [(k, v) for k, v in scope["headers"] if k not in HOP_BY_HOP and k != b"content-length"]

    async def whole_reply(self, scope: Scope, response: httpx.Response) -> Reply | None:
        """The reply to send instead of relaying `response` chunk by chunk (read it whole first), or None
        to relay it. Also where a subclass looks at what passed."""
        return None

    # ---- the app -----------------------------------------------------------------------------------

    def error(self, status: int, message: str, code: str) -> Reply:
        """One of the pass-through's own replies, in the OpenAI error shape."""
        error = {"message": message, "type": self.error_type, "code": code, "param": None}
        return Reply(status, [(b"content-type", b"application/json")], json.dumps({"error": error}).encode())

    def drain(self) -> None:
        """Answer every request still being forwarded with a 503 now, and any that comes later; thread-safe.

        Why: a stopping `ServerThread` would otherwise wait for its graceful-shutdown timeout and then
        cancel what is open, and uvicorn logs each cancelled request as an "Exception in ASGI
        application" traceback (the sandboxed client being stopped is the one that asked; it will not
        read the answer)."""
        if self._loop is None or self._loop.is_closed():
            return
        try:
            self._loop.call_soon_threadsafe(self._cancel_open)
        except RuntimeError:  # the loop closed in between: nothing is open
            pass

    def _closing(self) -> Reply:
        return self.error(503, "the pass-through is closing", "closing")

    def _cancel_open(self) -> None:
        self._draining = True
        for task in self._open:
            task.cancel()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
        elif scope["type"] == "http":
            await self._drainable(scope, receive, send)

    async def _drainable(self, scope: Scope, receive: Receive, send: Send) -> None:
        """`_http`, answered with a 503 (or its stream ended) once `drain` is called."""
        task = asyncio.current_task()
        assert task is not None
        started = False

        async def tracked(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        if self._draining:
            return await _send_reply(send, self._closing())
        self._open.add(task)
        try:
            await self._http(scope, receive, tracked)
        except asyncio.CancelledError:
            if not self._draining:
                raise
            task.uncancel()
            if started:  # mid-stream: end the reply where it is
                await send({"type": "http.response.body", "body": b""})
            else:
                await _send_reply(send, self._closing())
        finally:
            self._open.discard(task)

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                self._loop = asyncio.get_running_loop()
                timeout = httpx.Timeout(self.timeout_s, read=None, pool=None)
                limits = httpx.Limits(max_connections=256, keepalive_expiry=UPSTREAM_KEEPALIVE_S)
                self.client = httpx.AsyncClient(timeout=timeout, limits=limits)
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                if self.client is not None:
                    await self.client.aclose()
                await send({"type": "lifespan.shutdown.complete"})
                return

    async def _http(self, scope: Scope, receive: Receive, send: Send) -> None:
        refused = self.refusal(scope)
        if refused is not None:
            return await _send_reply(send, refused)
        try:
            body = await _read_body(receive, self.max_body_bytes)
        except _TooLarge:
            return await _send_reply(send, self.error(413, "request body too large", "body_too_large"))
        except _HungUp as hung_up:
            if not self.forwards_abandoned:
                return None
            body = hung_up.partial
        query = scope.get("query_string", b"").decode("latin-1")
        url = self.upstream + scope["path"] + (f"?{query}" if query else "")
        assert self.client is not None  # set by the lifespan startup before any request
        request = self.client.build_request(scope["method"], url, headers=self.request_headers(scope), content=body)
        try:
            response = await self.client.send(request, stream=True)
        except httpx.HTTPError as exc:
            unreachable = self.error(502, f"swarm server unreachable: {exc!r}", self.unreachable_code)
            return await _send_reply(send, unreachable)
        try:
            whole = await self.whole_reply(scope, response)
            if whole is not None:
                await _send_reply(send, whole)
            else:
                await self._relay(response, receive, send)
        finally:
            await response.aclose()

    async def _relay(self, response: httpx.Response, receive: Receive, send: Send) -> None:
        """Relay the reply chunk by chunk; with `stops_on_hang_up`, a client that hangs up stops it."""
        await send({"type": "http.response.start", "status": response.status_code, "headers": reply_headers(response)})

        async def relay() -> None:
            async for chunk in response.aiter_raw():
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
            await send({"type": "http.response.body", "body": b""})

        if not self.stops_on_hang_up:
            return await relay()

        async def hang_up() -> None:
            while (await receive())["type"] != "http.disconnect":
                pass

        tasks = [asyncio.ensure_future(relay()), asyncio.ensure_future(hang_up())]
        try:
            done, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
            for task in done:
                task.result()
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)


async def _read_body(receive: Receive, max_bytes: int | None) -> bytes:
    """The whole request body (swarm requests are small). Raises _TooLarge past `max_bytes`, _HungUp
    (with what came) when the client leaves first."""
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise _HungUp(b"".join(chunks))
        chunk = message.get("body", b"")
        size += len(chunk)
        if max_bytes is not None and size > max_bytes:
            raise _TooLarge
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks)


async def _send_reply(send: Send, reply: Reply) -> None:
    headers = [(k, v) for k, v in reply.headers if k != b"content-length"]
    headers.append((b"content-length", str(len(reply.body)).encode()))
    await send({"type": "http.response.start", "status": reply.status, "headers": headers})
    await send({"type": "http.response.body", "body": reply.body})


class ServerThread:
    """uvicorn serving one ASGI app from a daemon thread: `start` waits until it serves, `stop` until it ends.

    `options` go to `uvicorn.Config` (where to listen: `uds=`, or pre-bound `sockets`), over quiet
    defaults: warnings only, no access log, no Server/Date headers, no proxy headers trusted.
    """

    def __init__(
        self, app: PassThrough, *, name: str, sockets: Sequence[socket.socket] | None = None, **options: Any
    ) -> None:
        defaults: dict[str, Any] = {"lifespan": "on", "log_level": "warning", "access_log": False}
        defaults |= {"timeout_keep_alive": CLIENT_KEEPALIVE_S}
        defaults |= {"proxy_headers": False, "server_header": False, "date_header": False}
        self._app = app
        self._server = uvicorn.Server(uvicorn.Config(app, **(defaults | options)))
        sockets = list(sockets) if sockets is not None else None
        serve = self._server.serve
        self._thread = threading.Thread(target=lambda: asyncio.run(serve(sockets=sockets)), daemon=True, name=name)

    def start(self, timeout_s: float) -> bool:
        """Whether it serves within `timeout_s` (if not, `stop` it)."""
        self._thread.start()
        deadline = time.monotonic() + timeout_s
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                return False
            time.sleep(0.01)
        return True

    def stop(self, timeout_s: float = 10.0) -> None:
        """Answer what is still open (`PassThrough.drain`), ask it to exit and wait up to `timeout_s` for the thread."""
        self._app.drain()
        self._server.should_exit = True
        self._thread.join(timeout=timeout_s)
