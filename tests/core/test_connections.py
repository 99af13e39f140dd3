"""Slow, silent and too many connections are closed; the server keeps answering everyone else.

Raw sockets on loopback play the bad peers: one that connects and says nothing, one that sends
its request head a byte at a time, one that stops half-way through a body, one that never reads
a long reply, and more connections than the cap.
"""

from __future__ import annotations

import socket
import struct
import time
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from agentjet.core.backends.fakes import ScriptedBackend
from agentjet.core.testing import RunningServer
from tests.conftest import TOKEN

LIMITS = {"header_timeout_s": 0.5, "body_timeout_s": 0.5, "write_timeout_s": 0.5}


def _connect(server: RunningServer) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", server.port), timeout=5)
    return sock


def _closed_within(sock: socket.socket, seconds: float) -> bool:
    """Whether the server closes `sock` within `seconds` (reads until EOF, discarding a reply)."""
    sock.settimeout(seconds)
    deadline = time.monotonic() + seconds
    try:
        while time.monotonic() < deadline:
            if not sock.recv(65536):
                return True
    except TimeoutError:
        return False
    except ConnectionResetError:
        return True
    return False


def _healthy(server: RunningServer) -> bool:
    return httpx.get(f"{server.url}/health", timeout=5).status_code == 200


@pytest.fixture
def server(live_server: Callable[..., RunningServer], echo_backend: Any) -> RunningServer:
    return live_server(echo_backend, **LIMITS)


def test_a_silent_connection_is_closed_after_the_header_timeout(server: RunningServer) -> None:
    sock = _connect(server)
    assert _closed_within(sock, 3.0)
    assert _healthy(server)


def test_a_request_head_sent_a_byte_at_a_time_is_cut_off(server: RunningServer) -> None:
    sock = _connect(server)
    head = b"GET /health HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"a" * 200
    started = time.monotonic()
    closed = False
    for byte in head:
        try:
            sock.send(bytes([byte]))
        except OSError:
            closed = True
            break
        time.sleep(0.02)  # 4 s in all, well past the 0.5 s header timeout
    assert closed or _closed_within(sock, 2.0)
    assert time.monotonic() - started < 5
    assert _healthy(server)


def test_a_body_that_stops_half_way_is_cut_off(server: RunningServer) -> None:
    sock = _connect(server)
    sock.sendall(
        b"POST /swarm/episodes HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        + f"Authorization: Bearer {TOKEN}\r\nContent-Length: 1000\r\n\r\n".encode()
        + b'{"task_id": '
    )
    assert _closed_within(sock, 3.0)
    status = httpx.get(f"{server.url}/swarm/status", headers={"Authorization": f"Bearer {TOKEN}"}).json()
    assert status["episodes"]["in_flight"] == 0  # the half request began nothing


def test_keep_alive_connections_still_work(server: RunningServer) -> None:
    with httpx.Client(base_url=server.url) as client:
        for _ in range(3):
            assert client.get("/health").status_code == 200
            time.sleep(0.1)  # idle between requests: within the keep-alive time


def test_more_connections_than_the_cap_get_a_503_and_the_rest_keep_working(
    live_server: Callable[..., RunningServer], echo_backend: Any
) -> None:
    server = live_server(echo_backend, max_connections=4, header_timeout_s=30.0)
    held = [_connect(server) for _ in range(4)]
    time.sleep(0.2)
    extra = _connect(server)
    extra.settimeout(5)
    reply = extra.recv(4096)
    assert reply.startswith(b"HTTP/1.1 503") and b"too_many_connections" in reply
    for sock in held:
        sock.close()
    time.sleep(0.2)
    assert _healthy(server)


def test_a_peer_that_never_reads_its_stream_is_dropped(
    live_server: Callable[..., RunningServer], tiny_tokenizer: Any
) -> None:
    backend = ScriptedBackend(tiny_tokenizer, ["word " * 1500])
    server = live_server(backend, **LIMITS)
    begun = httpx.post(
        f"{server.url}/swarm/episodes", json={"task_id": "t"}, headers={"Authorization": f"Bearer {TOKEN}"}
    )
    key = begun.json()["api_key"]
    body = (
        b'{"model": "tiny", "stream": true, "n": 16, "max_tokens": 1500, '
        b'"messages": [{"role": "user", "content": "hi"}]}'
    )
    sock = _connect(server)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.sendall(
        b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        + f"Authorization: Bearer {key}\r\nContent-Length: {len(body)}\r\n\r\n".encode()
        + body
    )
    headers = {"Authorization": f"Bearer {TOKEN}"}
    deadline = time.monotonic() + 10
    while httpx.get(f"{server.url}/swarm/status", headers=headers).json()["calls_in_flight"] == 0:
        assert time.monotonic() < deadline, "the streamed call never started"
        time.sleep(0.05)
    time.sleep(3.0)  # never read: the server's send buffer fills and stays full past the write timeout
    status = httpx.get(f"{server.url}/swarm/status", headers=headers).json()
    assert status["calls_in_flight"] == 0  # the stalled stream was dropped, its call cancelled, not held
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    sock.close()
    assert _healthy(server)
