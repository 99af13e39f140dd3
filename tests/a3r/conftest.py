"""A3R fixtures: one real `local:2` pool of `tiny` servers shared by the session (starting one costs ~20 s)."""

from __future__ import annotations

from collections.abc import Iterator

import psutil
import pytest

from agentjet.a3r.pool.members import MemberState
from agentjet.a3r.pool.servers import ServerPool
from agentjet.core import TrainConfig
from tests.postgres import PostgresServer, postgres_server

# small GRPO steps for tiny: one task group of two episodes per update; no checkpoints in trials
TINY_TRAIN = TrainConfig.model_validate(
    {"grpo": {"group_size": 2}, "collect": {"strategy": "tasks", "tasks": 1}, "checkpoint_every": 1000}
)


@pytest.fixture(scope="session")
def postgres() -> Iterator[PostgresServer]:
    """A throwaway PostgreSQL cluster on loopback for the session (skips, or fails in CI, without one)."""
    with postgres_server() as server:
        yield server


@pytest.fixture(scope="session")
def _shared_tiny_pool(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerPool]:
    runtime = tmp_path_factory.mktemp("a3r-runtime")
    options = {"heartbeat_s": 0.2, "auto_restart": False, "progress": lambda _: None}
    with ServerPool.from_spec("local:2", runtime, model="tiny", config=TINY_TRAIN, **options) as pool:
        yield pool
        servers = {m.pid: _created(m.pid) for m in pool.members if m.pid is not None}
    assert len(servers) == 2, "a member had no server process"
    assert not any(_alive(pid, created) for pid, created in servers.items()), "closing the pool left a server running"


def _created(pid: int) -> float | None:
    try:
        return float(psutil.Process(pid).create_time())
    except psutil.NoSuchProcess:
        return None


def _alive(pid: int, created: float | None) -> bool:
    """The same process still runs: not a zombie, and not a new process the kernel gave the pid since (pids wrap at
    32768 on a long-lived machine, and a full test run starts thousands of processes)."""
    if created is None:
        return False
    try:
        process = psutil.Process(pid)
        return process.create_time() == created and process.status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


@pytest.fixture
def tiny_pool(_shared_tiny_pool: ServerPool) -> Iterator[ServerPool]:
    """The shared pool with both members up (one a test killed is restarted first) and free afterwards."""
    for member in _shared_tiny_pool.members:
        if member.state is not MemberState.UP:
            _shared_tiny_pool.restart(member)
    yield _shared_tiny_pool
    for member in _shared_tiny_pool.members:
        _shared_tiny_pool.release(member)
