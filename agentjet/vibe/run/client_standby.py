"""A client process started ahead of need, so a hot-swap does not wait for an interpreter to start.

`python -m agentjet.vibe.run.client_standby MODULE [BACKEND]` imports MODULE (`agentjet.vibe.run.sandboxed_client`,
the host side of a sandboxed client, or `agentjet.tasks.play.client_run`, `agentjet client run` without the
CLI, for a client on the host), checks the sandbox backend once (its probe run is then cached for
this process), creates the file named by AGENTJET_VIBE_STANDBY_READY (when set), and waits for one
line of JSON on stdin: the argument list MODULE's command line would get. It then runs exactly as
`python -m MODULE ARGS...` would. End of input instead of a line: exit 0 (it was not needed).
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

__all__ = ["MODULES", "READY_ENV", "main"]

MODULES = ("agentjet.vibe.run.sandboxed_client", "agentjet.tasks.play.client_run")
READY_ENV = "AGENTJET_VIBE_STANDBY_READY"  # a file the standby creates once it is warm


def _warm(module: str, backend: str | None) -> Callable[[list[str]], int]:
    if module == "agentjet.vibe.run.sandboxed_client":
        from agentjet.sandbox import Sandbox
        from agentjet.vibe.run import sandboxed_client

        Sandbox(backend or "auto")  # the backend's probe run happens now, not at the swap
        return sandboxed_client.main
    from agentjet.tasks.play import client_run

    return client_run.main


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] not in MODULES:
        sys.stderr.write(f"usage: python -m agentjet.vibe.run.client_standby {{{','.join(MODULES)}}} [BACKEND]\n")
        return 2
    run = _warm(args[0], args[1] if len(args) > 1 else None)
    ready = os.environ.pop(READY_ENV, "")
    if ready:
        Path(ready).touch()
    line = sys.stdin.readline()
    if not line.strip():
        return 0
    command = json.loads(line)
    if not isinstance(command, list) or not all(isinstance(part, str) for part in command):
        sys.stderr.write("client standby: expected a JSON list of strings on stdin\n")
        return 2
    return run(command)


if __name__ == "__main__":
    sys.exit(main())
