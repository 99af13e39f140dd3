"""The SDK's sans-IO plans: what each operation sends and how it reads the replies (no I/O here).

A plan is a generator that yields the `Call`s it needs, receives each `Reply` and returns the
result or raises a typed error; `SwarmClient` and `AsyncSwarmClient` (`client.py`) only perform
the calls. Bodies are checked here, before anything is sent (a NaN reward, a bad client id).
"""

from __future__ import annotations

import logging
import math
import re
import uuid
from collections.abc import Generator, Mapping
from dataclasses import dataclass
from typing import Any, Literal, Protocol, TypeVar
from urllib.parse import quote

import httpx

from agentjet.core.errors import ConfigError, EpisodeClosed, InvalidRequest
from agentjet.core.sdk.client_replies import EpisodeReclaimed, JsonDict, parse_object
from agentjet.core.types import CLIENT_ID_PATTERN

__all__ = [
    "Call",
    "Plan",
    "Reply",
    "SupportsModelDump",
    "begin_call",
    "checked_client_id",
    "client_call",
    "config_body",
    "end_body",
    "end_plan",
    "episode_path",
    "error_code",
    "one_call",
    "token_plan",
]

log = logging.getLogger(__name__)

T = TypeVar("T")


class SupportsModelDump(Protocol):
    """A pydantic model (e.g. `TrainConfig`) as `configure` accepts it."""

    def model_dump(self, *, mode: str = ...) -> dict[str, Any]: ...


@dataclass(frozen=True)
class Call:
    method: str
    path: str
    body: Any = None


@dataclass(frozen=True)
class Reply:
    response: httpx.Response
    attempts: int  # > 1 when an earlier attempt was lost: the server may have acted on it


Plan = Generator[Call, Reply, T]


def one_call(call: Call) -> Plan[JsonDict]:
    """Most operations: send one call and return its JSON object, errors typed."""
    reply = yield call
    return parse_object(reply.response)


def episode_path(episode_id: str) -> str:
    return f"/swarm/episodes/{quote(episode_id, safe='')}"


def end_plan(episode_id: str, body: JsonDict) -> Plan[JsonDict]:
    """End an episode. When a retried end meets 409, the lost first attempt may have ended it:
    the episode record decides, so a reward is never reported as lost when it was kept."""
    path = episode_path(episode_id)
    reply = yield Call("POST", f"{path}/end", body)
    try:
        return parse_object(reply.response)
    except EpisodeClosed as exc:
        if reply.attempts == 1 or isinstance(exc, EpisodeReclaimed):
            raise
        closed = exc
    record = parse_object((yield Call("GET", path)).response)
    if record.get("status") != "ended":
        raise closed
    log.info("episode end confirmed after a lost reply id=%s", episode_id)
    calls = record.get("calls")
    count = len(calls) if isinstance(calls, list) else calls
    reward = record.get("reward")
    return {"episode_id": episode_id, "status": "ended", "reward": reward, "calls": count}


def begin_call(task_id: str, kind: str, agent: str | None, client_id: str, *, base_model: bool = False) -> Call:
    if kind not in ("train", "eval"):
        raise InvalidRequest(f"kind must be 'train' or 'eval', got {kind!r}", param="kind")
    body: dict[str, Any] = {"task_id": task_id, "kind": kind, "agent": agent, "client_id": client_id}
    if base_model:  # sent only when asked: a server from before it still takes every other begin
        body["base_model"] = True
    return Call("POST", "/swarm/episodes", body)


def client_call(client_id: str, action: Literal["update", "heartbeat"], ready: bool | None = None) -> Call:
    body = None if ready is None else {"ready": ready}
    return Call("POST", f"/swarm/clients/{client_id}/{action}", body)


def checked_client_id(client_id: str | None) -> str:
    """The given id (checked here, so a bad one fails at construction, not on every begin) or a fresh one."""
    if client_id is None:
        return uuid.uuid4().hex
    if not isinstance(client_id, str) or not re.fullmatch(CLIENT_ID_PATTERN, client_id):
        rule = "1-64 characters of A-Z a-z 0-9 _ . : - starting with a letter or digit"
        raise ConfigError(f"client_id must be {rule}, got {client_id!r}")
    return client_id


def end_body(reward: float, metadata: Mapping[str, Any] | None) -> JsonDict:
    """Refuse a NaN/inf reward here: JSON cannot carry it and it would poison the batch."""
    if isinstance(reward, bool) or not isinstance(reward, int | float) or not math.isfinite(reward):
        raise InvalidRequest(f"reward must be a finite number, got {reward!r}", param="reward")
    return {"reward": float(reward), "metadata": dict(metadata or {})}


def token_plan(method: str, which: str | None = None, name: str | None = None) -> Plan[Any]:
    """The admin's client-token calls: create (returns the secret once), list, revoke."""
    path = "/swarm/tokens" + (f"/{quote(which, safe='')}" if which else "")
    body = parse_object((yield Call(method, path, {"name": name} if name is not None else None)).response)
    return body if method == "POST" else list(body.get("tokens", []))


def error_code(response: httpx.Response) -> str | None:
    try:
        body = response.json()
    except ValueError:
        return None
    error = body.get("error") if isinstance(body, dict) else None
    code = error.get("code") if isinstance(error, dict) else None
    return code if isinstance(code, str) else None


def config_body(config: SupportsModelDump | Mapping[str, Any]) -> JsonDict:
    if isinstance(config, Mapping):
        return dict(config)
    return config.model_dump(mode="json")
