"""`/swarm/status`, `/swarm/config` and `/swarm/engine/*`: the engine's control surface."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends
from pydantic import BaseModel

from agentjet.core.config import TrainConfig
from agentjet.core.server.deps import EngineDep, require_server_token

__all__ = ["router"]

router = APIRouter(prefix="/swarm", dependencies=[Depends(require_server_token)], tags=["engine"])


class ConfigOut(BaseModel):
    config: TrainConfig


class StateOut(BaseModel):
    state: str


@router.get("/status")
async def status(engine: EngineDep) -> dict[str, Any]:
    return engine.status()


@router.get("/config", response_model=ConfigOut)
async def get_config(engine: EngineDep) -> ConfigOut:
    return ConfigOut(config=engine.train_config)


@router.put("/config", response_model=ConfigOut)
async def put_config(body: TrainConfig, engine: EngineDep) -> ConfigOut:
    return ConfigOut(config=engine.set_train_config(body))


@router.post("/engine/start", response_model=StateOut)
async def start_engine(engine: EngineDep) -> StateOut:
    return StateOut(state=str(await engine.start()))


@router.post("/engine/stop", response_model=StateOut)
async def stop_engine(engine: EngineDep) -> StateOut:
    return StateOut(state=str(engine.stop()))
