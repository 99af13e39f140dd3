"""Errors of vibe training: every one says what went wrong and what the user can do about it.

VibeError (AgentJetError)      a vibe step cannot go on; the message names the fix
└── PlanRefused                 the sentence fits no task family and no LLM is configured
"""

from __future__ import annotations

from agentjet.core import AgentJetError

__all__ = ["PlanRefused", "VibeError"]


class VibeError(AgentJetError):
    """A vibe step failed in a way the user can act on (bad LLM reply, missing sandbox, ...)."""


class PlanRefused(VibeError):
    """The planner could not map the sentence onto a task; nothing was written."""
