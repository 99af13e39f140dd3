"""`python -m agentjet.core.launch.parent_watch --parent-pid PID -- ARGS...`: `python -m agentjet ARGS` that dies
with its parent.

A server started for a campaign, a check or a benchmark must not outlive the process that started
it: a parent that was `kill -9`ed cannot stop it, and it would hold a port and CPU for nothing.
Before the CLI (and torch) is even imported, a daemon thread starts watching the parent: once
`getppid()` is no longer PID, this process gets SIGTERM (uvicorn shuts down cleanly) and, if it
still runs 10 s later, exits hard. Polling is used rather than `PR_SET_PDEATHSIG`, which fires when
the *thread* that forked the child exits (a campaign restarts servers from trial and heartbeat
threads). The command runs in this same process, so the pid its parent holds is the server's own.
"""

from __future__ import annotations

import os
import runpy
import signal
import sys
import threading
import time

__all__ = ["main"]

_POLL_S = 0.5
_GRACE_S = 10.0
_USAGE = "usage: python -m agentjet.core.launch.parent_watch --parent-pid PID -- ARGS...\n"


def _watch_parent(parent_pid: int) -> None:
    while os.getppid() == parent_pid:
        time.sleep(_POLL_S)
    os.kill(os.getpid(), signal.SIGTERM)
    time.sleep(_GRACE_S)
    os._exit(1)


def main(argv: list[str]) -> None:
    """`--parent-pid PID -- ARGS...`: watch the parent, then run `agentjet ARGS...` in this process."""
    if len(argv) < 4 or argv[0] != "--parent-pid" or not argv[1].isdigit() or argv[2] != "--":
        sys.stderr.write(_USAGE)
        raise SystemExit(2)
    threading.Thread(target=_watch_parent, args=(int(argv[1]),), name="parent-watch", daemon=True).start()
    sys.argv = ["agentjet", *argv[3:]]
    runpy.run_module("agentjet", run_name="__main__", alter_sys=True)  # the CLI, as `python -m agentjet`


if __name__ == "__main__":
    main(sys.argv[1:])
