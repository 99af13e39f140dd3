"""AgentJet: an open platform for agentic reinforcement learning of LLMs.

The public API is the core's (`agentjet.core.__all__`), loaded on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agentjet import core as _core
from agentjet.core import __all__

if TYPE_CHECKING:
    from agentjet.core import *  # noqa: F403


def __getattr__(name: str) -> Any:
    if name not in __all__:
        raise AttributeError(f"module 'agentjet' has no attribute {name!r}")
    return getattr(_core, name)


def __dir__() -> list[str]:
    return sorted(__all__)
