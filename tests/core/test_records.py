"""What a client did is recorded whole: `end` waits for running calls, a full disk loses nothing, storage is bounded."""

from __future__ import annotations

import contextlib
import os
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from agentjet.core import StorageFull, SwarmClient
from agentjet.core.testing import RunningServer
from agentjet.core.training.checkpoints import prune_adapters
from tests.conftest import TOKEN
from tests.core.test_http_errors import assert_error

HEADERS = {"Authorization": f"Bearer {TOKEN}"}
CHAT = {"model": "tiny", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 8}


def _begin(url: str) -> dict[str, Any]:
    body: dict[str, Any] = httpx.post(f"{url}/swarm/episodes", json={"task_id": "t"}, headers=HEADERS).json()
    return body


def _chat_in_thread(url: str, key: str, replies: list[httpx.Response]) -> threading.Thread:
    def call() -> None:
        replies.append(
            httpx.post(f"{url}/v1/chat/completions", json=CHAT, headers={"Authorization": f"Bearer {key}"}, timeout=60)
        )

    thread = threading.Thread(target=call)
    thread.start()
    return thread


def _wait_in_flight(url: str, count: int) -> None:
    deadline = time.monotonic() + 10
    while httpx.get(f"{url}/swarm/status", headers=HEADERS).json()["calls_in_flight"] != count:
        assert time.monotonic() < deadline
        time.sleep(0.01)


@pytest.fixture
def slow_server(live_server: Callable[..., RunningServer], scripted_backend: Any) -> Callable[..., RunningServer]:
    def make(**settings: Any) -> RunningServer:
        return live_server(scripted_backend(["one two three four five six"], token_delay_s=0.15), **settings)

    return make


def test_end_waits_for_a_running_call_and_records_it(slow_server: Callable[..., RunningServer]) -> None:
    server = slow_server()
    episode = _begin(server.url)
    replies: list[httpx.Response] = []
    thread = _chat_in_thread(server.url, episode["api_key"], replies)
    _wait_in_flight(server.url, 1)
    end = httpx.post(f"{server.url}/swarm/episodes/{episode['episode_id']}/end", json={"reward": 1}, headers=HEADERS)
    thread.join()
    assert replies[0].status_code == 200  # the agent received the call...
    assert end.status_code == 200 and end.json()["calls"] == 1  # ...and so it is in the record
    record = httpx.get(f"{server.url}/swarm/episodes/{episode['episode_id']}", headers=HEADERS).json()
    assert record["calls"][0]["completion_text"] == replies[0].json()["choices"][0]["message"]["content"]


def test_end_that_cannot_wait_long_enough_is_a_409_and_loses_nothing(
    slow_server: Callable[..., RunningServer],
) -> None:
    server = slow_server(end_wait_s=0.1)
    episode = _begin(server.url)
    replies: list[httpx.Response] = []
    thread = _chat_in_thread(server.url, episode["api_key"], replies)
    _wait_in_flight(server.url, 1)
    url = f"{server.url}/swarm/episodes/{episode['episode_id']}/end"
    assert_error(httpx.post(url, json={"reward": 1}, headers=HEADERS), 409, code="calls_in_flight")
    thread.join()
    assert replies[0].status_code == 200
    again = httpx.post(url, json={"reward": 1}, headers=HEADERS)
    assert again.status_code == 200 and again.json()["calls"] == 1


def test_a_call_arriving_while_end_waits_is_refused(slow_server: Callable[..., RunningServer]) -> None:
    server = slow_server()
    episode = _begin(server.url)
    first: list[httpx.Response] = []
    thread = _chat_in_thread(server.url, episode["api_key"], first)
    _wait_in_flight(server.url, 1)
    ended: list[httpx.Response] = []
    url = f"{server.url}/swarm/episodes/{episode['episode_id']}/end"
    ender = threading.Thread(target=lambda: ended.append(httpx.post(url, json={"reward": 1}, headers=HEADERS)))
    ender.start()
    time.sleep(0.1)
    late = httpx.post(
        f"{server.url}/v1/chat/completions", json=CHAT, headers={"Authorization": f"Bearer {episode['api_key']}"}
    )
    thread.join()
    ender.join()
    assert late.status_code in (401, 409)  # ending (409) or already ended (401): never half-recorded
    assert ended[0].status_code == 200 and ended[0].json()["calls"] == 1


# ---- a full disk ---------------------------------------------------------------------------------
@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 4 MB tmpfs: a real ENOSPC for the server's journal (root only: CI runs as root)."""
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs needs root (CI runs as root)")
    mount = tmp_path / "disk"
    mount.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(mount)], check=True)
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def _fill(disk: Path) -> Path:
    filler = disk / "filler"
    with contextlib.suppress(OSError), filler.open("wb") as handle:
        while True:
            handle.write(b"\0" * 65536)
            handle.flush()
    return filler


def test_a_full_disk_is_a_retryable_507_and_the_episode_stays_open(
    live_server: Callable[..., RunningServer], echo_backend: Any, small_disk: Path
) -> None:
    server = live_server(echo_backend, state_dir=small_disk / "state")
    with SwarmClient(server.url, token=TOKEN, retries=1, backoff_s=0.1) as client:
        episode = client.begin_episode("t")
        key = {"Authorization": f"Bearer {episode.api_key}"}
        assert httpx.post(f"{server.url}/v1/chat/completions", json=CHAT, headers=key).status_code == 200
        filler = _fill(small_disk)
        url = f"{server.url}/swarm/episodes/{episode.episode_id}/end"
        with httpx.Client(headers=HEADERS) as http:
            full = http.post(url, json={"reward": 0.5})
            assert_error(full, 507, code="storage_full")
            assert full.headers.get("connection") != "close"  # the connection survives
            assert http.get(f"{server.url}/swarm/episodes/{episode.episode_id}").json()["status"] == "open"
        with pytest.raises(StorageFull):
            episode.end(0.5)  # one attempt only: the typed error
        assert not episode.is_closed
        client.retries = 50
        results: list[Any] = []
        worker = threading.Thread(target=lambda: results.append(episode.end(0.5)))
        worker.start()
        time.sleep(0.5)
        filler.unlink()  # space comes back while the SDK retries
        worker.join(timeout=60)
    assert results and results[0]["status"] == "ended" and results[0]["calls"] == 1
    record = httpx.get(f"{server.url}/swarm/episodes/{episode.episode_id}", headers=HEADERS).json()
    assert record["status"] == "ended" and record["reward"] == 0.5


# ---- storage stays bounded -----------------------------------------------------------------------
def test_old_adapters_are_pruned_but_the_newest_and_the_checkpoints_stay(tmp_path: Path) -> None:
    adapters = tmp_path / "adapters"
    for step in range(1, 11):
        (adapters / f"step-{step}").mkdir(parents=True)
    (adapters / "not-an-adapter").mkdir()
    deleted = prune_adapters(adapters, newest=3, also={4, 9})
    assert deleted == [1, 2, 3, 5, 6, 7]
    assert sorted(p.name for p in adapters.iterdir()) == ["not-an-adapter", "step-10", "step-4", "step-8", "step-9"]
