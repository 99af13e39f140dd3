"""A loopback pass-through to one swarm server that notes every episode begun through it.

The server lists no episodes over HTTP (only `GET /swarm/episodes/{id}` by id), yet watching a
run needs the ids of one client's recent episodes (their completions show degenerate outputs)
and the moment a new client began its first one (the hot-swap latency). Each client process of a
vibe run therefore talks to its server through its own tap: every request and reply passes
unchanged (streams too); a `POST /swarm/episodes` that succeeds is recorded with the time.
"""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass
from typing import Any

import httpx
import uvicorn

from agentjet.vibe.errors import VibeError

__all__ = ["EpisodeTap", "TappedEpisode"]

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

_HOP_BY_HOP = frozenset(
    b"connection keep-alive proxy-authenticate proxy-authorization te trailer transfer-encoding upgrade".split()
)


@dataclass(frozen=True)
class TappedEpisode:
    """An episode the server began for the tapped client; `begun_at` is when its reply passed (wall clock)."""

    episode_id: str
    task_id: str
    kind: str
    begun_at: float


class _Relay:
    """The ASGI app: forward to the upstream server, stream the reply back, note begun episodes."""

    def __init__(self, upstream: str, on_begun: Callable[[TappedEpisode], None]) -> None:
        self.upstream = upstream.rstrip("/")
        self.on_begun = on_begun
        self.client: httpx.AsyncClient | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            while True:
                message = await receive()
                if message["type"] == "lifespan.startup":
                    timeout = httpx.Timeout(30.0, read=None, pool=None)  # model calls may take long
                    self.client = httpx.AsyncClient(timeout=timeout, limits=httpx.Limits(max_connections=256))
                    await send({"type": "lifespan.startup.complete"})
                elif message["type"] == "lifespan.shutdown":
                    if self.client is not None:
                        await self.client.aclose()
                    await send({"type": "lifespan.shutdown.complete"})
                    return
        elif scope["type"] == "http":
            await self._http(scope, receive, send)

    async def _http(self, scope: Scope, receive: Receive, send: Send) -> None:
        body = await _read_body(receive)
        query = scope.get("query_string", b"").decode("latin-1")
        url = self.upstream + scope["path"] + (f"?{query}" if query else "")
        headers = [(k, v) for k, v in scope["headers"] if k not in _HOP_BY_HOP and k != b"content-length"]
        assert self.client is not None  # set by the lifespan startup before any request
        request = self.client.build_request(scope["method"], url, headers=headers, content=body)
        try:
            response = await self.client.send(request, stream=True)
        except httpx.HTTPError as exc:
            reply = json.dumps({"error": {"message": f"swarm server unreachable: {exc!r}", "type": "tap_error"}})
            await _send_whole(send, 502, [(b"content-type", b"application/json")], reply.encode())
            return
        try:
            if scope["method"] == "POST" and scope["path"] == "/swarm/episodes" and response.status_code == 200:
                await response.aread()
                self._note(response.content)
                await _send_whole(send, 200, _reply_headers(response), response.content)
            else:
                await send(
                    {"type": "http.response.start", "status": response.status_code, "headers": _reply_headers(response)}
                )
                async for chunk in response.aiter_raw():
                    await send({"type": "http.response.body", "body": chunk, "more_body": True})
                await send({"type": "http.response.body", "body": b""})
        finally:
            await response.aclose()

    def _note(self, content: bytes) -> None:
        try:
            body = json.loads(content)
        except ValueError:
            return
        if isinstance(body, dict) and isinstance(body.get("episode_id"), str):
            self.on_begun(
                TappedEpisode(body["episode_id"], str(body.get("task_id", "")), str(body.get("kind", "")), time.time())
            )


async def _read_body(receive: Receive) -> bytes:
    chunks: list[bytes] = []
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return b"".join(chunks)
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False):
            return b"".join(chunks)


def _reply_headers(response: httpx.Response) -> list[tuple[bytes, bytes]]:
    return [(k.lower(), v) for k, v in response.headers.raw if k.lower() not in _HOP_BY_HOP]


async def _send_whole(send: Send, status: int, headers: list[tuple[bytes, bytes]], body: bytes) -> None:
    headers = [(k, v) for k, v in headers if k != b"content-length"] + [(b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


class EpisodeTap:
    """`with EpisodeTap(server_url) as tap:` serves `tap.url` until exit. Thread-safe reads."""

    def __init__(self, upstream: str) -> None:
        self.upstream = upstream
        self._lock = threading.Lock()
        self._begun: list[TappedEpisode] = []
        self._first = threading.Event()
        self._socket = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._socket.bind(("127.0.0.1", 0))
        self.port: int = self._socket.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None

    def _on_begun(self, episode: TappedEpisode) -> None:
        with self._lock:
            self._begun.append(episode)
        self._first.set()

    def episodes(self) -> list[TappedEpisode]:
        """Every episode begun through the tap, oldest first."""
        with self._lock:
            return list(self._begun)

    def wait_first(self, timeout_s: float) -> TappedEpisode | None:
        """The first episode begun through the tap, waiting up to `timeout_s`; None if none by then."""
        if not self._first.wait(timeout_s):
            return None
        with self._lock:
            return self._begun[0]

    def start(self, timeout_s: float = 30.0) -> EpisodeTap:
        config = uvicorn.Config(
            _Relay(self.upstream, self._on_begun),
            lifespan="on",
            log_level="warning",
            access_log=False,
            server_header=False,
            date_header=False,
        )
        server = uvicorn.Server(config)
        thread = threading.Thread(
            target=lambda: asyncio.run(server.serve(sockets=[self._socket])), daemon=True, name="vibe-episode-tap"
        )
        self._server, self._thread = server, thread
        thread.start()
        deadline = time.monotonic() + timeout_s
        while not server.started:
            if not thread.is_alive() or time.monotonic() > deadline:
                self.close()
                raise VibeError(f"the episode tap to {self.upstream} did not start on {self.url}")
            time.sleep(0.01)
        return self

    def close(self) -> None:
        """Stop serving (safe to call twice)."""
        if self._server is not None and self._thread is not None:
            self._server.should_exit = True
            self._thread.join(timeout=10)
        self._server = self._thread = None
        self._socket.close()

    def __enter__(self) -> EpisodeTap:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.close()
