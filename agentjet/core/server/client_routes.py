"""`/swarm/clients/{client_id}/*`: a swarm client asks for an update (C4/C5) or says it is alive."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Path
from pydantic import BaseModel, ConfigDict, StrictBool

from agentjet.core.server.deps import EngineDep, require_server_token
from agentjet.core.server.wire import Utf8Body
from agentjet.core.types import CLIENT_ID_PATTERN

__all__ = ["router"]

router = APIRouter(prefix="/swarm/clients", dependencies=[Depends(require_server_token)], tags=["clients"])

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
async def request_update(client_id: ClientIdPath, body: UpdateRequestIn, engine: EngineDep) -> ClientOut:
    return ClientOut(**engine.request_update(client_id, ready=body.ready))


@router.post("/{client_id}/heartbeat", response_model=ClientOut)
async def heartbeat(client_id: ClientIdPath, engine: EngineDep) -> ClientOut:
    return ClientOut(**engine.heartbeat(client_id))
