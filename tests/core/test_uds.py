"""`agentjet server start --uds PATH`: a server with no TCP port, reached over a Unix socket (a container with
network_mode none, clients through a mounted socket); `--public-url` is the base URL its episodes hand out."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

TOKEN = "uds-test-admin-token-0123456789"


def _wait_rolling(client: httpx.Client, process: subprocess.Popen[bytes], timeout_s: float = 120) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        assert process.poll() is None, "the server exited"
        try:
            if client.get("/health").json()["state"] == "rolling":
                return
        except (httpx.TransportError, ValueError):
            pass
        time.sleep(0.1)
    raise TimeoutError("no rolling server on the socket")


def _listening_tcp_ports(pid: int) -> list[int]:
    import psutil

    return [c.laddr.port for c in psutil.Process(pid).net_connections("tcp") if c.status == psutil.CONN_LISTEN]


@pytest.mark.parametrize("public_url", [None, "http://127.0.0.1:8710"])
def test_a_server_on_a_unix_socket_serves_episodes_and_opens_no_port(tmp_path: Path, public_url: str | None) -> None:
    socket_path = tmp_path / "run" / "swarm.sock"
    socket_path.parent.mkdir()
    command = [sys.executable, "-m", "agentjet", "server", "start", "--model", "tiny", "--uds", str(socket_path)]
    command += ["--state-dir", str(tmp_path / "state"), "--log-level", "WARNING"]
    command += ["--public-url", public_url] if public_url else []
    env = {**os.environ, "AGENTJET_TOKEN": TOKEN}
    process = subprocess.Popen(command, env=env, stderr=subprocess.PIPE)
    transport = httpx.HTTPTransport(uds=str(socket_path))
    try:
        with httpx.Client(transport=transport, base_url="http://127.0.0.1:9999", timeout=60) as client:
            _wait_rolling(client, process)
            assert oct(socket_path.stat().st_mode & 0o777) == "0o666"  # clients of other users may connect
            assert _listening_tcp_ports(process.pid) == []
            begun = client.post("/swarm/episodes", json={"task_id": "t"}, headers={"Authorization": f"Bearer {TOKEN}"})
            assert begun.status_code == 200, begun.text
            episode = begun.json()
            # the base URL is the public one, else the address the request came to (a forwarder's port)
            assert episode["base_url"] == f"{public_url or 'http://127.0.0.1:9999'}/v1"
            reply = client.post(
                "/v1/chat/completions",
                json={"model": "tiny", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 3},
                headers={"Authorization": f"Bearer {episode['api_key']}"},
            )
            assert reply.status_code == 200 and reply.json()["usage"]["completion_tokens"] == 3
            no_token = client.get("/swarm/status")
            assert no_token.status_code == 401  # the socket is no way around the token
    finally:
        process.send_signal(signal.SIGTERM)
        _, stderr = process.communicate(timeout=60)
    assert f"unix:{socket_path}" in stderr.decode()


def test_a_socket_in_a_missing_folder_is_refused_in_one_line(tmp_path: Path) -> None:
    socket_path = tmp_path / "nowhere" / "swarm.sock"
    command = [sys.executable, "-m", "agentjet", "server", "start", "--model", "tiny", "--uds", str(socket_path)]
    command += ["--state-dir", str(tmp_path / "state")]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines()[-1] == (
        f"error: cannot listen on {socket_path}: its folder {socket_path.parent} does not exist"
    )
    assert not (tmp_path / "state").exists()  # nothing left behind
