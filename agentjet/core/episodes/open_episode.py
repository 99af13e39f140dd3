"""An episode between begin and end, as the engine holds it in memory (mutated only by the engine)."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from typing import Any

from agentjet.core.errors import InvalidRequest
from agentjet.core.types import CallRecord, EpisodeKind, EpisodeStatus

__all__ = ["OpenEpisode", "check_metadata"]


@dataclass
class OpenEpisode:
    """An episode between begin and end; mutated only by the engine."""

    episode_id: str
    task_id: str
    kind: EpisodeKind
    agent: str | None
    client_id: str | None
    owner: str  # the principal that began it ("admin" or a client token id)
    created_at: float
    expires_at: float
    policy_version_at_begin: int
    last_active: float
    base_model: bool = False  # an eval episode every call of which samples the base weights (version 0)
    calls: list[CallRecord] = field(default_factory=list)
    calls_in_flight: int = 0
    calls_waiting: int = 0  # held at the door during an update: not idle, not in flight
    next_call_index: int = 0
    ending: bool = False  # `end` is waiting for the running calls: no new call may start
    calls_done: asyncio.Event = field(default_factory=asyncio.Event)  # set while calls_in_flight == 0

    def __post_init__(self) -> None:
        self.calls_done.set()

    def view(self) -> dict[str, Any]:
        return {
            "episode_id": self.episode_id,
            "task_id": self.task_id,
            "kind": str(self.kind),
            "agent": self.agent,
            "client_id": self.client_id,
            "owner": self.owner,
            "status": str(EpisodeStatus.OPEN),
            "reward": None,
            "metadata": {},
            "created_at": self.created_at,
            "expires_at": self.expires_at,
            "last_active": self.last_active,
            "calls_in_flight": self.calls_in_flight,
            "policy_version_at_begin": self.policy_version_at_begin,
            "base_model": self.base_model,
            "calls": [c.to_dict() for c in self.calls],
        }


def check_metadata(metadata: dict[str, Any], max_bytes: int) -> None:
    """An episode's end metadata is kept whole in the journal: InvalidRequest past `max_bytes` of JSON."""
    size = len(json.dumps(metadata, separators=(",", ":")))
    if size > max_bytes:
        raise InvalidRequest(
            f"metadata is {size} bytes of JSON; at most {max_bytes} are kept per episode", param="metadata"
        )
