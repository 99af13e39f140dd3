"""The swarm training core. Public API only: what vibe, a3r and users may import."""

from agentjet.core.client import AsyncEpisode, AsyncSwarmClient, Episode, EpisodeReclaimed, SwarmClient
from agentjet.core.config import ServerSettings, TrainConfig
from agentjet.core.errors import (
    AgentJetError,
    AuthError,
    BackendError,
    ConfigError,
    ContextLengthExceeded,
    EngineNotReady,
    EpisodeClosed,
    EpisodeNotFound,
    InvalidRequest,
    ModelError,
    ServerOffline,
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
    "EpisodeClosed",
    "EpisodeNotFound",
    "EpisodeReclaimed",
    "InvalidRequest",
    "ModelError",
    "ServerOffline",
    "ServerSettings",
    "SwarmClient",
    "TrainConfig",
]
