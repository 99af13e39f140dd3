"""A backend failure after the SSE headers went out ends the stream with an error event."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import httpx

from agentjet.core.errors import BackendError
from agentjet.core.testing import RunningServer


def _explode(prompt: str) -> str:
    raise BackendError("decode step failed (simulated)")


def test_backend_error_mid_stream_is_an_error_event(
    live_server: Callable[..., RunningServer], scripted_backend: Callable[..., Any], server_headers: dict[str, str]
) -> None:
    server = live_server(scripted_backend(_explode))
    with httpx.Client(base_url=server.url, timeout=10) as http:
        episode = http.post("/swarm/episodes", json={"task_id": "t"}, headers=server_headers).json()
        body = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "stream": True}
        reply = http.post("/v1/chat/completions", json=body, headers={"Authorization": f"Bearer {episode['api_key']}"})
        events = [line[len("data: ") :] for line in reply.text.splitlines() if line.startswith("data: ")]
        assert reply.status_code == 200
        assert json.loads(events[-1])["error"]["code"] == "stream_failed"
        assert "[DONE]" not in events
        record = http.get(f"/swarm/episodes/{episode['episode_id']}", headers=server_headers).json()
        assert record["calls"] == [] and record["calls_in_flight"] == 0  # a failed call is not tracked
        assert http.get("/health").json()["state"] == "rolling"
