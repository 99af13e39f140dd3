"""The swarm training core. Public API only: what vibe, a3r and users may import.

The names load on first use: `import agentjet.core.step.trainer` (the GPU check, a training
process) then needs neither httpx (the client) nor anything else the public API pulls in.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
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
    from agentjet.core.logs import error_line, log_to_stderr
    from agentjet.core.scripted_server import serve_scripted
    from agentjet.core.sdk.client import AsyncEpisode, AsyncSwarmClient, Episode, EpisodeReclaimed, SwarmClient
    from agentjet.core.sdk.client_core import TOKEN_ENV
    from agentjet.core.server.run import run_server

__all__ = [
    "TOKEN_ENV",
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
    "error_line",
    "log_to_stderr",
    "run_server",
    "serve_scripted",
]

_CLIENT = ("AsyncEpisode", "AsyncSwarmClient", "Episode", "EpisodeReclaimed", "SwarmClient")
_HOME = {name: "sdk.client" if name in _CLIENT else "errors" for name in __all__}
_HOME.update(
    ServerSettings="config", TrainConfig="config", TOKEN_ENV="sdk.client_core", serve_scripted="scripted_server"
)
_HOME.update(error_line="logs", log_to_stderr="logs", run_server="server.run")


def __getattr__(name: str) -> Any:
    if name not in _HOME:
        raise AttributeError(f"module 'agentjet.core' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"agentjet.core.{_HOME[name]}"), name)
    globals()[name] = value  # later lookups skip this hook
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
