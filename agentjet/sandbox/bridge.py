"""Host side of swarm access without network: a token-injecting HTTP proxy on a Unix socket.

A sandbox has no network. `SwarmBridge` serves `swarm.sock` in a private directory that the
backend mounts at `/run/agentjet`; inside, `forwarder.py` relays `127.0.0.1:PORT` to it, so agent
code uses the usual base URL. The bridge adds `Authorization: Bearer <token>` to the `/swarm`
calls it forwards, so no token enters the sandbox, and forwards only what a swarm client needs
(`ALLOWED_ROUTES`): engine control and config writes get 403. Least privilege twice over: given
the server's admin token, the bridge issues itself a client token for its lifetime (revoked when
it closes) and injects only that, so even a route the allow-list missed could reach nothing but
the episodes the sandbox began; given a client token, it injects that. Episodes begun through
the bridge and still open when it closes are aborted: the sandbox that owned them is gone.

Who can connect: the socket is 0666 in a directory that is `root:65534 0710` when we run as root
(only root and the sandbox's gid 65534 may traverse it), else `0711` (any local user who guesses
the random name could use the bridge, and so the server with its token). Run sandboxes as root
on shared hosts.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import re
import shutil
import tempfile
import threading
import time
from collections.abc import Awaitable, Callable, MutableMapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any
from urllib.parse import urlsplit

import httpx
import uvicorn

from agentjet.core import TOKEN_ENV
from agentjet.sandbox.errors import SandboxError

__all__ = ["ALLOWED_ROUTES", "SANDBOX_FORWARDER", "SANDBOX_SOCKET", "SwarmAccess", "SwarmBridge"]

SANDBOX_SOCKET = "/run/agentjet/swarm.sock"  # where backends mount `socket_dir`
SANDBOX_FORWARDER = "/opt/agentjet/agentjet/sandbox/forwarder.py"  # the host's agentjet/, mounted ro
SANDBOX_GID = 65534

log = logging.getLogger(__name__)

_ID = r"[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}"  # episode and client ids; never "." or ".."
# (method, path pattern, sends the server token). Anything else is refused with 403.
ALLOWED_ROUTES: tuple[tuple[str, str, bool], ...] = (
    ("GET", r"/health", False),
    ("GET", r"/v1/models", False),
    ("POST", r"/v1/chat/completions", False),  # the episode key the agent sends goes through untouched
    ("GET", r"/swarm/status", True),
    ("GET", r"/swarm/config", True),  # read only: PUT /swarm/config is refused
    ("POST", r"/swarm/episodes", True),
    ("GET", rf"/swarm/episodes/{_ID}", True),
    ("POST", rf"/swarm/episodes/{_ID}/(?:end|abort)", True),
    ("POST", rf"/swarm/clients/{_ID}/(?:update|heartbeat)", True),
)
_ROUTES = [(method, re.compile(pattern), token) for method, pattern, token in ALLOWED_ROUTES]
_CLOSING = re.compile(rf"/swarm/episodes/({_ID})/(?:end|abort)")
_HOP_BY_HOP = frozenset(
    b"connection keep-alive proxy-authenticate proxy-authorization te trailer transfer-encoding upgrade".split()
)
_DROPPED_IN = _HOP_BY_HOP | {b"content-length", b"forwarded", b"x-real-ip"}  # and every x-forwarded-*
_MAX_BODY_BYTES = 16 * 1024 * 1024

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]


@dataclass(frozen=True)
class SwarmAccess:
    """The swarm server a sandbox may reach; `token` stays on the host (None: $AGENTJET_TOKEN of the
    host, as SwarmClient does; with neither, the sandbox's own Authorization header goes through)."""

    url: str
    token: str | None = None

    def __repr__(self) -> str:  # never show the token
        return f"SwarmAccess(url={self.url!r})"


def _server_port(url: str) -> int:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise SandboxError(f"swarm URL {url!r} must look like http://HOST:PORT")
    return parts.port or (443 if parts.scheme == "https" else 80)


def _route(method: str, path: str) -> bool | None:
    """Whether the route gets the server token; None = refused."""
    for allowed, pattern, token in _ROUTES:
        if method == allowed and pattern.fullmatch(path):
            return token
    return None


def _json_reply(status: int, message: str, code: str) -> tuple[int, list[tuple[bytes, bytes]], bytes]:
    body = json.dumps({"error": {"message": message, "type": "sandbox_bridge_error", "code": code, "param": None}})
    return status, [(b"content-type", b"application/json")], body.encode()


class _Proxy:
    """The ASGI app: check the route, rewrite headers, stream the server's reply back."""

    def __init__(self, access: SwarmAccess, port: int) -> None:
        self.upstream = access.url.rstrip("/")
        self.token = access.token
        self.default_host = f"127.0.0.1:{port}"
        self.client: httpx.AsyncClient | None = None
        self.open_episodes: set[str] = set()  # begun here, not yet ended/aborted here; read by close()
        self.lock = threading.Lock()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
        elif scope["type"] == "http":
            await self._http(scope, receive, send)

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                timeout = httpx.Timeout(10.0, read=None, pool=None)  # SSE streams may idle while the model works
                self.client = httpx.AsyncClient(timeout=timeout, limits=httpx.Limits(max_connections=256))
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                if self.client is not None:
                    await self.client.aclose()
                await send({"type": "lifespan.shutdown.complete"})
                return

    async def _http(self, scope: Scope, receive: Receive, send: Send) -> None:
        method, path = scope["method"], scope["path"]
        raw = scope.get("raw_path") or path.encode()
        with_token = _route(method, path) if raw == path.encode() else None  # no %-escapes, no tricks
        if with_token is None:
            refused = f"the sandbox bridge does not forward {method} {path} (see bridge.ALLOWED_ROUTES)"
            return await _reply(send, *_json_reply(403, refused, "sandbox_forbidden"))
        try:
            body = await _read_body(receive)
        except _HungUp:
            return None
        if body is None:
            return await _reply(send, *_json_reply(413, "request body too large", "body_too_large"))
        headers, host = self._headers(scope, with_token)
        query = scope.get("query_string", b"").decode("latin-1")
        url = f"{self.upstream}{path}" + (f"?{query}" if query else "")
        assert self.client is not None
        request = self.client.build_request(method, url, headers=headers, content=body)
        try:
            response = await self.client.send(request, stream=True)
        except httpx.HTTPError as exc:
            return await _reply(send, *_json_reply(502, f"swarm server unreachable: {exc!r}", "bridge_upstream"))
        try:
            if method == "POST" and path == "/swarm/episodes" and response.status_code == 200:
                status, reply_headers, reply = await _rebased(response, host)
                self._track(json.loads(reply).get("episode_id"), opened=True)
                await _reply(send, status, reply_headers, reply)
            else:
                closing = _CLOSING.fullmatch(path) if method == "POST" else None
                if closing and response.status_code < 500:  # ended, or already closed/unknown: not ours to abort
                    self._track(closing.group(1), opened=False)
                await _stream(response, receive, send)
        finally:
            await response.aclose()

    def _track(self, episode_id: object, *, opened: bool) -> None:
        if isinstance(episode_id, str):
            with self.lock:
                (self.open_episodes.add if opened else self.open_episodes.discard)(episode_id)

    def _headers(self, scope: Scope, with_token: bool) -> tuple[list[tuple[bytes, bytes]], str]:
        out: list[tuple[bytes, bytes]] = []
        host = self.default_host
        inject = with_token and self.token is not None  # no token held: the sandbox's own header goes through
        for name, value in scope["headers"]:
            if name in _DROPPED_IN or name.startswith(b"x-forwarded-") or (inject and name == b"authorization"):
                continue
            if name == b"host":
                host = value.decode("latin-1")
            out.append((name, value))
        if not any(name == b"host" for name, _ in out):
            out.append((b"host", host.encode()))  # the server derives episode base URLs from Host
        if inject:
            out.append((b"authorization", f"Bearer {self.token}".encode()))
        return out, host


class _HungUp(Exception):
    """The sandbox side closed the connection before its request was complete."""


async def _read_body(receive: Receive) -> bytes | None:
    """The whole request body (chat requests are small); None past `_MAX_BODY_BYTES`."""
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise _HungUp
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > _MAX_BODY_BYTES:
            return None
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks)


def _reply_headers(response: httpx.Response) -> list[tuple[bytes, bytes]]:
    return [(k.lower(), v) for k, v in response.headers.raw if k.lower() not in _HOP_BY_HOP]


async def _reply(send: Send, status: int, headers: list[tuple[bytes, bytes]], body: bytes) -> None:
    headers = [(k, v) for k, v in headers if k != b"content-length"] + [(b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def _rebased(response: httpx.Response, host: str) -> tuple[int, list[tuple[bytes, bytes]], bytes]:
    """A begun episode's `base_url` is where the sandbox reaches the server: its own loopback
    (the server may have answered with a `--public-url` the sandbox cannot reach)."""
    await response.aread()
    body = response.json()
    if isinstance(body, dict) and "base_url" in body:
        body["base_url"] = f"http://{host}/v1"
    headers = [(k, v) for k, v in _reply_headers(response) if k != b"content-encoding"]
    return response.status_code, headers, json.dumps(body).encode()


async def _stream(response: httpx.Response, receive: Receive, send: Send) -> None:
    """Relay the reply chunk by chunk (SSE arrives as sampled); a client that hangs up stops it."""
    await send({"type": "http.response.start", "status": response.status_code, "headers": _reply_headers(response)})

    async def relay() -> None:
        async for chunk in response.aiter_raw():
            await send({"type": "http.response.body", "body": chunk, "more_body": True})
        await send({"type": "http.response.body", "body": b""})

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


def _private_dir() -> Path:
    """A fresh dir only root and the sandbox's gid may traverse (see the module docstring)."""
    path = Path(tempfile.mkdtemp(prefix="agentjet-swarm-"))
    try:
        os.chown(path, -1, SANDBOX_GID)
        path.chmod(0o710)
    except PermissionError:
        path.chmod(0o711)
    return path


class SwarmBridge:
    """`with SwarmBridge(access) as bridge:` serves `bridge.socket_dir / "swarm.sock"` until exit.

    Thread-safe to share read-only; one bridge may serve several sandboxes at once. `port` is
    the server's port, the one agent code inside uses on its own loopback.
    """

    def __init__(self, access: SwarmAccess | str) -> None:
        access = SwarmAccess(access) if isinstance(access, str) else access
        if access.token is None and os.environ.get(TOKEN_ENV):
            access = SwarmAccess(access.url, os.environ[TOKEN_ENV])
        self.access = access
        self.port = _server_port(self.access.url)
        self.socket_dir = _private_dir()
        self.socket_path = self.socket_dir / "swarm.sock"
        self._proxy = _Proxy(self.access, self.port)
        self._minted: str | None = None  # id of the client token issued for this bridge (admin token given)
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self.aborted_on_close: list[str] = []

    def env(self) -> dict[str, str]:
        """What a sandboxed swarm client needs; deliberately no AGENTJET_TOKEN."""
        return {"AGENTJET_SERVER": f"http://127.0.0.1:{self.port}"}

    def wrap(self, command: Sequence[str], *, python: str = "python3") -> list[str]:
        """`command` run under the forwarder inside the sandbox (`-I`: no agentjet import first)."""
        return [python, "-I", SANDBOX_FORWARDER, "--port", str(self.port), "--unix", SANDBOX_SOCKET, "--", *command]

    def start(self, timeout_s: float = 30.0) -> SwarmBridge:
        self._scope_token()
        config = uvicorn.Config(
            self._proxy,
            uds=str(self.socket_path),
            lifespan="on",
            log_level="warning",
            proxy_headers=False,
            server_header=False,
            date_header=False,
            timeout_graceful_shutdown=2,
        )
        server = uvicorn.Server(config)
        thread = threading.Thread(target=lambda: asyncio.run(server.serve()), daemon=True, name="agentjet-bridge")
        self._server, self._thread = server, thread
        thread.start()
        deadline = time.monotonic() + timeout_s
        while not server.started:
            if not thread.is_alive() or time.monotonic() > deadline:
                self.close()
                raise SandboxError(f"the swarm bridge did not start on {self.socket_path}")
            time.sleep(0.01)
        self.socket_path.chmod(0o666)
        return self

    def _scope_token(self) -> None:
        """Given the admin token, issue a client token for this bridge and inject that instead.

        A 403 means the token is a client token already (used as is); a 404 or no answer, a server
        without client tokens or not up yet (the given token is used)."""
        if self.access.token is None:
            return
        name = f"sandbox-bridge-{os.urandom(4).hex()}"
        headers = {"Authorization": f"Bearer {self.access.token}"}
        try:
            reply = httpx.post(f"{self.access.url}/swarm/tokens", json={"name": name}, headers=headers, timeout=10)
        except httpx.HTTPError:
            return
        if reply.status_code == 200:
            body = reply.json()
            self._minted, self._proxy.token = str(body["token_id"]), str(body["token"])
            log.info("bridge uses its own client token id=%s", self._minted)

    def _revoke_minted(self) -> None:
        if self._minted is None or self.access.token is None:
            return
        headers = {"Authorization": f"Bearer {self.access.token}"}
        with contextlib.suppress(httpx.HTTPError):
            httpx.delete(f"{self.access.url}/swarm/tokens/{self._minted}", headers=headers, timeout=10)
        self._minted = None

    def close(self) -> None:
        """Stop serving, abort the episodes the sandbox left open, remove the socket dir; safe to call twice."""
        if self._server is not None and self._thread is not None:
            self._server.should_exit = True
            self._thread.join(timeout=10)
            self._abort_left_open()
        self._revoke_minted()
        self._server = self._thread = None
        with contextlib.suppress(FileNotFoundError):
            shutil.rmtree(self.socket_dir)

    def _abort_left_open(self) -> None:
        with self._proxy.lock:
            left, self._proxy.open_episodes = sorted(self._proxy.open_episodes), set()
        if not left:
            return
        headers = {"Authorization": f"Bearer {self.access.token}"} if self.access.token else {}
        with httpx.Client(base_url=self.access.url, headers=headers, timeout=10) as client:
            for episode_id in left:
                with contextlib.suppress(httpx.HTTPError):
                    if client.post(f"/swarm/episodes/{episode_id}/abort").status_code == 200:
                        self.aborted_on_close.append(episode_id)
        log.warning("aborted %d episode(s) the sandbox left open", len(self.aborted_on_close))

    def __enter__(self) -> SwarmBridge:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"SwarmBridge(url={self.access.url!r}, socket={str(self.socket_path)!r})"
