"""`python -m agentjet.a3r.pool.server_process --parent-pid PID -- server start ...`: dies with its campaign.

A local pool member runs its server in this wrapper, with the flags `agentjet server start` would
get (`local_server.py`: --model, --host, --port, --state-dir, --config, --log-level; the admin
token in AGENTJET_TOKEN) and the same start (`agentjet.core.run_server`: checks, one-line
refusals, uvicorn). Before the server (and torch) is even imported, a daemon thread starts
watching the campaign process: when the parent pid is gone (the campaign was `kill -9`ed, so it
could not stop its servers), the server gets SIGTERM (uvicorn shuts down cleanly) and, if it still
runs 10 s later, exits hard. So no server outlives its campaign as an orphan holding a port and
CPU. Polling `getppid()` is used rather than `PR_SET_PDEATHSIG`, which fires when the *thread*
that forked the child exits (pool restarts run on trial and heartbeat threads).
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
import time
from pathlib import Path
from typing import Any

__all__ = ["main", "server_fields"]

_POLL_S = 0.5
_GRACE_S = 10.0
_USAGE = "usage: python -m agentjet.a3r.pool.server_process --parent-pid PID -- server start ...\n"


def _watch_parent(parent_pid: int) -> None:
    while os.getppid() == parent_pid:
        time.sleep(_POLL_S)
    os.kill(os.getpid(), signal.SIGTERM)
    time.sleep(_GRACE_S)
    os._exit(1)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m agentjet.a3r.pool.server_process --parent-pid PID -- server start")
    parser.add_argument("--model", default="smollm2-135m")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8710)
    parser.add_argument("--state-dir", type=Path, default=Path("state"))
    parser.add_argument("--config", type=Path, default=None)
    parser.add_argument("--log-level", default="INFO")
    return parser


def server_fields(flags: list[str]) -> tuple[dict[str, Any], str]:
    """`server start` flags -> (the `ServerSettings` fields they give, the log level); SystemExit(2) on others."""
    args = _parser().parse_args(flags)
    fields = {"model": args.model, "host": args.host, "port": args.port, "state_dir": args.state_dir}
    fields |= {"config": args.config, "token": os.environ.get("AGENTJET_TOKEN") or None}
    return fields, args.log_level


def main(argv: list[str]) -> None:
    """`--parent-pid PID -- server start FLAGS...`: watch the parent, then run the server in-process."""
    if len(argv) < 5 or argv[0] != "--parent-pid" or argv[2] != "--" or argv[3:5] != ["server", "start"]:
        sys.stderr.write(_USAGE)
        raise SystemExit(2)
    threading.Thread(target=_watch_parent, args=(int(argv[1]),), name="parent-watch", daemon=True).start()
    fields, log_level = server_fields(argv[5:])
    from agentjet.core import run_server

    try:
        code = run_server(fields, log_level=log_level)
    except KeyboardInterrupt:  # SIGINT (uvicorn re-raises it once shut down): what the CLI's Ctrl-C prints
        sys.stderr.write("\nAborted!\n")
        code = 1
    raise SystemExit(code)


if __name__ == "__main__":
    main(sys.argv[1:])
