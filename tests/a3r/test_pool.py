"""The server pool: real `agentjet server start` processes on loopback, heartbeats, leases, kill -9, no orphans."""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import httpx
import psutil
import pytest

from agentjet.a3r.errors import PoolError
from agentjet.a3r.pool.local_server import LocalMember
from agentjet.a3r.pool.members import MemberState, RemoteMember, SyntheticMember
from agentjet.a3r.pool.servers import ServerPool


def _alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def _until(check: Callable[[], bool], timeout_s: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.05)
    return check()


def _local(pool: ServerPool, name: str) -> LocalMember:
    member = pool.member(name)
    assert isinstance(member, LocalMember)
    return member


def test_local_servers_get_own_port_state_dir_and_private_token(tiny_pool: ServerPool) -> None:
    a, b = (_local(tiny_pool, n) for n in ("local-0", "local-1"))
    assert a.url != b.url and a.state_dir != b.state_dir and a.token != b.token
    for member in (a, b):
        assert member.healthy and member.pid is not None and _alive(member.pid)
        token_file = member.home / "token"
        assert stat.S_IMODE(token_file.stat().st_mode) == 0o600
        assert token_file.read_text() == member.token
        assert (member.state_dir / "journal.sqlite").is_file()  # --state-dir is the member's own
        assert str(member.token) not in " ".join(psutil.Process(member.pid).cmdline())  # never in argv
        ok = httpx.get(f"{member.url}/swarm/status", headers={"Authorization": f"Bearer {member.token}"})
        refused = httpx.get(f"{member.url}/swarm/status", headers={"Authorization": "Bearer wrong"})
        assert ok.status_code == 200 and ok.json()["model"] == "tiny" and refused.status_code == 401
        assert "start model=tiny" in member.log_path.read_text()


def test_heartbeat_brings_a_member_marked_down_back_up(tiny_pool: ServerPool) -> None:
    member = tiny_pool.member("local-0")
    tiny_pool.mark_down(member, "a trial lost its connection")
    assert not member.healthy and member.down_reason == "a trial lost its connection"
    assert _until(lambda: member.healthy, timeout_s=5.0)  # the next heartbeats find it answering
    assert member.down_reason is None


def test_acquire_hands_each_free_member_out_once(tiny_pool: ServerPool) -> None:
    first, second = tiny_pool.acquire(timeout=1), tiny_pool.acquire(timeout=1)
    assert {first.name, second.name} == {"local-0", "local-1"} and first.busy and second.busy
    with pytest.raises(PoolError, match="no pool server was free"):
        tiny_pool.acquire(timeout=0.3)
    got: list[str] = []
    waiter = threading.Thread(target=lambda: got.append(tiny_pool.acquire(timeout=10).name))
    waiter.start()
    time.sleep(0.2)
    released_at = time.monotonic()
    tiny_pool.release(second)
    waiter.join(timeout=10)
    assert got == [second.name] and time.monotonic() - released_at < 1.0  # a release wakes a waiter at once
    tiny_pool.release(first)
    tiny_pool.release(second)


def test_kill_9_is_detected_as_down_and_restart_brings_a_fresh_server(tiny_pool: ServerPool) -> None:
    member = _local(tiny_pool, "local-1")
    old_pid = member.pid
    assert old_pid is not None
    (member.state_dir / "marker").write_text("from the old run")
    os.kill(old_pid, signal.SIGKILL)
    assert _until(lambda: member.state is MemberState.DOWN, timeout_s=5.0)
    assert "killed by signal 9" in str(member.down_reason)
    assert tiny_pool.acquire(timeout=1).name == "local-0"  # a down member is never handed out
    with pytest.raises(PoolError):
        tiny_pool.acquire(timeout=0.5)
    tiny_pool.release(tiny_pool.member("local-0"))
    tiny_pool.restart(member)
    assert member.healthy and member.pid != old_pid and member.fresh and member.restarts == 1
    assert not (member.state_dir / "marker").exists()  # a fresh state dir
    assert httpx.get(f"{member.url}/health").json()["state"] == "rolling"


def test_close_stops_every_server_even_when_the_block_raises(tmp_path: Path) -> None:
    """The pool's exit path on an exception; stopping servers that are up is checked by `tiny_pool`'s teardown."""
    member = LocalMember("local-0", tmp_path / "local-0", model="tiny")
    member.spawn()  # not waited for: close must stop a server in any state
    before = set(threading.enumerate())
    with pytest.raises(ZeroDivisionError), ServerPool([member], heartbeat_s=0.05) as pool:
        heartbeats = [t for t in set(threading.enumerate()) - before if t.name.startswith("heartbeat-")]
        assert len(heartbeats) == 1 and member.pid is not None and _alive(member.pid)
        _ = 1 / 0
    assert not _alive(member.pid) and member.state is MemberState.STOPPED
    assert not heartbeats[0].is_alive()
    with pytest.raises(PoolError, match="closed"):
        pool.acquire(timeout=0.1)
    pool.close()  # idempotent


def test_ctrl_c_while_servers_start_stops_those_already_started(tmp_path: Path) -> None:
    started: list[int] = []

    def progress(message: str) -> None:
        started.append(int(message.split("(pid ")[1].split(",")[0]))
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        ServerPool.from_spec("local:2", tmp_path, model="tiny", progress=progress)
    assert len(started) == 1 and not _alive(started[0])
    assert not (tmp_path / "local-1" / "server.log").exists()  # the second one never started


_CAMPAIGN = """
import sys
from pathlib import Path
from agentjet.a3r.pool.servers import ServerPool
ServerPool.from_spec("local:1", Path(sys.argv[1]), model="tiny", progress=lambda m: print(m, flush=True))
"""


def test_servers_die_with_a_campaign_process_killed_by_sigkill(tmp_path: Path) -> None:
    campaign = subprocess.Popen([sys.executable, "-c", _CAMPAIGN, str(tmp_path)], stdout=subprocess.PIPE, text=True)
    assert campaign.stdout is not None
    line = campaign.stdout.readline()
    server_pid = int(line.split("(pid ")[1].split(",")[0])
    assert _alive(server_pid)
    campaign.kill()
    campaign.wait()
    assert _until(lambda: not _alive(server_pid), timeout_s=20.0), "the server outlived its campaign"


def test_a_url_member_is_used_as_given_with_its_token_from_the_env(
    tiny_pool: ServerPool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    server = _local(tiny_pool, "local-0")
    monkeypatch.setenv("POOL_TEST_TOKEN", str(server.token))
    spec = [{"url": server.url, "token_env": "POOL_TEST_TOKEN"}, {"url": "http://127.0.0.1:9", "token_env": "NOPE"}]
    with ServerPool.from_spec(spec, tmp_path, heartbeat_s=0.2, progress=lambda _: None) as pool:
        remote, unreachable = pool.members
        assert isinstance(remote, RemoteMember) and remote.healthy and remote.pid is None
        assert remote.url == server.url and remote.model == "tiny" and remote.token == server.token
        assert unreachable.state is MemberState.DOWN and "127.0.0.1:9" in str(unreachable.down_reason)
        with pytest.raises(PoolError):  # a URL member is never restarted by the campaign
            pool.restart(remote)
        remote.token = "wrong"  # as if the server had been restarted with another token
        assert _until(lambda: remote.state is MemberState.DOWN, timeout_s=5.0)
        assert "$POOL_TEST_TOKEN" in str(remote.down_reason)
    assert server.pid is not None and _alive(server.pid) and server.healthy  # closing the pool left it running


def test_synthetic_members_die_and_come_back_without_a_process() -> None:
    with ServerPool.synthetic(2, heartbeat_s=0.05) as pool:
        member = pool.member("synthetic-1")
        assert isinstance(member, SyntheticMember) and member.healthy and member.pid is None
        member.kill("killed by the test")
        assert pool.acquire(timeout=1).name == "synthetic-0"
        with pytest.raises(PoolError, match="killed by the test"):
            pool.acquire(timeout=0.3)
        pool.restart(member)
        assert pool.acquire(timeout=1) is member


def test_a_local_server_is_the_cli_under_the_parent_watch_with_a_members_flags(tiny_pool: ServerPool) -> None:
    member = _local(tiny_pool, "local-0")
    assert member.pid is not None
    argv = psutil.Process(member.pid).cmdline()
    watch = ["-m", "agentjet.core.launch.parent_watch", "--parent-pid", str(os.getpid()), "--", "server", "start"]
    assert argv[1:8] == watch  # it ends when this (campaign) process dies
    flags = argv[8:]
    assert dict(zip(flags[::2], flags[1::2], strict=True)) == {
        "--model": "tiny", "--host": "127.0.0.1", "--port": member.url.rpartition(":")[2],
        "--state-dir": str(member.state_dir), "--token-file": str(member.home / "token"),
        "--config": str(member.config_path), "--log-level": "WARNING",
    }  # fmt: skip
    assert "AGENTJET_TOKEN" not in psutil.Process(member.pid).environ()  # nor in its environment
