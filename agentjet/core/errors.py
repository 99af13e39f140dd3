"""Every error AgentJet raises on purpose, classified by what the caller can do about it.

AgentJetError
├── ConfigError (ValueError)        bad settings, config or request values -> 422
│   └── ConfigConflict              a valid config the running trainer cannot take now -> 409
├── InvalidRequest (ValueError)     a request the server cannot serve as sent -> 400
│   └── ContextLengthExceeded       prompt + max_tokens over the model's context -> 400
├── AuthError                       forged, expired or missing key/token -> 401
├── EpisodeNotFound (KeyError)      no such episode -> 404
├── EpisodeClosed                   ended, aborted or reclaimed -> 409
├── EngineNotReady                  engine offline/booting; carries .state -> 503
├── ServerOffline                   (client side) the server cannot be reached
├── ModelError                      unknown model name or broken model folder
└── BackendError                    translated torch/vLLM failures -> 500 (a bug, logged)
"""

from __future__ import annotations

__all__ = [
    "AgentJetError",
    "AuthError",
    "BackendError",
    "ConfigConflict",
    "ConfigError",
    "ContextLengthExceeded",
    "EngineNotReady",
    "EpisodeClosed",
    "EpisodeNotFound",
    "InvalidRequest",
    "ModelError",
    "ServerOffline",
]


class AgentJetError(Exception):
    """Root of every error AgentJet raises on purpose."""


class ConfigError(AgentJetError, ValueError):
    """A setting or config value is invalid; the message names the fix."""


class ConfigConflict(ConfigError):
    """A valid config that conflicts with training already under way (e.g. a new LoRA rank)."""


class InvalidRequest(AgentJetError, ValueError):
    """A request is well-formed JSON but cannot be served as sent."""

    def __init__(self, message: str, *, param: str | None = None) -> None:
        super().__init__(message)
        self.param = param


class ContextLengthExceeded(InvalidRequest):
    """The rendered prompt (plus the requested completion) does not fit the model's context."""


class AuthError(AgentJetError):
    """A forged, expired, stale or missing episode key or server token."""


class EpisodeNotFound(AgentJetError, KeyError):
    """No episode with this id exists (open or journaled)."""

    def __str__(self) -> str:  # KeyError quotes its message; we want it plain
        return str(self.args[0]) if self.args else "episode not found"


class EpisodeClosed(AgentJetError):
    """The episode has ended, was aborted or was reclaimed; it accepts no more calls."""

    def __init__(self, message: str, *, status: str = "closed") -> None:
        super().__init__(message)
        self.status = status


class EngineNotReady(AgentJetError):
    """The engine is not in a state that can serve this request."""

    def __init__(self, message: str, *, state: str, needed: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.state = state
        self.needed = needed


class ServerOffline(AgentJetError, ConnectionError):
    """The swarm server could not be reached after all retries."""


class ModelError(AgentJetError, ValueError):
    """An unknown model name, or a model folder that cannot be loaded."""


class BackendError(AgentJetError):
    """The inference backend failed; the original torch/vLLM error is chained."""
