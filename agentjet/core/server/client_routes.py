"""`/swarm/clients/{client_id}/*`: a swarm client asks for an update (C4/C5) or says it is alive."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path
from pydantic import BaseModel, ConfigDict, StrictBool

from agentjet.core.server.deps import CallerDep, EngineDep
from agentjet.core.server.wire import Utf8Body
from agentjet.core.types import CLIENT_ID_PATTERN

__all__ = ["router"]

router = APIRouter(prefix="/swarm/clients", tags=["clients"])

ClientIdPath = Annotated[str, Path(pattern=CLIENT_ID_PATTERN, description="the client's own id (SDK: client_id)")]


class UpdateRequestIn(Utf8Body):
    model_config = ConfigDict(extra="forbid")
    ready: StrictBool = True  # true: ask for / agree to the next update; false: withdraw


class ClientOut(BaseModel):
    client_id: str
    active: bool
    ready: bool
    active_clients: list[str]
    requested_clients: list[str]


@router.post("/{client_id}/update", response_model=ClientOut)
async def request_update(
    client_id: ClientIdPath, body: UpdateRequestIn, engine: EngineDep, principal: CallerDep
) -> ClientOut:
    """A client token votes only as the client ids it uses (the first token to use an id holds it)."""
    return ClientOut(**engine.clients.request_update(client_id, ready=body.ready, principal=principal))


@router.post("/{client_id}/heartbeat", response_model=ClientOut)
async def heartbeat(client_id: ClientIdPath, engine: EngineDep, principal: CallerDep) -> ClientOut:
    return ClientOut(**engine.clients.heartbeat(client_id, principal=principal))
