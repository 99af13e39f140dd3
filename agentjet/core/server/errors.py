"""The one place where errors become HTTP: a status table and OpenAI-style error bodies.

Every error reply is `{"error": {"message", "type", "code", "param"}}`. Anything unexpected
is logged with its traceback and answered 500 without internals; it never kills the server.
"""

from __future__ import annotations

import logging

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from agentjet.core import errors

__all__ = ["error_response", "install_error_handlers"]

log = logging.getLogger(__name__)

_STATUS: list[tuple[type[Exception], int, str, str]] = [  # most specific first
    (errors.ContextLengthExceeded, 400, "invalid_request_error", "context_length_exceeded"),
    (errors.RewardRefused, 422, "invalid_request_error", "invalid_reward"),
    (errors.RequestTooLarge, 413, "invalid_request_error", "request_too_large"),
    (errors.InvalidRequest, 400, "invalid_request_error", "invalid_request"),
    (errors.PermissionDenied, 403, "permission_error", "permission_denied"),
    (errors.AuthError, 401, "authentication_error", "invalid_api_key"),
    (errors.EpisodeNotFound, 404, "not_found_error", "episode_not_found"),
    (errors.TokenNotFound, 404, "not_found_error", "token_not_found"),
    (errors.EpisodeBusy, 409, "conflict_error", "calls_in_flight"),
    (errors.EpisodeClosed, 409, "conflict_error", "episode_closed"),
    (errors.ConfigConflict, 409, "conflict_error", "config_conflict"),
    (errors.ConfigError, 422, "invalid_request_error", "invalid_config"),
    (errors.TrainingDown, 503, "engine_not_ready", "training_down"),
    (errors.EngineNotReady, 503, "engine_not_ready", "engine_not_ready"),
    (errors.StorageFull, 507, "server_error", "storage_full"),
]


def error_response(status: int, message: str, type_: str, code: str | None, param: str | None = None) -> JSONResponse:
    body = {"error": {"message": message, "type": type_, "code": code, "param": param}}
    headers = {"WWW-Authenticate": "Bearer"} if status == 401 else {}
    if status in (503, 507):
        headers["Retry-After"] = "1"  # transient: the SDK retries these
    if status == 413:
        headers["Connection"] = "close"  # the rest of the body is never read
    return JSONResponse(body, status_code=status, headers=headers or None)


async def _agentjet_error(request: Request, exc: Exception) -> JSONResponse:
    for cls, status, type_, code in _STATUS:
        if isinstance(exc, cls):
            if isinstance(exc, errors.EpisodeClosed) and exc.status == "episode_reclaimed":
                code = "episode_reclaimed"
            if type(exc) is errors.AuthError and request.url.path.startswith("/swarm"):
                code = "invalid_token"
            return error_response(status, str(exc), type_, code, getattr(exc, "param", None))
    return await _unexpected(request, exc)


async def _validation_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    problems = exc.errors()
    if any(p.get("type") == "json_invalid" for p in problems):
        return error_response(400, "request body is not valid JSON", "invalid_request_error", "invalid_json")
    first = problems[0] if problems else {}
    where = ".".join(str(part) for part in first.get("loc", ()) if part != "body")
    detail = "; ".join(f"{'.'.join(str(x) for x in p.get('loc', ()))}: {p.get('msg')}" for p in problems[:5])
    return error_response(422, f"invalid request: {detail}", "invalid_request_error", "invalid_request", where or None)


async def _http_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, StarletteHTTPException)
    code = "request_too_large" if exc.status_code == 413 else f"http_{exc.status_code}"  # limits.BodyLimit
    return error_response(exc.status_code, str(exc.detail), "invalid_request_error", code)


async def _unexpected(request: Request, exc: Exception) -> JSONResponse:
    log.error("unhandled error on %s %s", request.method, request.url.path, exc_info=exc)
    return error_response(500, "internal server error (logged on the server)", "server_error", "internal_error")


def install_error_handlers(app: FastAPI) -> None:
    app.add_exception_handler(errors.AgentJetError, _agentjet_error)
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_exception_handler(StarletteHTTPException, _http_error)
    app.add_exception_handler(Exception, _unexpected)
