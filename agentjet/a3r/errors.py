"""Errors of A3R campaigns: every one says what went wrong and what the user can do about it.

CampaignError (AgentJetError)   a campaign step cannot go on; the message names the fix
├── PlanError (ValueError)      a plan file is malformed; carries .path, .line and .key
├── PlannerError                the LLM planner failed or is not configured
├── PoolError                   pool servers cannot start or be handed out (log tail in the message)
├── ServerLost                  a trial's server died or stopped answering; carries .server, .reason
└── StaleServer                 a trial's server is not fresh (trained or pooled before it); .server, .reason
"""

from __future__ import annotations

from pathlib import Path

from agentjet.core import AgentJetError

__all__ = ["CampaignError", "PlanError", "PlannerError", "PoolError", "ServerLost", "StaleServer"]


class CampaignError(AgentJetError):
    """A campaign step failed in a way the user can act on (bad plan, dead pool, broken repo)."""


class PlanError(CampaignError, ValueError):
    """A plan is malformed. The message starts with `path:line:` when both are known.

    `line` is 1-based and counts lines of the whole plan file (front matter included), so an
    editor can jump to it; `key` is the dotted front-matter key at fault (`search_space.lr.low`).
    """

    def __init__(
        self,
        message: str,
        *,
        path: Path | str | None = None,
        line: int | None = None,
        key: str | None = None,
    ) -> None:
        self.path = Path(path) if path is not None else None
        self.line = line
        self.key = key
        self.reason = message
        super().__init__(self._render())

    def _render(self) -> str:
        where = ""
        if self.path is not None:
            where = f"{self.path}:"
        if self.line is not None:
            where = f"{where}{self.line}:" if where else f"line {self.line}:"
        return f"{where} {self.reason}" if where else self.reason


class PlannerError(CampaignError):
    """The LLM planner could not produce a plan (no LLM configured, bad reply, LLM unreachable)."""


class PoolError(CampaignError):
    """The server pool cannot do what was asked: a local server failed to start, none is free in time."""


class ServerLost(CampaignError):
    """A trial's server died or stopped answering mid-trial: the trial is void (retry it elsewhere).

    `server` is the pool member's name (`local-0`, or a URL); `reason` says what was seen.
    """

    def __init__(self, server: str, reason: str) -> None:
        self.server = server
        self.reason = reason
        super().__init__(f"server {server} was lost during the trial: {reason}")


class StaleServer(CampaignError):
    """A trial's server had trained or pooled episodes before the trial: its steps would not start at 1.

    The trial fails rather than be recorded on another run's adapter. `server` is the member's
    name; `reason` says what its `GET /swarm/status` showed.
    """

    def __init__(self, server: str, reason: str) -> None:
        self.server = server
        self.reason = reason
        super().__init__(f"server {server} is not fresh for the trial: {reason}")
