"""The swarm training core. Public API only: what vibe, a3r and users may import.

The names load on first use: `import agentjet.core.trainer` (the GPU check, a training
process) then needs neither httpx (the client) nor anything else the public API pulls in.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agentjet.core.client import AsyncEpisode, AsyncSwarmClient, Episode, EpisodeReclaimed, SwarmClient
    from agentjet.core.config import ServerSettings, TrainConfig
    from agentjet.core.errors import (
        AgentJetError,
        AuthError,
        BackendError,
        ConfigError,
        ContextLengthExceeded,
        EngineNotReady,
        EpisodeBusy,
        EpisodeClosed,
        EpisodeNotFound,
        InvalidRequest,
        ModelError,
        PermissionDenied,
        RequestTooLarge,
        RewardRefused,
        ServerOffline,
        StorageFull,
        TokenNotFound,
        TrainingDown,
    )

__all__ = [
    "AgentJetError",
    "AsyncEpisode",
    "AsyncSwarmClient",
    "AuthError",
    "BackendError",
    "ConfigError",
    "ContextLengthExceeded",
    "EngineNotReady",
    "Episode",
    "EpisodeBusy",
    "EpisodeClosed",
    "EpisodeNotFound",
    "EpisodeReclaimed",
    "InvalidRequest",
    "ModelError",
    "PermissionDenied",
    "RequestTooLarge",
    "RewardRefused",
    "ServerOffline",
    "ServerSettings",
    "StorageFull",
    "SwarmClient",
    "TokenNotFound",
    "TrainConfig",
    "TrainingDown",
]

_CLIENT = ("AsyncEpisode", "AsyncSwarmClient", "Episode", "EpisodeReclaimed", "SwarmClient")
_HOME = {name: "client" if name in _CLIENT else "errors" for name in __all__}
_HOME.update(ServerSettings="config", TrainConfig="config")


def __getattr__(name: str) -> Any:
    if name not in _HOME:
        raise AttributeError(f"module 'agentjet.core' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"agentjet.core.{_HOME[name]}"), name)
    globals()[name] = value  # later lookups skip this hook
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
