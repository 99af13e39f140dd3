"""`GET /swarm/status` as the engine answers it: state, episodes, calls, pool, training health.

What a caller sees depends on who it is: a client token gets every figure but only its own
client ids (the other clients' ids, like their episodes, are not its business).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from agentjet.core.backends.base import Backend
from agentjet.core.call_stats import CallStats
from agentjet.core.config import TrainConfig
from agentjet.core.episodes.open_episode import OpenEpisode
from agentjet.core.training.clients import ClientRoster
from agentjet.core.training.seam import TrainingSeam
from agentjet.core.types import EngineState, Principal

__all__ = ["StatusSource", "engine_status"]


class StatusSource(Protocol):
    """What the status reads of the engine (`engine.Engine`), named here so the engine may call us."""

    backend: Backend
    clients: ClientRoster
    train_config: TrainConfig
    memory_reports: dict[str, Callable[[], dict[str, Any]]]

    @property
    def training(self) -> TrainingSeam | None: ...

    @property
    def step(self) -> int: ...

    @property
    def call_stats(self) -> CallStats: ...

    @property
    def state(self) -> EngineState: ...

    @property
    def is_ready(self) -> bool: ...

    def now(self) -> float: ...

    def open_episodes(self) -> list[OpenEpisode]: ...

    def closed_counts(self) -> dict[str, int]: ...

    def calls_in_flight(self) -> int: ...


def engine_status(engine: StatusSource, principal: Principal) -> dict[str, Any]:
    now = engine.now()
    training = engine.training
    pool = training.pool_stats() if training is not None else {}
    if not principal.is_admin and "clients" in pool:
        pool = {**pool, "clients": _visible_clients(pool["clients"], engine.clients.owned_by(principal))}
    open_episodes = engine.open_episodes()
    closed = engine.closed_counts()
    return {
        "state": str(engine.state),
        "ready": engine.is_ready,
        "policy_version": engine.backend.policy_version,
        "step": engine.step,
        "model": engine.backend.name,
        "uptime_s": now - engine.call_stats.started_at,
        "episodes": {
            "in_flight": len(open_episodes),
            "finished": closed["ended"],
            "aborted": closed["aborted"],
            "reclaimed": closed["reclaimed"],
        },
        "active_clients": len(engine.clients.active()),
        "calls_in_flight": engine.calls_in_flight(),
        **engine.call_stats.view(now),
        "pool": {
            "open_tasks": len({e.task_id for e in open_episodes}),
            "collect": engine.train_config.collect.strategy,
            **pool,
        },
        "training": training.health.view() if training is not None else {"state": "off"},
        "memory": _memory({**engine.memory_reports, **(training.memory_reports() if training is not None else {})}),
        "latest_metrics": training.latest_metrics if training is not None else None,
    }


def _memory(reports: dict[str, Callable[[], dict[str, Any]]]) -> dict[str, Any]:
    """Each model copy's device, dtype, parameter bytes and peak memory; a failing probe says why."""
    out: dict[str, Any] = {}
    for name, report in reports.items():
        try:
            out[name] = report()
        except Exception as exc:  # a status read must never fail for a probe
            out[name] = {"error": f"{type(exc).__name__}: {exc}"}
    return out


def _visible_clients(clients: dict[str, Any], visible: frozenset[str]) -> dict[str, Any]:
    """The pool's client lists cut to `visible` ids (the counts stay: they reveal no id)."""
    return {
        **clients,
        "active_ids": [c for c in clients.get("active_ids", []) if c in visible],
        "requested_ids": [c for c in clients.get("requested_ids", []) if c in visible],
    }
