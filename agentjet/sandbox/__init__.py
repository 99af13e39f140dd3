"""Run generated and untrusted code where it cannot harm the host, leak the token or reach a network.

Two backends share one contract: a real Docker engine (`--network none`, locally built image) and
bubblewrap (`setpriv` + `bwrap --unshare-all`) where no engine runs. Swarm access goes through a
Unix socket mounted into the sandbox, never through a network.

api.py        `Sandbox`: run a command on a backend chosen once (docker, else bwrap), with files, limits and swarm
              access.
bridge.py     Host side of swarm access without network: a token-injecting HTTP proxy on a Unix socket.
capture.py    Capped capture of a sandbox's stdout/stderr: keep the first `cap` bytes, count the rest, never hold
              more.
doctor.py     `agentjet sandbox doctor`: which backends work on this machine, and for each that does not, why and
              the fix.
errors.py     Errors of the sandbox layer; `SandboxUnavailable` always carries how to fix it.
folder.py     A folder's files for `Sandbox.run(files=...)`: what a client file needs beside it, nothing more.
forwarder.py  Inside a sandbox: serve 127.0.0.1:PORT by relaying to the swarm bridge's Unix socket, run a command.
limits.py     What a sandboxed run may use, and the parser for the sizes users type (`512m`, `1g`).
passthrough.py
              A loopback ASGI pass-through to one swarm server (the bridge's and vibe's episode tap's).
result.py     What a sandboxed run returns: how it ended, what it printed (capped), what it used.
runspec.py    What both backends set up the same way: the sandbox's paths, its clean env and its entry command.
verdict.py    Why a sandboxed run stopped, from what the backend saw: one pure function both backends share.
bwrap/        The bubblewrap backend: a sandboxed process tree under its own cgroup, launched, watched and torn
              down.
docker/       The Docker backend: the private engine connection, the sandbox image (built by debootstrap),
              containers and their accounting.
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
