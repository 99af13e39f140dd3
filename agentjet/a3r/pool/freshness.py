"""Proof that a trial trains a fresh adapter: its server is untouched before, and its step 1 comes first.

A member's `fresh` flag is the pool's bookkeeping, not a fact about the server: a server started
on an old state dir restores that run's adapter, optimiser, step and unconsumed episodes (a
resumed campaign once trained its re-runs on the killed trials' adapters from step 3 and 5 of 6,
and recorded them as 6-step trials). So a model trial asks the server itself (`GET /swarm/status`):
before training it must be at step 0 with no episode served or pooled, and the trial's first
step must be the server's step 1. A stale local member is restarted on an empty state dir and
asked again; a remote one cannot be reset, so its trial fails with `StaleServer`.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any, Protocol

from agentjet.a3r.errors import StaleServer
from agentjet.core import SwarmClient, TrainConfig

__all__ = ["check_first_step", "ensure_fresh", "stale_reason"]

log = logging.getLogger(__name__)


class PoolMember(Protocol):
    """What freshness needs of a pool member (`members.PoolMember`): asked here, so members may use us."""

    name: str
    restartable: bool
    fresh: bool

    def client(self) -> SwarmClient: ...

    def restart(self, *, model: str | None = None, config: TrainConfig | None = None) -> None: ...


_EPISODE_COUNTS = ("in_flight", "finished", "aborted")


def stale_reason(status: Mapping[str, Any]) -> str | None:
    """None when a `/swarm/status` reply shows a server that never trained, served or pooled an episode."""
    episodes = status.get("episodes") or {}
    pooled = (status.get("pool") or {}).get("pooled_episodes") or 0
    seen = [f"{episodes[k]} {k.replace('_', ' ')}" for k in _EPISODE_COUNTS if episodes.get(k)]
    why = [f"step {status.get('step')}"] if status.get("step") != 0 else []
    why += [f"episodes {', '.join(seen)}"] if seen else []
    why += [f"{pooled} pooled episodes"] if pooled else []
    if status.get("latest_metrics"):
        why.append(f"a metrics line of step {status['latest_metrics'].get('step')}")
    return ", ".join(why) or None


def _server_stale(member: PoolMember) -> str | None:
    with member.client() as client:
        return stale_reason(client.status())


def ensure_fresh(member: PoolMember, model: str, config: TrainConfig) -> None:
    """Return once `member`'s server is untouched; a restartable one gets one restart on an empty state dir.

    Raises StaleServer (a remote member, or one still stale after its restart) and whatever
    `restart` raises (PoolError)."""
    reason = _server_stale(member)
    if reason is None:
        return
    if not member.restartable:
        raise StaleServer(
            member.name, f"it reports {reason}; AgentJet's server has no reset endpoint: restart it with a fresh "
            "--state-dir to use it for a trial",
        )  # fmt: skip
    log.warning(
        "server not fresh for the trial name=%s seen=%r: restarting it on an empty state dir", member.name, reason
    )
    member.restart(model=model, config=config)
    member.fresh = False
    reason = _server_stale(member)
    if reason is not None:
        raise StaleServer(member.name, f"it reports {reason} even after a restart on an empty state dir")


def check_first_step(server: str, status: Mapping[str, Any]) -> None:
    """After the trial's first update: the server must be at its step 1, and its last metrics line too."""
    line = status.get("latest_metrics") or {}
    if status.get("step") != 1 or line.get("step") != 1:
        raise StaleServer(
            server, f"after the trial's first update the server is at step {status.get('step')} (its last metrics "
            f"line: step {line.get('step')}), not 1: it did not start from a fresh adapter; the trial is not recorded",
        )  # fmt: skip
