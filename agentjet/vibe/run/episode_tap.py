"""A loopback pass-through to one swarm server that notes every episode begun through it.

The server lists no episodes over HTTP (only `GET /swarm/episodes/{id}` by id), yet watching a
run needs the ids of one client's recent episodes (their completions show degenerate outputs)
and the moment a new client began its first one (the hot-swap latency). Each client process of a
vibe run therefore talks to its server through its own tap: every request and reply passes
unchanged (streams too); a `POST /swarm/episodes` that succeeds is recorded with the time.

Given the server's token (the run's client token for that server), the tap puts it on every `/swarm`
request, so the client process itself holds no token at all: a client of a run with several servers
reaches each through its own tap, with that server's token. Model calls (`/v1`) keep the episode key
the agent sends.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

import httpx

from agentjet.sandbox.passthrough import Headers, PassThrough, Reply, Scope, ServerThread, reply_headers
from agentjet.vibe.errors import VibeError

__all__ = ["EpisodeTap", "TappedEpisode"]


@dataclass(frozen=True)
class TappedEpisode:
    """An episode the server began for the tapped client; `begun_at` is when its reply passed (wall clock)."""

    episode_id: str
    task_id: str
    kind: str
    begun_at: float


class _Relay(PassThrough):
    """The pass-through that notes begun episodes; everything else passes as it came, to its end."""

    error_type = "tap_error"
    unreachable_code = "tap_upstream"

    def __init__(self, upstream: str, on_begun: Callable[[TappedEpisode], None], token: str | None) -> None:
        # a 30 s connect/send timeout (model calls may take long); a client that leaves stops nothing
        super().__init__(upstream, timeout_s=30.0, forwards_abandoned=True, stops_on_hang_up=False)
        self.on_begun = on_begun
        self.token = token

    def request_headers(self, scope: Scope) -> Headers:
        headers = super().request_headers(scope)
        if self.token is None or not scope["path"].startswith("/swarm/"):
            return headers
        kept = [(name, value) for name, value in headers if name != b"authorization"]
        return [*kept, (b"authorization", f"Bearer {self.token}".encode())]

    async def whole_reply(self, scope: Scope, response: httpx.Response) -> Reply | None:
        if not (scope["method"] == "POST" and scope["path"] == "/swarm/episodes" and response.status_code == 200):
            return None
        await response.aread()
        self._note(response.content)
        return Reply(200, reply_headers(response), response.content)

    def _note(self, content: bytes) -> None:
        try:
            body = json.loads(content)
        except ValueError:
            return
        if isinstance(body, dict) and isinstance(body.get("episode_id"), str):
            self.on_begun(
                TappedEpisode(body["episode_id"], str(body.get("task_id", "")), str(body.get("kind", "")), time.time())
            )


class EpisodeTap:
    """`with EpisodeTap(server_url, token) as tap:` serves `tap.url` until exit. Thread-safe reads."""

    def __init__(self, upstream: str, token: str | None = None) -> None:
        self.upstream = upstream
        self._token = token
        self._lock = threading.Lock()
        self._begun: list[TappedEpisode] = []
        self._first = threading.Event()
        self._socket = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._socket.bind(("127.0.0.1", 0))
        self.port: int = self._socket.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self._serving: ServerThread | None = None

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
        relay = _Relay(self.upstream, self._on_begun, self._token)
        self._serving = ServerThread(relay, name="vibe-episode-tap", sockets=[self._socket])
        if not self._serving.start(timeout_s):
            self.close()
            raise VibeError(f"the episode tap to {self.upstream} did not start on {self.url}")
        return self

    def close(self) -> None:
        """Stop serving (safe to call twice)."""
        if self._serving is not None:
            self._serving.stop()
        self._serving = None
        self._socket.close()

    def __enter__(self) -> EpisodeTap:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.close()
