"""The episode inspector's reads: a server's closed episodes and one episode with its merged tokens.

Both go through the server's admin routes (`GET /swarm/episodes`, `GET /swarm/episodes/{id}?tokens=true`)
with the token the chat holds; a refusal comes back as `InspectorError` with the server's sentence.
"""

from __future__ import annotations

import re
from typing import Any

import httpx

from agentjet.chat.targets import ChatTarget, server_error

__all__ = ["EPISODE_ID", "FILTERS", "InspectorError", "get_episode", "list_episodes"]

EPISODE_ID = re.compile(r"^[A-Za-z0-9_-]{1,128}$")  # never a path: "../tokens" must not reach another route
FILTERS = ("kind", "status", "task_id", "min_reward", "max_reward", "policy_version", "before", "limit")


class InspectorError(Exception):
    """A server refused or could not be reached; `status` is the HTTP status to pass on."""

    def __init__(self, message: str, status: int = 502) -> None:
        super().__init__(message)
        self.status = status


async def list_episodes(target: ChatTarget, filters: dict[str, str]) -> dict[str, Any]:
    params = {k: v for k, v in filters.items() if k in FILTERS and v != ""}
    return await _get(target, "/swarm/episodes", params)


async def get_episode(target: ChatTarget, episode_id: str) -> dict[str, Any]:
    if not EPISODE_ID.match(episode_id):
        raise InspectorError(f"{episode_id[:40]!r} is not an episode id", 422)
    return await _get(target, f"/swarm/episodes/{episode_id}", {"tokens": "true"})


async def _get(target: ChatTarget, path: str, params: dict[str, str]) -> dict[str, Any]:
    headers = {"Authorization": f"Bearer {target.token}"} if target.token else {}
    try:
        async with httpx.AsyncClient(base_url=target.url, timeout=60) as http:
            reply = await http.get(path, params=params, headers=headers)
    except httpx.HTTPError as exc:
        raise InspectorError(f"{target.name}: the server does not answer ({exc.__class__.__name__})") from exc
    if reply.status_code == 403:
        raise InspectorError(f"{target.name}: the chat's token for this server is not its admin token", 403)
    if reply.status_code != 200:
        raise InspectorError(f"{target.name}: HTTP {reply.status_code}: {server_error(reply.text)}", reply.status_code)
    body: dict[str, Any] = reply.json()
    return body
