"""`/swarm/status`, `/swarm/config` and `/swarm/engine/*`: the engine's control surface.

Reading (status, config) is open to client tokens; changing anything needs the admin token.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from pydantic import BaseModel

from agentjet.core.config import TrainConfig
from agentjet.core.server.deps import AdminDep, CallerDep, EngineDep

__all__ = ["router"]

router = APIRouter(prefix="/swarm", tags=["engine"])


class ConfigOut(BaseModel):
    config: TrainConfig


class StateOut(BaseModel):
    state: str


@router.get("/status")
async def status(engine: EngineDep, principal: CallerDep) -> dict[str, Any]:
    return engine.status(principal)


@router.get("/config", response_model=ConfigOut)
async def get_config(engine: EngineDep, principal: CallerDep) -> ConfigOut:
    return ConfigOut(config=engine.train_config)


@router.put("/config", response_model=ConfigOut)
async def put_config(body: TrainConfig, engine: EngineDep, principal: AdminDep) -> ConfigOut:
    return ConfigOut(config=engine.set_train_config(body))


@router.post("/engine/start", response_model=StateOut)
async def start_engine(engine: EngineDep, principal: AdminDep) -> StateOut:
    return StateOut(state=str(await engine.start()))


@router.post("/engine/stop", response_model=StateOut)
async def stop_engine(engine: EngineDep, principal: AdminDep) -> StateOut:
    return StateOut(state=str(engine.stop()))
