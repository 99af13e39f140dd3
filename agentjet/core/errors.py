"""Every error AgentJet raises on purpose, classified by what the caller can do about it.

AgentJetError
├── ConfigError (ValueError)        bad settings, config or request values -> 422
│   └── ConfigConflict              a valid config the running trainer cannot take now -> 409
├── InvalidRequest (ValueError)     a request the server cannot serve as sent -> 400
│   ├── ContextLengthExceeded       prompt + max_tokens over the model's context -> 400
│   ├── RewardRefused               a reward that is not finite or outside TrainConfig reward.min/max -> 422
│   └── RequestTooLarge             a body over the server's size limit -> 413
├── AuthError                       forged, expired or missing key/token -> 401
│   └── PermissionDenied            a valid credential without the right (a client token on an admin route) -> 403
├── EpisodeNotFound (KeyError)      no such episode -> 404
├── TokenNotFound (KeyError)        no such client token -> 404
├── EpisodeClosed                   ended, aborted or reclaimed -> 409
│   └── EpisodeBusy                 ended while one of its calls still runs -> 409
├── EngineNotReady                  engine offline/booting; carries .state -> 503
│   └── TrainingDown                training stopped for good (a failed restore): train episodes refused -> 503
├── StorageFull                     the disk under the state dir is full; retry once space returns -> 507
├── JournalCorrupted                the journal cannot be read; `agentjet server repair` salvages it
├── NonFiniteStep                   a training step whose loss, gradients or weights are not finite (refused)
├── TrainingRankFailed              a training process (torch.distributed rank) died or timed out in a step
├── ServerOffline                   (client side) the server cannot be reached
├── ServerStartFailed               a server we started exited, or never became ready (names its log)
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
    "EpisodeBusy",
    "EpisodeClosed",
    "EpisodeNotFound",
    "InvalidRequest",
    "JournalCorrupted",
    "ModelError",
    "NonFiniteStep",
    "PermissionDenied",
    "RequestTooLarge",
    "RewardRefused",
    "ServerOffline",
    "ServerStartFailed",
    "StorageFull",
    "TokenNotFound",
    "TrainingDown",
    "TrainingRankFailed",
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


class RewardRefused(InvalidRequest):
    """A reward that is not finite or outside the accepted range; the episode stays open for a retry."""


class RequestTooLarge(InvalidRequest):
    """The request body is larger than the server accepts (`--max-request-bytes`)."""


class AuthError(AgentJetError):
    """A forged, expired, stale or missing episode key or server token."""


class PermissionDenied(AuthError):
    """The credential is valid but does not allow this (a client token on an admin route, another's episode)."""


class EpisodeNotFound(AgentJetError, KeyError):
    """No episode with this id exists (open or journaled)."""

    def __str__(self) -> str:  # KeyError quotes its message; we want it plain
        return str(self.args[0]) if self.args else "episode not found"


class TokenNotFound(AgentJetError, KeyError):
    """No client token with this id or name (or none that is still live)."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else "token not found"


class EpisodeClosed(AgentJetError):
    """The episode has ended, was aborted or was reclaimed; it accepts no more calls."""

    def __init__(self, message: str, *, status: str = "closed") -> None:
        super().__init__(message)
        self.status = status


class EpisodeBusy(EpisodeClosed):
    """`end` came while a call of the episode was still sampling and it did not finish in time."""

    def __init__(self, message: str, *, status: str = "calls_in_flight") -> None:
        super().__init__(message, status=status)


class EngineNotReady(AgentJetError):
    """The engine is not in a state that can serve this request."""

    def __init__(self, message: str, *, state: str, needed: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.state = state
        self.needed = needed


class TrainingDown(EngineNotReady):
    """Training has stopped for good on this server (see `training.last_error` in the status)."""


class StorageFull(AgentJetError):
    """A write under the state dir failed for lack of space; nothing was lost and a retry may succeed."""


class JournalCorrupted(AgentJetError):
    """The journal file is damaged; the message names `agentjet server repair STATE_DIR`."""


class NonFiniteStep(AgentJetError):
    """A training step produced a loss, gradient or weight that is not finite; it was not applied."""


class TrainingRankFailed(AgentJetError):
    """A training process died, hung past the timeout or lost its peers during a step; the step was
    not applied (its batch stays pooled) and the process group is rebuilt before the next one."""


class ServerOffline(AgentJetError, ConnectionError):
    """The swarm server could not be reached after all retries."""


class ServerStartFailed(AgentJetError):
    """A server process we started exited or was not ready in time; the message names its log and quotes its
    tail."""


class ModelError(AgentJetError, ValueError):
    """An unknown model name, or a model folder that cannot be loaded."""


class BackendError(AgentJetError):
    """The inference backend failed; the original torch/vLLM error is chained."""
