"""FastAPI dependencies: the runtime objects built in `lifespan`, and who is calling.

Three credentials (README "Credentials"): the admin token (everything), a client token (its own
episodes and client ids, the status; `tokens.py`) and an episode key (the `/v1` calls of one
episode). `caller` resolves a `/swarm` bearer to a `Principal`; `admin` also requires it to be
the admin (else 403). All are `async def` on purpose: plain `def` dependencies run in FastAPI's
threadpool, which would touch the event-loop-only `Engine` from other threads.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from fastapi import Depends, Header, Request

from agentjet.core.access.keys import tokens_equal
from agentjet.core.access.tokens import TokenStore
from agentjet.core.config import ServerSettings
from agentjet.core.engine import Engine
from agentjet.core.episodes.open_episode import OpenEpisode
from agentjet.core.errors import AuthError, EngineNotReady, PermissionDenied
from agentjet.core.serving import ChatService
from agentjet.core.types import ADMIN, Principal

__all__ = ["AdminDep", "CallerDep", "ChatDep", "EngineDep", "EpisodeDep", "Runtime", "require_any_credential"]


@dataclass
class Runtime:
    settings: ServerSettings
    engine: Engine
    chat: ChatService
    token: str  # the admin token
    tokens: TokenStore  # client tokens


def get_runtime(request: Request) -> Runtime:
    runtime: Runtime | None = getattr(request.app.state, "runtime", None)
    if runtime is None:
        raise EngineNotReady("server is starting", state="offline")
    return runtime


def _bearer(authorization: str | None) -> str | None:
    if not authorization:
        return None
    scheme, _, value = authorization.partition(" ")
    return value.strip() if scheme.lower() == "bearer" and value.strip() else None


def _principal(runtime: Runtime, given: str | None) -> Principal:
    if given is None:
        raise AuthError("missing token: send Authorization: Bearer <admin token or client token>")
    if tokens_equal(given, runtime.token):
        return ADMIN
    client = runtime.tokens.lookup(given)
    if client is None:
        raise AuthError("unknown or revoked token: use the admin token (<state-dir>/token) or a live client token")
    return Principal(client.token_id, client.name)


async def caller(request: Request, authorization: Annotated[str | None, Header()] = None) -> Principal:
    """Any /swarm call: the admin or a live client token. It does not mark its X-AgentJet-Client as
    active: a status poller is no C5 voter. Clients are seen on begin/end, heartbeat and update."""
    return _principal(get_runtime(request), _bearer(authorization))


async def admin(request: Request, principal: Annotated[Principal, Depends(caller)]) -> Principal:
    """Routes that change the server for everyone: config, engine, tokens."""
    if not principal.is_admin:
        raise PermissionDenied(
            f"{request.method} {request.url.path} needs the admin token; client token {principal.name!r} may "
            "begin, end and read its own episodes, vote and heartbeat, and read the status and config"
        )
    return principal


async def require_any_credential(request: Request, authorization: Annotated[str | None, Header()] = None) -> None:
    """`GET /v1/models`: an episode key (its signature) or any /swarm credential."""
    runtime = get_runtime(request)
    given = _bearer(authorization)
    if given is not None and given.startswith("ajk_"):
        runtime.engine.signer.verify(given, now=runtime.engine.now())
        return
    _principal(runtime, given)


async def get_engine(request: Request) -> Engine:
    return get_runtime(request).engine


async def get_chat(request: Request) -> ChatService:
    return get_runtime(request).chat


async def get_episode(request: Request, authorization: Annotated[str | None, Header()] = None) -> OpenEpisode:
    return get_runtime(request).engine.authorize_call(_bearer(authorization))


EngineDep = Annotated[Engine, Depends(get_engine)]
ChatDep = Annotated[ChatService, Depends(get_chat)]
EpisodeDep = Annotated[OpenEpisode, Depends(get_episode)]
CallerDep = Annotated[Principal, Depends(caller)]
AdminDep = Annotated[Principal, Depends(admin)]
