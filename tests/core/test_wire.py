"""Lone UTF-16 surrogates (valid JSON, invalid text) are a 422 at the boundary, never a 500."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx

from agentjet.core.server.wire import find_lone_surrogate
from agentjet.core.testing import RunningServer


def test_find_lone_surrogate_names_the_path() -> None:
    assert find_lone_surrogate({"a": [{"b": "ok"}, {"c": "x\udcff"}]}) == "a[1].c"
    assert find_lone_surrogate({"k\ud800": 1}) == "k\ud800"
    assert find_lone_surrogate({"a": ["fine", "日本", "🙂"]}) is None


def _post(http: httpx.Client, path: str, body: str, headers: dict[str, str]) -> httpx.Response:
    return http.post(path, content=body.encode(), headers={**headers, "content-type": "application/json"})


def test_surrogates_in_bodies_are_422(
    live_server: Callable[..., RunningServer], echo_backend: Any, server_headers: dict[str, str]
) -> None:
    server = live_server(echo_backend)
    with httpx.Client(base_url=server.url, timeout=10) as http:
        assert _post(http, "/swarm/episodes", '{"task_id": "t\\udcff"}', server_headers).status_code == 422
        episode = http.post("/swarm/episodes", json={"task_id": "t"}, headers=server_headers).json()
        key = {"Authorization": f"Bearer {episode['api_key']}"}
        chat = '{"model": "m", "messages": [{"role": "user", "content": "hi \\udcff"}]}'
        reply = _post(http, "/v1/chat/completions", chat, key)
        assert reply.status_code == 422
        assert "messages[0].content" in reply.json()["error"]["message"]
        end = _post(
            http,
            f"/swarm/episodes/{episode['episode_id']}/end",
            '{"reward": 1, "metadata": {"n": "\\ud800"}}',
            server_headers,
        )
        assert end.status_code == 422
        assert (
            http.post(
                f"/swarm/episodes/{episode['episode_id']}/end", json={"reward": 1.0}, headers=server_headers
            ).status_code
            == 200
        )
