"""Run generated and untrusted code where it cannot harm the host, leak the token or reach a network.

Two backends share one contract: a real Docker engine (`--network none`, locally built image) and
bubblewrap (`setpriv` + `bwrap --unshare-all`) where no engine runs. Swarm access goes through a
Unix socket mounted into the sandbox, never through a network.
"""

from typing import TYPE_CHECKING, Any

from agentjet.sandbox.errors import SandboxError, SandboxUnavailable
from agentjet.sandbox.limits import Limits, parse_size
from agentjet.sandbox.result import RunResult, StopReason

if TYPE_CHECKING:
    from agentjet.sandbox.api import Sandbox
    from agentjet.sandbox.bridge import SwarmAccess

__all__ = [
    "Limits",
    "RunResult",
    "Sandbox",
    "SandboxError",
    "SandboxUnavailable",
    "StopReason",
    "SwarmAccess",
    "parse_size",
]


def __getattr__(name: str) -> Any:
    """`Sandbox` and `SwarmAccess` load on first use: code inside a sandbox imports submodules of this
    package (the image has no uvicorn, which the host-side bridge needs)."""
    if name == "Sandbox":
        from agentjet.sandbox.api import Sandbox

        return Sandbox
    if name == "SwarmAccess":
        from agentjet.sandbox.bridge import SwarmAccess

        return SwarmAccess
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
