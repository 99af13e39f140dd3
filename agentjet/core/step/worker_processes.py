"""The worker processes of a training group (ranks 1..N-1): how rank 0 starts them, meets them, and ends them.

A worker is `python -m agentjet.core.step.train_worker` with its rank in the environment (env://
rendezvous on loopback). It reads what to build from the rendezvous store (`SPEC_KEY`), says it
is ready (`READY_KEY`) and dies with its parent (`PARENT_ENV`, polled).
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import time
from datetime import timedelta

__all__ = [
    "LOOPBACK",
    "PARENT_ENV",
    "READY_KEY",
    "SPEC_KEY",
    "WORKER_TIMEOUT",
    "how_exited",
    "kill_all",
    "spawn_worker",
    "wait_all",
]

log = logging.getLogger(__name__)

LOOPBACK = "127.0.0.1"
SPEC_KEY = "agentjet/spec"  # rank 0 -> workers: what to build (JSON), in the rendezvous store
READY_KEY = "agentjet/ready/{rank}"  # worker -> rank 0: model loaded, joining the group
PARENT_ENV = "AGENTJET_TRAIN_PARENT"  # a spawned worker's parent pid: it exits when that changes
WORKER_TIMEOUT = timedelta(days=7)  # workers wait for rank 0's next command across any rollout phase


def spawn_worker(rank: int, world_size: int, port: int) -> subprocess.Popen[bytes]:
    """Start the worker of `rank`, rendezvousing with rank 0's store on loopback `port`."""
    env = {
        **os.environ,
        "MASTER_ADDR": LOOPBACK,
        "MASTER_PORT": str(port),
        "RANK": str(rank),
        "LOCAL_RANK": str(rank),
        "WORLD_SIZE": str(world_size),
        PARENT_ENV: str(os.getpid()),
    }
    env.pop("TORCHELASTIC_USE_AGENT_STORE", None)
    cmd = [sys.executable, "-m", "agentjet.core.step.train_worker"]
    return subprocess.Popen(cmd, env=env, stdin=subprocess.DEVNULL)


def how_exited(proc: subprocess.Popen[bytes]) -> str:
    """`by signal 9` or `with code 1`: the words a failure names a dead rank with."""
    code = proc.returncode
    return f"by signal {-code}" if code is not None and code < 0 else f"with code {code}"


def wait_all(procs: list[subprocess.Popen[bytes]], timeout_s: float) -> None:
    """Wait up to `timeout_s` in all for every process to exit (the caller kills what is left)."""
    deadline = time.monotonic() + timeout_s
    for proc in procs:
        try:
            proc.wait(max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            return


def kill_all(procs: list[subprocess.Popen[bytes]]) -> None:
    """SIGKILL every live process, then reap them (a worker that will not die is logged)."""
    for proc in procs:
        if proc.poll() is None:
            proc.kill()
    for proc in procs:
        try:
            proc.wait(10.0)
        except subprocess.TimeoutExpired:
            log.error("training worker pid %d did not die", proc.pid)
