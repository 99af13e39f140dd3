"""What both SDK twins share: settings, headers, the retry policy, and an episode's client-side state (no I/O).

`SwarmClient` and `AsyncSwarmClient` (`client.py`) subclass these and add only how one call is
sent; the plans of each operation are in `client_plans.py`.
"""

from __future__ import annotations

import logging
import os
import random
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import httpx

from agentjet.core.errors import AgentJetError, ConfigError, EpisodeClosed, ServerOffline
from agentjet.core.sdk.client_plans import (
    Call,
    Plan,
    Reply,
    checked_client_id,
    end_body,
    end_plan,
    episode_path,
    error_code,
    one_call,
)
from agentjet.core.sdk.client_replies import JsonDict

__all__ = ["TOKEN_ENV", "ClientCore", "EpisodeCore", "backoff_delay_s", "checked_url", "episode_fields"]

log = logging.getLogger(__name__)

TOKEN_ENV = "AGENTJET_TOKEN"
_MAX_BACKOFF_S = 5.0
_RETRIED_CODES = frozenset({"storage_full", "too_many_connections"})  # transient: nothing was done


def backoff_delay_s(attempt: int, base_s: float, rng: random.Random) -> float:
    """Exponential backoff plus up to 10 % jitter, so clients that lost one server together
    do not all come back in the same instant."""
    delay_s = min(base_s * 2.0 ** (attempt - 1), _MAX_BACKOFF_S)
    return delay_s + rng.uniform(0.0, 0.1 * delay_s)


def checked_url(url: str) -> str:
    parsed = httpx.URL(url)
    if parsed.scheme not in ("http", "https") or not parsed.host:
        raise ConfigError(f"server url must look like http://HOST:PORT, got {url!r}")
    return url.rstrip("/")


class ClientCore:
    """Settings, headers and retry policy shared by both twins; no I/O."""

    def __init__(
        self,
        url: str,
        token: str | None,
        *,
        client_id: str | None,
        timeout_s: float,
        retries: int,
        backoff_s: float,
    ) -> None:
        self.url = checked_url(url)
        self.client_id = checked_client_id(client_id)
        self.timeout_s = timeout_s
        self.retries = max(1, retries)  # attempts per request before ServerOffline
        self.backoff_s = backoff_s
        self._token = token if token is not None else os.environ.get(TOKEN_ENV)
        self._rng = random.Random()

    def __repr__(self) -> str:  # never show the token
        return f"{type(self).__name__}(url={self.url!r}, client_id={self.client_id!r})"

    def _http_options(self) -> dict[str, Any]:
        headers = {"X-AgentJet-Client": self.client_id}
        if self._token:
            headers["Authorization"] = f"Bearer {self._token}"
        return {"base_url": self.url, "headers": headers, "timeout": self.timeout_s}

    def _reply(self, response: httpx.Response, attempt: int) -> Reply:
        log.debug(
            "%s %s -> %d attempt=%d", response.request.method, response.request.url.path, response.status_code, attempt
        )
        if response.status_code == 401 and not self._token:
            log.warning("server refused a request and no token was given: pass token= or set %s", TOKEN_ENV)
        return Reply(response, attempt)

    def _refusal_delay_s(self, call: Call, response: httpx.Response, attempt: int) -> float | None:
        """Seconds before retrying a transient refusal (nothing was done); None to hand the reply back."""
        if response.status_code not in (503, 507) or attempt >= self.retries:
            return None
        code = error_code(response)
        if code not in _RETRIED_CODES:
            return None
        delay_s = backoff_delay_s(attempt, self.backoff_s, self._rng)
        log.warning("server refused call=%s %s code=%s, retrying attempt=%d/%d delay_s=%.2f",
                    call.method, call.path, code, attempt, self.retries, delay_s)  # fmt: skip
        return delay_s

    def _retry_delay_s(self, call: Call, attempt: int, exc: httpx.TransportError) -> float:
        """How long to wait before the next attempt; ServerOffline once attempts run out."""
        reason = str(exc) or type(exc).__name__
        if attempt >= self.retries:
            raise ServerOffline(f"server at {self.url} is not reachable ({reason}) after {attempt} attempt(s)") from exc
        delay_s = backoff_delay_s(attempt, self.backoff_s, self._rng)
        log.warning(
            "server unreachable, retrying call=%s %s attempt=%d/%d delay_s=%.2f error=%s",
            call.method,
            call.path,
            attempt,
            self.retries,
            delay_s,
            reason,
        )
        return delay_s


@dataclass(eq=False)
class EpisodeCore:
    """What the server handed out for one episode, and whether it is still open."""

    episode_id: str
    base_url: str
    api_key: str = field(repr=False)
    expires_at: float
    task_id: str
    kind: str
    agent: str | None = None
    _status: str = field(default="open", init=False, repr=False)

    @property
    def is_closed(self) -> bool:
        return self._status != "open"

    @property
    def status(self) -> str:
        """`open`, or how it closed as far as this client knows (ended, aborted, reclaimed...)."""
        return self._status

    def _end(self, reward: float, metadata: Mapping[str, Any] | None) -> Plan[JsonDict]:
        if self.is_closed:
            raise EpisodeClosed(f"episode {self.episode_id} is already {self._status}", status=self._status)
        try:
            result = yield from end_plan(self.episode_id, end_body(reward, metadata))
        except EpisodeClosed as exc:
            self._status = exc.status
            raise
        self._status = "ended"
        return result

    def _abort(self) -> Plan[None]:
        """Abort is idempotent: an episode already closed (here or on the server) stays closed."""
        if self.is_closed:
            return
        try:
            yield from one_call(Call("POST", f"{episode_path(self.episode_id)}/abort"))
        except EpisodeClosed as exc:
            log.info("abort: episode already closed id=%s status=%s", self.episode_id, exc.status)
            self._status = exc.status
            return
        self._status = "aborted"

    def _warning(self) -> str:
        return (
            f"episode {self.episode_id} left its `with` block without end(reward=...); "
            "it was aborted and no reward was reported"
        )


def episode_fields(body: JsonDict, task_id: str, kind: str, agent: str | None) -> JsonDict:
    """Check a begin reply has what an agent needs before handing it out."""
    missing = [k for k in ("episode_id", "base_url", "api_key", "expires_at") if k not in body]
    if missing:
        raise AgentJetError(f"server's begin-episode reply lacks {', '.join(missing)}")
    return {
        "episode_id": str(body["episode_id"]),
        "base_url": str(body["base_url"]),
        "api_key": str(body["api_key"]),
        "expires_at": float(body["expires_at"]),
        "task_id": str(body.get("task_id", task_id)),
        "kind": str(body.get("kind", kind)),
        "agent": body.get("agent", agent),
    }
