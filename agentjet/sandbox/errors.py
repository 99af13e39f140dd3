"""Errors of the sandbox layer; `SandboxUnavailable` always carries how to fix it.

AgentJetError
└── SandboxError                  a sandbox could not be set up or run
    └── SandboxUnavailable        a backend cannot run on this machine: .reason and .fix
"""

from __future__ import annotations

from agentjet.core import AgentJetError

__all__ = ["SandboxError", "SandboxUnavailable"]


class SandboxError(AgentJetError):
    """A sandbox could not be set up, run or cleaned up."""


class SandboxUnavailable(SandboxError):
    """A backend cannot run here. `reason` says why, `fix` the command or step that makes it work."""

    def __init__(self, reason: str, fix: str) -> None:
        self.reason = reason
        self.fix = fix
        super().__init__(f"{reason} Fix: {fix}")
