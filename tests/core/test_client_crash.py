"""A client killed with SIGKILL mid-episode: reclaimed after the idle timeout, never trained,
while other clients are served throughout."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

import httpx

from agentjet.core.testing import RunningServer

_DOOMED_CLIENT = """
import sys, time, httpx
url, token = sys.argv[1], sys.argv[2]
auth = {"Authorization": "Bearer " + token}
ep = httpx.post(url + "/swarm/episodes", json={"task_id": "doomed"}, headers=auth).json()
r = httpx.post(ep["base_url"] + "/chat/completions", headers={"Authorization": "Bearer " + ep["api_key"]},
               json={"model": "m", "messages": [{"role": "user", "content": "hi"}]})
r.raise_for_status()
print(ep["episode_id"], ep["api_key"], flush=True)
time.sleep(600)
"""


def test_killed_client_is_reclaimed_and_others_keep_going(
    live_server: Callable[..., RunningServer], scripted_backend: Callable[..., Any], server_headers: dict[str, str]
) -> None:
    server = live_server(scripted_backend(["fine thanks"]), idle_timeout_s=1.0, janitor_interval_s=0.1)
    doomed = subprocess.Popen(
        [sys.executable, "-c", _DOOMED_CLIENT, server.url, "test-server-token-012345"],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert doomed.stdout is not None
    episode_id, api_key = doomed.stdout.readline().split()
    doomed.send_signal(signal.SIGKILL)
    assert doomed.wait(timeout=10) == -signal.SIGKILL

    with httpx.Client(base_url=server.url, headers=server_headers, timeout=10) as http:
        survivor = http.post("/swarm/episodes", json={"task_id": "survivor"}).json()
        survivor_headers = {"Authorization": f"Bearer {survivor['api_key']}"}
        served = 0
        deadline = time.monotonic() + 20
        while http.get(f"/swarm/episodes/{episode_id}").json()["status"] == "open":
            assert time.monotonic() < deadline, "the killed client's episode was never reclaimed"
            reply = http.post(
                "/v1/chat/completions",
                headers=survivor_headers,
                json={"model": "m", "messages": [{"role": "user", "content": "again"}]},
            )
            assert reply.status_code == 200  # served throughout, keeping its own episode alive
            served += 1
        record = http.get(f"/swarm/episodes/{episode_id}").json()
        assert record["status"] == "reclaimed" and record["reward"] is None
        assert len(record["calls"]) == 1  # kept for inspection, but a reclaimed episode is never trained
        late = http.post(
            "/v1/chat/completions",
            headers={"Authorization": f"Bearer {api_key}"},
            json={"model": "m", "messages": [{"role": "user", "content": "hi"}]},
        )
        assert late.status_code == 401 and "reclaimed" in late.json()["error"]["message"]
        ended = http.post(f"/swarm/episodes/{survivor['episode_id']}/end", json={"reward": 1.0})
        assert ended.status_code == 200 and ended.json()["calls"] == served
        status = http.get("/swarm/status").json()
    assert status["episodes"]["reclaimed"] == 1 and status["episodes"]["finished"] == 1
