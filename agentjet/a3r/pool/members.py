"""Pool members: one swarm server each, with its health, and how a trial gets a fresh adapter on it.

The core has no endpoint that resets a server's adapter and optimiser (`PUT /swarm/config`
refuses `lora.*` once the trainer is built, and keeps the AdamW moments). So a member is
*fresh* only until a trial runs on it: a local member is then restarted on an empty state dir
(`agentjet.a3r.pool.local_server`); a remote one cannot be, and runs one trial per server start (the
heartbeat sees it fresh again when its owner restarts it with a clean `--state-dir`). `fresh` is
the pool's bookkeeping; a trial checks the server itself (`agentjet.a3r.pool.freshness`). A
synthetic member has no server at all: it is for model-free trials and scheduler tests.
Thread-safety: state changes take the member's lock; the pool's heartbeat and one trial at a
time touch a member.
"""

from __future__ import annotations

import logging
import threading
from enum import StrEnum
from pathlib import Path

import httpx

from agentjet.a3r.errors import CampaignError, PoolError, StaleServer
from agentjet.a3r.pool.freshness import stale_reason
from agentjet.core import AgentJetError, AuthError, SwarmClient, TrainConfig

__all__ = ["MemberState", "PoolMember", "RemoteMember", "SyntheticMember", "health_state", "probe_health"]

log = logging.getLogger(__name__)

_PROBE_TIMEOUT_S = 5.0


class MemberState(StrEnum):
    STARTING = "starting"  # being started or restarted: the heartbeat leaves it alone
    UP = "up"  # answered its last heartbeat with a ready engine
    DOWN = "down"  # dead or unreachable; `down_reason` says why
    STOPPED = "stopped"  # the pool closed it


def health_state(url: str, *, timeout_s: float = _PROBE_TIMEOUT_S) -> tuple[str | None, str]:
    """GET /health (public) -> (engine state, detail); state None when the server did not answer.

    Before the app has built its engine the state is `offline` with status `starting`; an engine
    whose backend failed to boot stays `offline` with status `ok` (detail `failed`)."""
    try:
        reply = httpx.get(f"{url}/health", timeout=timeout_s)
        body = reply.json()
    except httpx.HTTPError as exc:
        return None, f"GET {url}/health failed: {type(exc).__name__}: {exc}"
    except ValueError:
        return None, f"GET {url}/health answered {reply.status_code} without JSON"
    if not isinstance(body, dict) or not isinstance(body.get("state"), str):
        return None, f"GET {url}/health answered {body!r}"
    failed = body["state"] == "offline" and body.get("status") == "ok"
    return body["state"], "failed" if failed else str(body.get("status"))


def probe_health(url: str, *, timeout_s: float = _PROBE_TIMEOUT_S) -> str | None:
    """None when the engine is ready (rolling, or training), else why not."""
    state, detail = health_state(url, timeout_s=timeout_s)
    if state is None:
        return detail
    if state in ("offline", "booting"):
        return f"engine not ready (state {state}{', its backend failed to boot' if detail == 'failed' else ''})"
    return None


class PoolMember:
    """One server of the pool. `name`, `url`, `token` and `pid` (local only) are what a trial needs."""

    kind = "member"
    restartable = False  # the campaign can restart it on an empty state dir (a local server)

    def __init__(self, name: str, url: str, token: str | None, model: str | None) -> None:
        self.name = name
        self.url = url
        self.token = token
        self.model = model  # what it serves (a remote member's is read from its status)
        self.state = MemberState.STARTING
        self.down_reason: str | None = None
        self.fresh = True  # no trial was handed it since it (re)started (the trial checks the server)
        self.busy = False  # handed out by the pool (ServerPool.acquire) and not released yet
        self.restarts = 0
        self._lock = threading.RLock()

    def __repr__(self) -> str:  # never the token
        return f"{type(self).__name__}(name={self.name!r}, url={self.url!r}, state={self.state.value!r})"

    @property
    def healthy(self) -> bool:
        return self.state is MemberState.UP

    @property
    def pid(self) -> int | None:
        return None

    @property
    def usable(self) -> bool:
        """Whether the pool may hand it out now: up, and able to give a trial a fresh adapter."""
        return self.healthy

    def mark_up(self) -> None:
        with self._lock:
            if self.state is MemberState.DOWN:
                log.info("server %s is up again", self.name)
            if self.state is not MemberState.STOPPED:
                self.state, self.down_reason = MemberState.UP, None

    def mark_down(self, reason: str) -> None:
        with self._lock:
            if self.state is MemberState.STOPPED:
                return
            if self.state is not MemberState.DOWN:
                log.warning("server %s is down: %s", self.name, reason)
            self.state, self.down_reason = MemberState.DOWN, reason

    def probe(self) -> str | None:
        """One heartbeat: None when the server is ready, else why it is not (definitive or not)."""
        return probe_health(self.url)

    def is_dead(self) -> bool:
        """True when the member is known gone for good (a local process exited), not just slow."""
        return False

    def client(self, *, retries: int = 2, timeout_s: float = 60.0) -> SwarmClient:
        return SwarmClient(self.url, token=self.token, retries=retries, timeout_s=timeout_s)

    def reset_for_trial(self, model: str, config: TrainConfig) -> None:
        """Give the next trial a fresh adapter and optimiser serving `model` with `config`."""
        raise NotImplementedError

    def restart(self, *, model: str | None = None, config: TrainConfig | None = None) -> None:
        raise PoolError(f"server {self.name} is not a local server: only the campaign's own servers restart")

    def stop(self) -> None:
        with self._lock:
            self.state = MemberState.STOPPED


class RemoteMember(PoolMember):
    """A server given by URL: used as is, never started or stopped by the campaign."""

    kind = "remote"

    def __init__(self, url: str, token: str | None, token_env: str) -> None:
        super().__init__(url.split("://", 1)[-1], url, token, None)
        self.token_env = token_env

    @property
    def usable(self) -> bool:
        return self.healthy and self.fresh

    def probe(self) -> str | None:
        """GET /swarm/status with the token: also notices a restarted server (fresh again)."""
        try:
            with self.client(retries=1, timeout_s=_PROBE_TIMEOUT_S) as client:
                status = client.status()
        except AgentJetError as exc:
            hint = f" (is ${self.token_env} the server's token?)" if isinstance(exc, AuthError) else ""
            return f"GET /swarm/status failed: {type(exc).__name__}: {exc}{hint}"
        self.model = str(status.get("model"))
        if not self.busy and stale_reason(status) is None:
            self.fresh = True
        return None if status.get("state") not in ("offline", "booting") else f"engine {status.get('state')}"

    def reset_for_trial(self, model: str, config: TrainConfig) -> None:
        """A remote server is fresh only before its first trial: it gets the config, or a clear error."""
        with self.client() as client:
            status = client.status()
            stale = stale_reason(status)
            if stale is not None:
                self.fresh = False
                raise StaleServer(
                    self.name, f"this remote server has trained or served episodes already ({stale}) and AgentJet's "
                    "server has no reset endpoint: restart it with a fresh --state-dir to use it for another trial, "
                    "or use local:N servers, which the campaign restarts itself",
                )  # fmt: skip
            served = str(status.get("model"))
            if served not in (model, Path(model).name):
                raise CampaignError(
                    f"remote server {self.name} serves {served!r} but the trial needs {model!r}: a remote server "
                    f"cannot switch models; start it with --model {model} or leave model out of the search space"
                )
            client.configure(config)
        self.fresh = False


class SyntheticMember(PoolMember):
    """A pool slot with no server, for model-free (synthetic) trials and scheduler tests.

    `kill(reason)` makes it dead, as a `kill -9` would a real server; `restart()` revives it."""

    kind = "synthetic"

    def __init__(self, index: int) -> None:
        super().__init__(f"synthetic-{index}", f"synthetic://{index}", None, None)
        self._dead_reason: str | None = None
        self.state = MemberState.UP

    def kill(self, reason: str = "killed") -> None:
        self._dead_reason = reason
        self.mark_down(reason)

    def probe(self) -> str | None:
        return self._dead_reason

    def is_dead(self) -> bool:
        return self._dead_reason is not None

    def reset_for_trial(self, model: str, config: TrainConfig) -> None:
        raise CampaignError(f"{self.name} has no server: only synthetic trials (task family: synthetic) run on it")

    def restart(self, *, model: str | None = None, config: TrainConfig | None = None) -> None:
        with self._lock:
            self._dead_reason = None
            self.restarts += 1
            self.fresh = True
        self.mark_up()
