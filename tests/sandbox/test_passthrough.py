"""The loopback pass-through the bridge and the episode tap share: what passes, what it answers itself, hang-ups.

An upstream FastAPI app on loopback echoes what reached it and streams on cue; the pass-through runs
under `ServerThread` (or is driven as an ASGI app, for the hang-up cases a real client cannot time).
"""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import FastAPI, Request, Response
from fastapi.responses import StreamingResponse

from agentjet.core.testing import RunningServer, serve_in_thread
from agentjet.sandbox.passthrough import Message, PassThrough, Reply, Scope, ServerThread, reply_headers


class Upstream:
    """The server behind the pass-through: `/echo` says what reached it, `/stream` sends one chunk, then the
    rest once `release` is set, `/hang` answers only then; `hanging` is set once either waits; `seen` lists
    every request that arrived, `finished` the streams sent whole."""

    def __init__(self) -> None:
        self.seen: list[dict[str, Any]] = []
        self.release = threading.Event()
        self.finished = threading.Event()
        self.app = FastAPI()
        self.app.add_api_route("/echo", self.echo, methods=["GET", "POST"])
        self.app.add_api_route("/stream", self.stream, methods=["GET"])
        self.app.add_api_route("/hang", self.hang, methods=["POST"])
        self.hanging = threading.Event()

    async def echo(self, request: Request) -> Response:
        body = await request.body()
        seen = {
            "method": request.method,
            "path": request.url.path,
            "query": request.url.query,
            "headers": {k.lower(): v for k, v in request.headers.items()},
            "body": body.decode(),
        }
        self.seen.append(seen)
        return Response(json.dumps(seen), media_type="application/json", headers={"x-upstream": "yes"})

    async def hang(self) -> Response:
        """A call the model is still working on: answers only once `release` is set."""
        self.hanging.set()
        await asyncio.to_thread(self.release.wait, 30)
        return Response(b"{}", media_type="application/json")

    async def stream(self) -> StreamingResponse:
        async def chunks() -> AsyncIterator[bytes]:
            yield b"first;"
            self.hanging.set()
            await asyncio.to_thread(self.release.wait, 30)
            for n in range(3):
                yield f"more-{n};".encode()
            self.finished.set()

        return StreamingResponse(chunks(), media_type="text/event-stream")


@pytest.fixture
def upstream() -> Iterator[tuple[Upstream, RunningServer]]:
    behind = Upstream()
    with serve_in_thread(behind.app) as running:
        yield behind, running
    behind.release.set()


@contextmanager
def serving(app: PassThrough) -> Iterator[str]:
    """`app` on a loopback port; yields its URL."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    thread = ServerThread(app, name="test-passthrough", sockets=[sock])
    try:
        assert thread.start(30.0), "the pass-through did not start"
        yield f"http://127.0.0.1:{port}"
    finally:
        thread.stop()
        sock.close()


class Rebodied(PassThrough):
    """Refuses `/refused`, sends `/echo` replies whole with a body of its own, relays the rest."""

    error_type = "test_error"
    unreachable_code = "test_unreachable"

    def refusal(self, scope: Scope) -> Reply | None:
        return self.error(403, "not here", "test_forbidden") if scope["path"] == "/refused" else None

    async def whole_reply(self, scope: Scope, response: httpx.Response) -> Reply | None:
        if scope["path"] != "/echo":
            return None
        await response.aread()
        return Reply(201, reply_headers(response), b"rewritten:" + response.content[:10])


def test_a_request_and_its_reply_pass_unchanged_but_for_hop_by_hop_headers(
    upstream: tuple[Upstream, RunningServer],
) -> None:
    behind, running = upstream
    with serving(PassThrough(running.url, timeout_s=10.0)) as url:
        headers = {"x-mine": "kept", "proxy-authorization": "Basic secret", "te": "trailers"}
        reply = httpx.post(f"{url}/echo?a=1&b=two", content=b'{"x": 1}', headers=headers, timeout=10)
    assert reply.status_code == 200 and reply.headers["x-upstream"] == "yes"
    seen = reply.json()
    assert seen == behind.seen[0]
    assert (seen["method"], seen["path"], seen["query"], seen["body"]) == ("POST", "/echo", "a=1&b=two", '{"x": 1}')
    assert seen["headers"]["x-mine"] == "kept" and seen["headers"]["content-length"] == "8"
    assert "proxy-authorization" not in seen["headers"] and "te" not in seen["headers"]


def test_a_stream_arrives_chunk_by_chunk_as_the_server_sends_it(upstream: tuple[Upstream, RunningServer]) -> None:
    behind, running = upstream
    with serving(PassThrough(running.url, timeout_s=10.0)) as url, httpx.stream("GET", f"{url}/stream") as reply:
        chunks = reply.iter_raw()
        assert next(chunks) == b"first;"  # before the server was let to send the rest
        behind.release.set()
        assert b"".join(chunks) == b"more-0;more-1;more-2;"
    assert reply.headers["content-type"].startswith("text/event-stream")


def test_a_gone_server_is_a_502_in_the_openai_error_shape() -> None:
    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        gone = f"http://127.0.0.1:{sock.getsockname()[1]}"
    with serving(Rebodied(gone, timeout_s=5.0)) as url:
        reply = httpx.get(f"{url}/health", timeout=10)
    assert reply.status_code == 502 and reply.headers["content-type"] == "application/json"
    error = reply.json()["error"]
    assert error["type"] == "test_error" and error["code"] == "test_unreachable" and error["param"] is None
    assert error["message"].startswith("swarm server unreachable: ")


def test_a_body_over_the_limit_is_a_413_and_never_reaches_the_server(upstream: tuple[Upstream, RunningServer]) -> None:
    behind, running = upstream
    with serving(Rebodied(running.url, timeout_s=10.0, max_body_bytes=100)) as url:
        at_limit = httpx.post(f"{url}/echo", content=b"x" * 100, timeout=10)
        over = httpx.post(f"{url}/echo", content=b"x" * 101, timeout=10)
    assert at_limit.status_code == 201
    assert over.status_code == 413 and over.json()["error"]["code"] == "body_too_large"
    assert [seen["body"] for seen in behind.seen] == ["x" * 100]


def test_a_refused_request_is_answered_by_the_hook_and_never_reaches_the_server(
    upstream: tuple[Upstream, RunningServer],
) -> None:
    behind, running = upstream
    with serving(Rebodied(running.url, timeout_s=10.0)) as url:
        reply = httpx.post(f"{url}/refused", content=b"{}", timeout=10)
    assert reply.status_code == 403
    assert reply.json()["error"] == {
        "message": "not here",
        "type": "test_error",
        "code": "test_forbidden",
        "param": None,
    }
    assert behind.seen == []


def test_a_whole_reply_from_the_hook_replaces_the_relay_with_its_own_length(
    upstream: tuple[Upstream, RunningServer],
) -> None:
    _, running = upstream
    with serving(Rebodied(running.url, timeout_s=10.0)) as url:
        reply = httpx.get(f"{url}/echo", timeout=10)
    assert reply.status_code == 201 and reply.content == b'rewritten:{"method":'
    assert reply.headers["content-length"] == str(len(reply.content)) and reply.headers["x-upstream"] == "yes"


# ---- hang-ups, driven as an ASGI app -----------------------------------------------------------------


@asynccontextmanager
async def started(app: PassThrough) -> AsyncIterator[None]:
    """`app` through its lifespan startup; shut down on exit."""
    inbox: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
    outbox: asyncio.Queue[Message] = asyncio.Queue()
    lifespan = asyncio.ensure_future(app({"type": "lifespan"}, inbox.get, outbox.put))
    await inbox.put({"type": "lifespan.startup"})
    assert (await outbox.get())["type"] == "lifespan.startup.complete"
    try:
        yield
    finally:
        await inbox.put({"type": "lifespan.shutdown"})
        assert (await outbox.get())["type"] == "lifespan.shutdown.complete"
        await lifespan


def _scope(method: str, path: str) -> dict[str, Any]:
    return {
        "type": "http",
        "method": method,
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "headers": [],
    }


@pytest.mark.parametrize("stops_on_hang_up", [True, False])
async def test_a_client_that_hangs_up_mid_reply_stops_the_relay_unless_told_otherwise(
    upstream: tuple[Upstream, RunningServer], stops_on_hang_up: bool
) -> None:
    behind, running = upstream
    app = PassThrough(running.url, timeout_s=10.0, stops_on_hang_up=stops_on_hang_up)
    client_messages: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
    await client_messages.put({"type": "http.request", "body": b"", "more_body": False})
    sent: list[Message] = []
    first_chunk = asyncio.Event()

    async def send(message: Message) -> None:
        sent.append(message)
        if message.get("body"):
            first_chunk.set()

    async with started(app):
        call = asyncio.ensure_future(app(_scope("GET", "/stream"), client_messages.get, send))
        await asyncio.wait_for(first_chunk.wait(), 10)
        await client_messages.put({"type": "http.disconnect"})
        if stops_on_hang_up:
            await asyncio.wait_for(call, 10)  # returns while the server still holds the rest
            behind.release.set()
        else:
            behind.release.set()
            await asyncio.wait_for(call, 10)
    bodies = b"".join(message.get("body", b"") for message in sent if message["type"] == "http.response.body")
    assert bodies == (b"first;" if stops_on_hang_up else b"first;more-0;more-1;more-2;")


@pytest.mark.parametrize("forwards_abandoned", [False, True])
async def test_a_request_abandoned_mid_body_is_dropped_unless_told_to_forward_what_came(
    upstream: tuple[Upstream, RunningServer], forwards_abandoned: bool
) -> None:
    behind, running = upstream
    app = PassThrough(running.url, timeout_s=10.0, forwards_abandoned=forwards_abandoned)
    messages: Iterator[Message] = iter(
        [{"type": "http.request", "body": b"part", "more_body": True}, {"type": "http.disconnect"}]
    )
    sent: list[Message] = []

    async def receive() -> Message:
        return next(messages, {"type": "http.disconnect"})  # as uvicorn does once the client left

    async def send(message: Message) -> None:
        sent.append(message)

    async with started(app):
        await asyncio.wait_for(app(_scope("POST", "/echo"), receive, send), 10)
    assert [seen["body"] for seen in behind.seen] == (["part"] if forwards_abandoned else [])
    assert (sent[0]["status"] if sent else None) == (200 if forwards_abandoned else None)


@pytest.mark.filterwarnings("ignore::pytest.PytestUnhandledThreadExceptionWarning")  # uvicorn exits its thread
def test_a_server_thread_that_cannot_listen_says_so(tmp_path: Path) -> None:
    thread = ServerThread(
        PassThrough("http://127.0.0.1:1", timeout_s=1.0), name="test", uds=str(tmp_path / "no/x.sock")
    )
    assert thread.start(10.0) is False
    thread.stop()


def _http_get(conn: socket.socket, path: str) -> bytes:
    """One keep-alive GET on an open connection; the whole reply (headers and a content-length body)."""
    conn.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode())
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(65536)
        if not chunk:
            return data  # closed by the other side
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = int(
        next(line.split(b":")[1] for line in head.split(b"\r\n") if line.lower().startswith(b"content-length"))
    )
    while len(body) < length:
        body += conn.recv(65536)
    return head + b"\r\n\r\n" + body


def test_an_idle_keep_alive_connection_outlives_the_agents_pools(upstream: tuple[Upstream, RunningServer]) -> None:
    """Agents' httpx pools (the openai SDK's too) drop idle connections after 5 s. A listener that closed them
    at 5 s too would race a request sent at that moment into a connection error; ours keeps them 65 s, so
    the client always closes first (the swarm server too). Our own pool to the server drops them sooner."""
    import time

    import openai._constants

    from agentjet.core.config import ServerSettings
    from agentjet.sandbox.passthrough import CLIENT_KEEPALIVE_S, UPSTREAM_KEEPALIVE_S

    sdk_expiry = openai._constants.DEFAULT_CONNECTION_LIMITS.keepalive_expiry or 0.0
    assert CLIENT_KEEPALIVE_S > max(httpx.Limits().keepalive_expiry or 0.0, sdk_expiry) + 30
    assert UPSTREAM_KEEPALIVE_S < ServerSettings().keep_alive_s and CLIENT_KEEPALIVE_S <= ServerSettings().keep_alive_s
    _, running = upstream
    with serving(PassThrough(running.url, timeout_s=10.0)) as url:
        port = int(url.rsplit(":", 1)[1])
        with socket.create_connection(("127.0.0.1", port), timeout=10) as conn:
            assert _http_get(conn, "/echo").startswith(b"HTTP/1.1 200")
            time.sleep(6.0)  # idle longer than the 5 s uvicorn keeps a connection by default
            assert _http_get(conn, "/echo").startswith(b"HTTP/1.1 200")


@pytest.mark.parametrize("path", ["/hang", "/stream"])
def test_stopping_answers_what_is_still_open_at_once_without_a_traceback(
    upstream: tuple[Upstream, RunningServer], path: str, caplog: pytest.LogCaptureFixture
) -> None:
    """A stopped sandboxed client leaves calls open; stopping the pass-through ends each one itself (a 503, or
    the stream cut where it is) instead of waiting out uvicorn's graceful shutdown and logging a traceback."""
    behind, running = upstream
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    url = f"http://127.0.0.1:{sock.getsockname()[1]}"
    thread = ServerThread(PassThrough(running.url, timeout_s=10.0), name="test-drain", sockets=[sock],
                          timeout_graceful_shutdown=30)  # fmt: skip
    replies: list[httpx.Response] = []

    def call() -> None:
        with httpx.Client(timeout=30) as client:
            request = client.build_request("POST" if path == "/hang" else "GET", url + path)
            reply = client.send(request, stream=True)
            reply.read()
            replies.append(reply)

    assert thread.start(30.0)
    caller = threading.Thread(target=call)
    caller.start()
    try:
        assert behind.hanging.wait(10)
        time.sleep(0.2)  # the stream's first chunk on its way through
        started = time.monotonic()
        thread.stop(timeout_s=20)
        stopped_s = time.monotonic() - started
        caller.join(10)
    finally:
        behind.release.set()
        sock.close()
    assert stopped_s < 5, "stop waited for the graceful-shutdown timeout"
    (reply,) = replies
    if path == "/hang":
        assert reply.status_code == 503
        assert reply.json()["error"]["code"] == "closing"
    else:
        assert reply.status_code == 200 and reply.content == b"first;"
    assert not behind.finished.is_set()
    logged = "\n".join(r.getMessage() for r in caplog.records)
    assert "Exception in ASGI application" not in logged and "graceful shutdown exceeded" not in logged
