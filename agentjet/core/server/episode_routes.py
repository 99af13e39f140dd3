"""`/swarm/episodes`: begin, end, abort and inspect episodes (admin token: any; client token: its own).

`GET /swarm/episodes` (admin only) pages through the journal's closed episodes, newest first, with
filters: what the chat's episode inspector lists."""

from __future__ import annotations

import asyncio
import math
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Header, Query, Request
from pydantic import BaseModel, ConfigDict, Field, field_validator

from agentjet.core.server.deps import AdminDep, CallerDep, ChatDep, EngineDep
from agentjet.core.server.wire import Utf8Body
from agentjet.core.training.metrics import episode_with_merge_report
from agentjet.core.types import CLIENT_ID_PATTERN, EpisodeKind, EpisodeRecord

__all__ = ["router"]

router = APIRouter(prefix="/swarm/episodes", tags=["episodes"])

_ID = Field(min_length=1, max_length=128)


class _WireIn(Utf8Body):
    model_config = ConfigDict(extra="forbid")


class BeginEpisodeIn(_WireIn):
    task_id: str = Field(min_length=1, max_length=256)
    kind: Literal["train", "eval"] = "train"
    base_model: bool = Field(False, description="eval only: every call samples the base weights, not the policy")
    agent: str | None = Field(None, min_length=1, max_length=128)
    client_id: str | None = Field(None, pattern=CLIENT_ID_PATTERN, description="who begins it (C4/C5, status)")


class EpisodeOut(BaseModel):
    episode_id: str
    base_url: str
    api_key: str
    expires_at: float
    task_id: str
    kind: str
    agent: str | None


class EndEpisodeIn(_WireIn):
    reward: float
    metadata: dict[str, Any] = Field(default_factory=dict)

    @field_validator("reward")
    @classmethod
    def _finite(cls, value: float) -> float:
        if not math.isfinite(value):
            raise ValueError("reward must be a finite number")
        return value


class ClosedEpisodeOut(BaseModel):
    episode_id: str
    status: str
    reward: float | None
    calls: int


def _base_url(request: Request, engine_public_url: str | None) -> str:
    root = engine_public_url or str(request.base_url)
    return root.rstrip("/") + "/v1"


@router.post("", response_model=EpisodeOut)
async def begin_episode(
    body: BeginEpisodeIn,
    engine: EngineDep,
    principal: CallerDep,
    request: Request,
    x_agentjet_client: Annotated[str | None, Header(pattern=CLIENT_ID_PATTERN)] = None,
) -> EpisodeOut:
    client_id = body.client_id or x_agentjet_client  # the body wins; the SDK sends both, equal
    kind = EpisodeKind(body.kind)
    episode, key = engine.begin_episode(
        body.task_id, kind=kind, agent=body.agent, client_id=client_id, principal=principal, base_model=body.base_model
    )
    base_url = _base_url(request, request.app.state.runtime.settings.public_url)
    return EpisodeOut(
        episode_id=episode.episode_id,
        base_url=base_url,
        api_key=key,
        expires_at=episode.expires_at,
        task_id=episode.task_id,
        kind=str(episode.kind),
        agent=episode.agent,
    )


@router.post("/{episode_id}/end", response_model=ClosedEpisodeOut)
async def end_episode(
    episode_id: Annotated[str, _ID], body: EndEpisodeIn, engine: EngineDep, principal: CallerDep
) -> ClosedEpisodeOut:
    record = await engine.end_episode(episode_id, body.reward, body.metadata, principal=principal)
    return ClosedEpisodeOut(
        episode_id=episode_id, status=str(record.status), reward=record.reward, calls=len(record.calls)
    )


@router.post("/{episode_id}/abort", response_model=ClosedEpisodeOut)
async def abort_episode(episode_id: Annotated[str, _ID], engine: EngineDep, principal: CallerDep) -> ClosedEpisodeOut:
    record = await engine.abort_episode(episode_id, principal=principal)
    return ClosedEpisodeOut(episode_id=episode_id, status=str(record.status), reward=None, calls=len(record.calls))


@router.get("")
async def list_episodes(
    engine: EngineDep,
    _: AdminDep,
    kind: Literal["train", "eval"] | None = None,
    status: Literal["ended", "aborted", "reclaimed"] | None = None,
    task_id: Annotated[str | None, Query(max_length=256)] = None,
    min_reward: float | None = None,
    max_reward: float | None = None,
    policy_version: Annotated[int | None, Query(ge=0)] = None,
    before: Annotated[int | None, Query(ge=1, description="page on: the `next_before` of the last page")] = None,
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
) -> dict[str, Any]:
    """Closed episodes newest first (summaries, no calls); `next_before` pages on (null: no more)."""
    rows = await asyncio.to_thread(
        engine.journal.newest, before_seq=before, limit=limit, kind=kind, status=status, task_id=task_id
    )
    kept = [
        _summary(seq, record)
        for seq, record in rows
        if (min_reward is None or (record.reward is not None and record.reward >= min_reward))
        and (max_reward is None or (record.reward is not None and record.reward <= max_reward))
        and (policy_version is None or any(c.policy_version == policy_version for c in record.calls))
    ]
    return {"episodes": kept, "next_before": rows[-1][0] if len(rows) == limit else None}


def _summary(seq: int, record: EpisodeRecord) -> dict[str, Any]:
    return {
        "seq": seq,
        "episode_id": record.episode_id,
        "task_id": record.task_id,
        "kind": str(record.kind),
        "status": str(record.status),
        "reward": record.reward,
        "agent": record.agent,
        "client_id": record.client_id,
        "created_at": record.created_at,
        "closed_at": record.closed_at,
        "calls": len(record.calls),
        "policy_versions": sorted({c.policy_version for c in record.calls}),
    }


@router.get("/{episode_id}")
async def get_episode(
    episode_id: Annotated[str, _ID],
    engine: EngineDep,
    principal: CallerDep,
    chat: ChatDep,
    tokens: Annotated[bool, Query(description="add each merged sample's tokens and loss mask")] = False,
) -> dict[str, Any]:
    """The episode's record; an ended one also gets `merge`: its samples and drifts under the current `merge`."""
    episode = await engine.get_episode(episode_id, principal=principal)
    tokenizer = chat.tokenizer if tokens else None
    return await asyncio.to_thread(episode_with_merge_report, episode, engine.train_config.merge, tokenizer)
