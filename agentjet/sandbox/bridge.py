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
The proxy is a `passthrough.PassThrough` (the pass-through vibe's episode tap uses too) with the
rules above as its hooks.

Who can connect: the socket is 0666 in a directory that is `root:65534 0710` when we run as root
(only root and the sandbox's gid 65534 may traverse it), else `0711` (any local user who guesses
the random name could use the bridge, and so the server with its token). Run sandboxes as root
on shared hosts.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import shutil
import tempfile
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from urllib.parse import urlsplit

import httpx

from agentjet.core import TOKEN_ENV
from agentjet.sandbox.errors import SandboxError
from agentjet.sandbox.passthrough import HOP_BY_HOP, Headers, PassThrough, Reply, Scope, ServerThread, reply_headers

__all__ = ["ALLOWED_ROUTES", "SANDBOX_FORWARDER", "SANDBOX_SOCKET", "SwarmAccess", "SwarmBridge", "SwarmBridges"]

SANDBOX_DIR = "/run/agentjet"  # where backends mount `socket_dir`
SANDBOX_SOCKET = f"{SANDBOX_DIR}/swarm.sock"
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
_DROPPED_IN = HOP_BY_HOP | {b"content-length", b"forwarded", b"x-real-ip"}  # and every x-forwarded-*
_MAX_BODY_BYTES = 16 * 1024 * 1024


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


def _with_token(scope: Scope) -> bool | None:
    """`_route` of the request, refused (None) when its raw path differs: no %-escapes, no tricks."""
    method, path = scope["method"], scope["path"]
    raw = scope.get("raw_path") or path.encode()
    return _route(method, path) if raw == path.encode() else None


class _Proxy(PassThrough):
    """The pass-through with the bridge's rules: allowed routes only, the token injected, episodes tracked."""

    error_type = "sandbox_bridge_error"
    unreachable_code = "bridge_upstream"

    def __init__(self, access: SwarmAccess, port: int) -> None:
        # a 10 s connect/send timeout; SSE streams may idle while the model works
        super().__init__(access.url, timeout_s=10.0, max_body_bytes=_MAX_BODY_BYTES)
        self.token = access.token
        self.default_host = f"127.0.0.1:{port}"
        self.open_episodes: set[str] = set()  # begun here, not yet ended/aborted here; read by close()
        self.lock = threading.Lock()

    def refusal(self, scope: Scope) -> Reply | None:
        if _with_token(scope) is not None:
            return None
        method, path = scope["method"], scope["path"]
        refused = f"the sandbox bridge does not forward {method} {path} (see bridge.ALLOWED_ROUTES)"
        return self.error(403, refused, "sandbox_forbidden")

    def request_headers(self, scope: Scope) -> Headers:
        out: Headers = []
        inject = bool(_with_token(scope)) and self.token is not None  # no token held: the sandbox's own goes through
        for name, value in scope["headers"]:
            if name in _DROPPED_IN or name.startswith(b"x-forwarded-") or (inject and name == b"authorization"):
                continue
            out.append((name, value))
        if not any(name == b"host" for name, _ in out):
            out.append((b"host", self.default_host.encode()))  # the server derives episode base URLs from Host
        if inject:
            out.append((b"authorization", f"Bearer {self.token}".encode()))
        return out

    async def whole_reply(self, scope: Scope, response: httpx.Response) -> Reply | None:
        """A begun episode comes back rebased and is tracked; an end or abort that passed untracks it."""
        method, path = scope["method"], scope["path"]
        if method == "POST" and path == "/swarm/episodes" and response.status_code == 200:
            reply = await _rebased(response, self._host(scope))
            self._track(json.loads(reply.body).get("episode_id"), opened=True)
            return reply
        closing = _CLOSING.fullmatch(path) if method == "POST" else None
        if closing and response.status_code < 500:  # ended, or already closed/unknown: not ours to abort
            self._track(closing.group(1), opened=False)
        return None

    def _host(self, scope: Scope) -> str:
        """The Host the sandbox asked for (its own loopback and port), else the default."""
        hosts = [value.decode("latin-1") for name, value in scope["headers"] if name == b"host"]
        return hosts[-1] if hosts else self.default_host

    def _track(self, episode_id: object, *, opened: bool) -> None:
        if isinstance(episode_id, str):
            with self.lock:
                (self.open_episodes.add if opened else self.open_episodes.discard)(episode_id)


async def _rebased(response: httpx.Response, host: str) -> Reply:
    """A begun episode's `base_url` is where the sandbox reaches the server: its own loopback
    (the server may have answered with a `--public-url` the sandbox cannot reach)."""
    await response.aread()
    body = response.json()
    if isinstance(body, dict) and "base_url" in body:
        body["base_url"] = f"http://{host}/v1"
    headers = [(k, v) for k, v in reply_headers(response) if k != b"content-encoding"]
    return Reply(response.status_code, headers, json.dumps(body).encode())


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

    def __init__(
        self, access: SwarmAccess | str, *, socket_dir: Path | None = None, socket_name: str = "swarm.sock"
    ) -> None:
        access = SwarmAccess(access) if isinstance(access, str) else access
        if access.token is None and os.environ.get(TOKEN_ENV):
            access = SwarmAccess(access.url, os.environ[TOKEN_ENV])
        self.access = access
        self.port = _server_port(self.access.url)
        self._owns_dir = socket_dir is None  # a `SwarmBridges` group shares (and removes) its own
        self.socket_dir = socket_dir or _private_dir()
        self.socket_path = self.socket_dir / socket_name
        self.inside_socket = f"{SANDBOX_DIR}/{socket_name}"
        self._proxy = _Proxy(self.access, self.port)
        self._minted: str | None = None  # id of the client token issued for this bridge (admin token given)
        self._serving: ServerThread | None = None
        self.aborted_on_close: list[str] = []

    def env(self) -> dict[str, str]:
        """What a sandboxed swarm client needs; deliberately no AGENTJET_TOKEN."""
        return {"AGENTJET_SERVER": f"http://127.0.0.1:{self.port}"}

    def wrap(self, command: Sequence[str], *, python: str = "python3") -> list[str]:
        """`command` run under the forwarder inside the sandbox (`-I`: no agentjet import first)."""
        return forwarded([self], command, python=python)

    def start(self, timeout_s: float = 30.0) -> SwarmBridge:
        self._scope_token()
        self._serving = ServerThread(
            self._proxy, name="agentjet-bridge", uds=str(self.socket_path), timeout_graceful_shutdown=2
        )
        if not self._serving.start(timeout_s):
            self.close()
            raise SandboxError(f"the swarm bridge did not start on {self.socket_path}")
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
        if self._serving is not None:
            self._serving.stop()
            self._abort_left_open()
        self._revoke_minted()
        self._serving = None
        if self._owns_dir:
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


def forwarded(bridges: Sequence[SwarmBridge], command: Sequence[str], *, python: str = "python3") -> list[str]:
    """`command` under the forwarder relaying each bridge's port to its socket (`-I`: no agentjet import first)."""
    pairs = [arg for bridge in bridges for arg in ("--port", str(bridge.port), "--unix", bridge.inside_socket)]
    return [python, "-I", SANDBOX_FORWARDER, *pairs, "--", *command]


class SwarmBridges:
    """Several servers for one sandbox (a task whose policies train on separate servers): one bridge
    each, their sockets (`swarm-PORT.sock`) in one private dir, one forwarder relaying every port.

    Each bridge keeps its own rules and token; agent code reaches server N at `127.0.0.1:PORT_N`, so
    the servers' ports must differ. `AGENTJET_SERVER` names the first."""

    def __init__(self, accesses: Sequence[SwarmAccess | str]) -> None:
        if not accesses:
            raise SandboxError("give at least one swarm server")
        ports = [_server_port(a if isinstance(a, str) else a.url) for a in accesses]
        if len(set(ports)) != len(ports):
            raise SandboxError(f"the swarm servers of one sandbox need distinct ports, got {ports}")
        self.socket_dir = _private_dir()
        self.bridges = [
            SwarmBridge(access, socket_dir=self.socket_dir, socket_name=f"swarm-{port}.sock")
            for access, port in zip(accesses, ports, strict=True)
        ]

    def env(self) -> dict[str, str]:
        return self.bridges[0].env()

    def wrap(self, command: Sequence[str], *, python: str = "python3") -> list[str]:
        return forwarded(self.bridges, command, python=python)

    def start(self, timeout_s: float = 30.0) -> SwarmBridges:
        try:
            for bridge in self.bridges:
                bridge.start(timeout_s)
        except BaseException:
            self.close()
            raise
        return self

    def close(self) -> None:
        """Close every bridge (each aborts what its sandbox left open), then remove the dir; safe twice."""
        for bridge in self.bridges:
            bridge.close()
        with contextlib.suppress(FileNotFoundError):
            shutil.rmtree(self.socket_dir)

    def __enter__(self) -> SwarmBridges:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()
