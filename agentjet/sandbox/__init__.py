"""Run generated and untrusted code where it cannot harm the host, leak the token or reach a network.

Two backends share one contract: a real Docker engine (`--network none`, locally built image) and
bubblewrap (`setpriv` + `bwrap --unshare-all`) where no engine runs. Swarm access goes through a
Unix socket mounted into the sandbox, never through a network.
"""

from agentjet.sandbox.api import Sandbox
from agentjet.sandbox.bridge import SwarmAccess
from agentjet.sandbox.errors import SandboxError, SandboxUnavailable
from agentjet.sandbox.limits import Limits, parse_size
from agentjet.sandbox.result import RunResult, StopReason

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
