"""Read swarm server replies: JSON bodies, and OpenAI-style errors mapped to the typed error tree.

The error `code` is the precise contract; the HTTP status is the fallback for replies that
carry none (a proxy, an older server).
"""

from __future__ import annotations

import re
from typing import Any

import httpx

from agentjet.core.errors import (
    AgentJetError,
    AuthError,
    ConfigConflict,
    ConfigError,
    ContextLengthExceeded,
    EngineNotReady,
    EpisodeBusy,
    EpisodeClosed,
    EpisodeNotFound,
    InvalidRequest,
    PermissionDenied,
    RequestTooLarge,
    RewardRefused,
    StorageFull,
    TokenNotFound,
    TrainingDown,
)

__all__ = ["EpisodeReclaimed", "JsonDict", "error_from_response", "parse_object"]

JsonDict = dict[str, Any]
_ENGINE_STATES = ("offline", "booting", "rolling", "draining", "updating")


class EpisodeReclaimed(EpisodeClosed):
    """The server reclaimed the episode after it sat idle; its reward can no longer be reported."""

    def __init__(self, message: str, *, status: str = "reclaimed") -> None:
        super().__init__(message, status=status)


def parse_object(response: httpx.Response) -> JsonDict:
    """The JSON object of a 2xx reply, or the typed error an error reply stands for."""
    if not response.is_success:
        raise error_from_response(response)
    try:
        body = response.json()
    except ValueError as exc:
        raise AgentJetError(f"server sent a non-JSON reply (HTTP {response.status_code})") from exc
    if not isinstance(body, dict):
        raise AgentJetError(f"server sent {type(body).__name__} where an object was expected")
    return body


_CLASS_BY_CODE: dict[str, type[AgentJetError]] = {
    "invalid_token": AuthError,
    "invalid_api_key": AuthError,
    "episode_not_found": EpisodeNotFound,
    "episode_closed": EpisodeClosed,
    "episode_reclaimed": EpisodeReclaimed,
    "engine_not_ready": EngineNotReady,
    "invalid_request": InvalidRequest,
    "invalid_json": InvalidRequest,
    "context_length_exceeded": ContextLengthExceeded,
    "invalid_config": ConfigError,
    "config_conflict": ConfigConflict,
    "permission_denied": PermissionDenied,
    "token_not_found": TokenNotFound,
    "calls_in_flight": EpisodeBusy,
    "invalid_reward": RewardRefused,
    "request_too_large": RequestTooLarge,
    "training_down": TrainingDown,
    "storage_full": StorageFull,
}
_CLASS_BY_STATUS: dict[int, type[AgentJetError]] = {
    400: InvalidRequest,
    401: AuthError,
    403: PermissionDenied,
    404: EpisodeNotFound,
    409: EpisodeClosed,
    413: RequestTooLarge,
    422: ConfigError,
    503: EngineNotReady,
    507: StorageFull,
}


def _error_detail(response: httpx.Response) -> JsonDict:
    """The `error` object of a reply; something message-shaped for non-AgentJet replies."""
    try:
        body = response.json()
    except ValueError:
        return {"message": response.text[:200].strip() or response.reason_phrase}
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        return dict(body["error"])
    if isinstance(body, dict) and "detail" in body:
        return {"message": str(body["detail"])}
    return {"message": str(body)[:200]}


def error_from_response(response: httpx.Response) -> AgentJetError:
    """Classify by the error code first (it is the precise contract), then by HTTP status."""
    detail = _error_detail(response)
    status = response.status_code
    message = str(detail.get("message") or f"HTTP {status}")
    code = detail.get("code")
    cls = _CLASS_BY_CODE.get(code) if isinstance(code, str) else None
    if cls is None and (status != 404 or "/swarm/episodes/" in response.request.url.path):
        cls = _CLASS_BY_STATUS.get(status)
    if cls is None:
        where = f"{response.request.method} {response.request.url}"
        return AgentJetError(f"{where} failed with HTTP {status}: {message}")
    return _build_error(cls, message, detail)


def _build_error(cls: type[AgentJetError], message: str, detail: JsonDict) -> AgentJetError:
    param = detail.get("param")
    if issubclass(cls, InvalidRequest):
        return cls(message, param=param if isinstance(param, str) else None)
    if cls is EpisodeBusy:
        return EpisodeBusy(message)
    if issubclass(cls, EpisodeClosed):
        return cls(message, status=_closed_status(message, cls))
    if issubclass(cls, EngineNotReady):
        needed = detail.get("needed")
        needed_states = tuple(needed) if isinstance(needed, list) else ()
        return cls(message, state=_engine_state(message, detail), needed=needed_states)
    return cls(message)


def _closed_status(message: str, cls: type[EpisodeClosed]) -> str:
    """The episode's final status, read from the server's wording ("was already ended")."""
    if cls is EpisodeReclaimed:
        return "reclaimed"
    match = re.search(r"\b(ended|aborted|reclaimed)\b", message)
    return match.group(1) if match else "closed"


def _engine_state(message: str, detail: JsonDict) -> str:
    """The engine state an EngineNotReady reply names: an explicit field, else the message."""
    for key in ("state", "param"):
        value = detail.get(key)
        if isinstance(value, str) and value in _ENGINE_STATES:
            return value
    match = re.search(r"\b(" + "|".join(_ENGINE_STATES) + r")\b", message)
    return match.group(1) if match else "unknown"
