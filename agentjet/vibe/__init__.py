"""Vibe training: a sentence -> a planned, generated, sandbox-validated, red-teamed, watched training run and a report.

    from agentjet.vibe import VibeOptions, run_vibe, resume_vibe
    result = run_vibe("train a 7B to play werewolves", VibeOptions(steps=5))

Uses the core only through `agentjet.core.__all__` and the CLI. The names below load on first use
(LangGraph and litellm are slow to import), so `agentjet.vibe.errors` and friends stay cheap.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agentjet.vibe.context import NodeFailed, NodeFn, VibeContext
    from agentjet.vibe.errors import PlanRefused, VibeError
    from agentjet.vibe.graph import RunResult, resume_vibe, run_vibe
    from agentjet.vibe.plan.spec import TaskSpec
    from agentjet.vibe.progress import ProgressSink
    from agentjet.vibe.state import VibeOptions, VibeState

__all__ = [
    "NodeFailed",
    "NodeFn",
    "PlanRefused",
    "ProgressSink",
    "RunResult",
    "TaskSpec",
    "VibeContext",
    "VibeError",
    "VibeOptions",
    "VibeState",
    "resume_vibe",
    "run_vibe",
]

_HOME = {
    "NodeFailed": "context",
    "NodeFn": "context",
    "VibeContext": "context",
    "PlanRefused": "errors",
    "VibeError": "errors",
    "RunResult": "graph",
    "resume_vibe": "graph",
    "run_vibe": "graph",
    "ProgressSink": "progress",
    "TaskSpec": "plan.spec",
    "VibeOptions": "state",
    "VibeState": "state",
}


def __getattr__(name: str) -> Any:
    if name not in _HOME:
        raise AttributeError(f"module 'agentjet.vibe' has no attribute {name!r}")
    return getattr(importlib.import_module(f"agentjet.vibe.{_HOME[name]}"), name)
