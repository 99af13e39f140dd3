"""`python -m agentjet.a3r.server_process --parent-pid PID -- server start ...`: a server that dies with its campaign.

A local pool member runs `agentjet server start` in this wrapper. Before the CLI (and torch) is
even imported, a daemon thread starts watching the campaign process: when the parent pid is gone
(the campaign was `kill -9`ed, so it could not stop its servers), the server gets SIGTERM (uvicorn
shuts down cleanly) and, if it still runs 10 s later, exits hard. So no server outlives its
campaign as an orphan holding a port and CPU. Polling `getppid()` is used rather than
`PR_SET_PDEATHSIG`, which fires when the *thread* that forked the child exits (pool restarts run
on trial and heartbeat threads).
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time

__all__ = ["main"]

_POLL_S = 0.5
_GRACE_S = 10.0


def _watch_parent(parent_pid: int) -> None:
    while os.getppid() == parent_pid:
        time.sleep(_POLL_S)
    os.kill(os.getpid(), signal.SIGTERM)
    time.sleep(_GRACE_S)
    os._exit(1)


def main(argv: list[str]) -> None:
    """`--parent-pid PID -- CLI ARGS...`: watch the parent, then run the agentjet CLI in-process."""
    if len(argv) < 3 or argv[0] != "--parent-pid" or argv[2] != "--":
        sys.stderr.write("usage: python -m agentjet.a3r.server_process --parent-pid PID -- server start ...\n")
        raise SystemExit(2)
    threading.Thread(target=_watch_parent, args=(int(argv[1]),), name="parent-watch", daemon=True).start()
    from agentjet.cli.main import app

    app(argv[3:], prog_name="agentjet")


if __name__ == "__main__":
    main(sys.argv[1:])
