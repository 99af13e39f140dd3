"""FastAPI dependencies: the runtime objects built in `lifespan`, and the two kinds of auth.

All are `async def` on purpose: plain `def` dependencies run in FastAPI's threadpool, which
would touch the event-loop-only `Engine` from other threads (and costs ~130 us per hop).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from fastapi import Depends, Header, Request

from agentjet.core.config import ServerSettings
from agentjet.core.engine import Engine, OpenEpisode
from agentjet.core.errors import AuthError, EngineNotReady
from agentjet.core.keys import tokens_equal
from agentjet.core.serving import ChatService

__all__ = ["ChatDep", "EngineDep", "EpisodeDep", "Runtime", "require_server_token"]


@dataclass
class Runtime:
    settings: ServerSettings
    engine: Engine
    chat: ChatService
    token: str


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


async def require_server_token(request: Request, authorization: Annotated[str | None, Header()] = None) -> None:
    """Any /swarm call. It does not mark its X-AgentJet-Client as active: a status poller is no
    C5 voter. Clients are seen on begin/end, `/swarm/clients/{id}/heartbeat` and `/update`."""
    runtime = get_runtime(request)
    if not tokens_equal(_bearer(authorization), runtime.token):
        raise AuthError("missing or wrong server token: send Authorization: Bearer <token> (see <state-dir>/token)")


async def get_engine(request: Request) -> Engine:
    return get_runtime(request).engine


async def get_chat(request: Request) -> ChatService:
    return get_runtime(request).chat


async def get_episode(request: Request, authorization: Annotated[str | None, Header()] = None) -> OpenEpisode:
    return get_runtime(request).engine.authorize_call(_bearer(authorization))


EngineDep = Annotated[Engine, Depends(get_engine)]
ChatDep = Annotated[ChatService, Depends(get_chat)]
EpisodeDep = Annotated[OpenEpisode, Depends(get_episode)]
