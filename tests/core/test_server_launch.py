"""The core's server launcher with real processes: `agentjet server start --model tiny` on loopback, a port
taken under it, a start that fails, a parent killed under it, and a stop that has to escalate."""

from __future__ import annotations

import os
import signal
import socket
import stat
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest

from agentjet.core import ServerProcess, ServerStartFailed, pid_alive, process_mentions, stop_process_group


def _until(check: Callable[[], bool], timeout_s: float) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.05)
    return check()


def test_a_taken_port_is_retried_on_another_and_the_token_stays_off_the_command_line(tmp_path: Path) -> None:
    taken = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    port = taken.getsockname()[1]
    urls: list[str] = []
    server = ServerProcess(
        "tiny", tmp_path / "state", log_path=tmp_path / "server.log", port=port, on_start=lambda s: urls.append(s.url)
    )
    try:
        server.start()
        server.wait_ready(time.monotonic() + 240)
        assert server.port != port and urls == [f"http://127.0.0.1:{port}", server.url]
        assert "address already in use" in (tmp_path / "server.log").read_text().lower()
        token_file = tmp_path / "state" / "token"
        assert stat.S_IMODE(token_file.stat().st_mode) == 0o600 and token_file.read_text() == server.token
        assert server.pid is not None and process_mentions(server.pid, f"--token-file {token_file}")
        assert not process_mentions(server.pid, server.token)  # never in argv
        headers = {"Authorization": f"Bearer {server.token}"}
        assert httpx.get(f"{server.url}/swarm/status", headers=headers).json()["state"] == "rolling"
    finally:
        taken.close()
        server.stop()
    assert server.exit_code() is not None and not server.is_alive()  # stopped and reaped


def test_a_start_that_fails_names_its_log_and_quotes_its_tail(tmp_path: Path) -> None:
    log_path = tmp_path / "logs" / "server.log"
    server = ServerProcess("no-such-model", tmp_path / "state", log_path=log_path, die_with_parent=False)
    server.start()
    with pytest.raises(ServerStartFailed) as failed:
        server.wait_ready(time.monotonic() + 120)
    message = str(failed.value)
    assert "exited while starting (exit code" in message and str(log_path) in message
    assert "no-such-model" in message.split(str(log_path), 1)[1]  # the tail: the CLI's one-line refusal
    assert server.exit_code() not in (None, 0)


def test_a_server_that_is_not_ready_by_the_deadline_names_its_log(tmp_path: Path) -> None:
    server = ServerProcess("tiny", tmp_path / "state", log_path=tmp_path / "server.log")
    server.start()
    try:
        with pytest.raises(ServerStartFailed, match=r"not ready after 0 s .*server\.log:\n--- .* start model=tiny"):
            server.wait_ready(time.monotonic())
    finally:
        server.stop()


_PARENT = """
import sys, threading, time
from pathlib import Path
from agentjet.core import ServerProcess
home = Path(sys.argv[1])
server = ServerProcess("tiny", home / "state", log_path=home / "server.log")
starter = threading.Thread(target=server.start)  # a thread that ends long before its parent
starter.start()
starter.join()
server.wait_ready(time.monotonic() + 240)
print(server.pid, flush=True)
time.sleep(600)
"""


def test_the_server_dies_with_its_parent_even_when_a_finished_thread_started_it(tmp_path: Path) -> None:
    parent = subprocess.Popen([sys.executable, "-c", _PARENT, str(tmp_path)], stdout=subprocess.PIPE, text=True)
    assert parent.stdout is not None
    server_pid = int(parent.stdout.readline())
    try:
        assert pid_alive(server_pid) and process_mentions(server_pid, "agentjet.core.launch.parent_watch")
        parent.kill()
        parent.wait()
        assert _until(lambda: not pid_alive(server_pid), timeout_s=20.0), "the server outlived its parent"
    finally:
        if parent.poll() is None:
            parent.kill()
        if pid_alive(server_pid):
            os.killpg(server_pid, signal.SIGKILL)


_IGNORE_SIGTERM = "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN)"
_STUBBORN = f"""
import subprocess, sys
{_IGNORE_SIGTERM}
child = subprocess.Popen([sys.executable, "-c", {_IGNORE_SIGTERM + "; time.sleep(120)"!r}])
print(child.pid, flush=True)
time.sleep(120)
"""


def _stubborn_group() -> tuple[subprocess.Popen[str], int]:
    """A process that ignores SIGTERM, leading a group with a grandchild that ignores it too."""
    leader = subprocess.Popen([sys.executable, "-c", _STUBBORN], stdout=subprocess.PIPE, text=True,
                              start_new_session=True)  # fmt: skip
    assert leader.stdout is not None
    return leader, int(leader.stdout.readline())


def test_stop_escalates_to_sigkill_for_the_whole_group_and_reaps_its_child() -> None:
    leader, grandchild = _stubborn_group()
    started = time.monotonic()
    stop_process_group(leader.pid, process=leader, grace_s=0.5)
    assert leader.returncode == -signal.SIGKILL and time.monotonic() - started < 10
    assert _until(lambda: not pid_alive(grandchild), timeout_s=5.0)


def test_stop_by_pid_alone_ends_a_group_this_process_holds_no_handle_on() -> None:
    leader, grandchild = _stubborn_group()
    try:
        stop_process_group(leader.pid, grace_s=0.5)  # a zombie (not yet reaped) counts as gone
        assert leader.wait(timeout=5) == -signal.SIGKILL
        assert _until(lambda: not pid_alive(grandchild), timeout_s=5.0)
    finally:
        if leader.poll() is None:
            leader.kill()


def test_the_parent_watch_entry_refuses_a_command_line_without_a_parent() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "agentjet.core.launch.parent_watch", "server", "start"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 2 and "usage: python -m agentjet.core.launch.parent_watch" in done.stderr
