"""The swarm bridge and forwarder on the host, no sandbox: what agent code behind them can and cannot do.

A real `tiny` server on loopback with a token; `forwarder.py` runs as a subprocess on another
port (inside a sandbox it uses the server's port: the base URL then matches too) and relays to
the bridge's socket, exactly the path a sandboxed client's requests take.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from agentjet.core import EpisodeNotFound, SwarmClient
from agentjet.core.backends.fakes import ScriptedBackend
from agentjet.core.config import ServerSettings
from agentjet.core.server.app import create_app
from agentjet.core.testing import RunningServer, serve_in_thread
from agentjet.sandbox import forwarder
from agentjet.sandbox.bridge import SANDBOX_FORWARDER, SANDBOX_SOCKET, SwarmAccess, SwarmBridge, SwarmBridges
from agentjet.sandbox.errors import SandboxError

TOKEN = "bridge-test-token-3f9c-0123456789"
FORWARDER = Path(forwarder.__file__)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _wait_listening(port: int, process: subprocess.Popen[Any], timeout_s: float = 10.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        assert process.poll() is None, "forwarder exited early"
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.02)
    raise TimeoutError(f"nothing listens on {port}")


def _serve(settings: ServerSettings, backend: Any = None) -> Iterator[RunningServer]:
    with serve_in_thread(create_app(settings, backend=backend)) as server:
        deadline = time.monotonic() + 120
        while httpx.get(f"{server.url}/health", timeout=5).json().get("state") != "rolling":
            assert time.monotonic() < deadline, "server never reached rolling"
            time.sleep(0.05)
        yield server


@pytest.fixture(scope="module")
def tiny_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    settings = ServerSettings(model="tiny", state_dir=tmp_path_factory.mktemp("state"), token=TOKEN)
    yield from _serve(settings)


@pytest.fixture(scope="module")
def bridge(tiny_server: RunningServer) -> Iterator[SwarmBridge]:
    with SwarmBridge(SwarmAccess(tiny_server.url, TOKEN)) as running:
        yield running


def _argv(socket_path: Path, port: int, *command: str) -> list[str]:
    """The forwarder as the sandbox runs it (`-I`: standard library only), on the host's python."""
    return [sys.executable, "-I", str(FORWARDER), "--port", str(port), "--unix", str(socket_path), "--", *command]


def _forward(bridge: SwarmBridge, command: list[str], port: int) -> subprocess.Popen[bytes]:
    return subprocess.Popen(_argv(bridge.socket_path, port, *command))


@pytest.fixture(scope="module")
def sandbox_url(bridge: SwarmBridge) -> Iterator[str]:
    """The server as agent code behind the forwarder sees it (the forwarder idles on `sleep`)."""
    port = _free_port()
    process = _forward(bridge, ["sleep", "600"], port)
    _wait_listening(port, process)
    yield f"http://127.0.0.1:{port}"
    process.terminate()
    assert process.wait(timeout=10) == 128 + signal.SIGTERM


AGENT = """
import json, os, sys
import openai
from agentjet.core import EpisodeNotFound, SwarmClient

url = os.environ["AGENTJET_SERVER"]
seen = {"env": dict(os.environ), "replies": []}
with SwarmClient(url, client_id="sandboxed") as swarm:
    seen["replies"].append(swarm.status())
    episode = swarm.begin_episode("task-1")
    seen["base_url"] = episode.base_url
    llm = openai.OpenAI(base_url=episode.base_url, api_key=episode.api_key, max_retries=0, timeout=60)
    messages = [{"role": "user", "content": "Say hi"}]
    reply = llm.chat.completions.create(model="tiny", messages=messages, max_tokens=8)
    seen["replies"].append(reply.model_dump())
    chunks = list(llm.chat.completions.create(model="tiny", messages=messages, max_tokens=8, stream=True))
    seen["chunks"] = [chunk.model_dump() for chunk in chunks]
    seen["end"] = episode.end(reward=0.75)
    seen["episode_id"] = episode.episode_id
    seen["replies"].append(swarm.get_episode(episode.episode_id))
print(json.dumps(seen))
"""


def test_an_agent_behind_the_forwarder_runs_an_episode_without_the_token(
    tiny_server: RunningServer, bridge: SwarmBridge, tmp_path: Path
) -> None:
    port = _free_port()
    env = {"PATH": os.environ["PATH"], "AGENTJET_SERVER": f"http://127.0.0.1:{port}", "HOME": str(tmp_path)}
    env["PYTHONPATH"] = str(Path(__file__).resolve().parents[2])
    command = _argv(bridge.socket_path, port, sys.executable, "-c", AGENT)
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert TOKEN not in done.stdout + done.stderr
    seen = json.loads(done.stdout)
    assert "AGENTJET_TOKEN" not in seen["env"]
    assert seen["base_url"] == f"http://127.0.0.1:{port}/v1"  # the Host it used, so the base URL works inside
    assert seen["replies"][1]["choices"][0]["message"]["content"] is not None
    assert len(seen["chunks"]) > 1 and seen["chunks"][0]["object"] == "chat.completion.chunk"
    assert seen["end"]["status"] == "ended" and seen["end"]["calls"] == 2
    with SwarmClient(tiny_server.url, token=TOKEN) as host_side:  # the server's own record of it
        record = host_side.get_episode(seen["episode_id"])
        assert record["status"] == "ended" and record["reward"] == 0.75 and len(record["calls"]) == 2
        assert host_side.status()["episodes"]["finished"] >= 1


def test_engine_control_and_config_writes_are_refused(tiny_server: RunningServer, sandbox_url: str) -> None:
    with httpx.Client(base_url=sandbox_url, timeout=30) as sandbox:
        before = sandbox.get("/swarm/config")
        assert before.status_code == 200
        changed = dict(before.json()["config"])
        refused = [
            sandbox.put("/swarm/config", json=changed),
            sandbox.post("/swarm/engine/stop"),
            sandbox.post("/swarm/engine/start"),
            sandbox.put("/swarm/episodes/../config", json=changed),  # dot segments never reach the server
            sandbox.put("/swarm/%63onfig", json=changed),  # nor escapes
            sandbox.get("/docs"),
            sandbox.get("/openapi.json"),
        ]
        for reply in refused:
            assert reply.status_code == 403, (reply.request.url, reply.text)
            assert reply.json()["error"]["code"] == "sandbox_forbidden"
        assert sandbox.get("/health").json()["state"] == "rolling"  # the engine was not stopped
    with SwarmClient(tiny_server.url, token=TOKEN) as host_side:
        assert host_side.status()["state"] == "rolling"


def test_the_bridge_overwrites_swarm_credentials_and_passes_episode_keys_through(
    tiny_server: RunningServer, sandbox_url: str
) -> None:
    wrong = {"Authorization": "Bearer not-the-token"}
    assert httpx.get(f"{tiny_server.url}/swarm/status", headers=wrong).status_code == 401  # direct: refused
    with httpx.Client(base_url=sandbox_url, timeout=30) as sandbox:
        status = sandbox.get("/swarm/status", headers=wrong)
        assert status.status_code == 200 and TOKEN not in status.text  # the bridge's token replaced it
        begun = sandbox.post("/swarm/episodes", json={"task_id": "t"}, headers=wrong).json()
        chat = {"model": "tiny", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 4}
        forged = sandbox.post("/v1/chat/completions", json=chat, headers={"Authorization": f"Bearer {TOKEN}"})
        assert forged.status_code == 401  # /v1 takes episode keys only: no token is added there
        keyed = sandbox.post("/v1/chat/completions", json=chat, headers={"Authorization": f"Bearer {begun['api_key']}"})
        assert keyed.status_code == 200
        ended = sandbox.post(f"/swarm/episodes/{begun['episode_id']}/abort")
        assert ended.json()["status"] == "aborted"


def test_given_the_admin_token_the_bridge_injects_a_client_token_of_its_own(tiny_server: RunningServer) -> None:
    with SwarmClient(tiny_server.url, token=TOKEN) as admin:
        known = {t["token_id"] for t in admin.list_tokens()}  # the module's bridge holds one too
        with SwarmBridge(SwarmAccess(tiny_server.url, TOKEN)) as scoped:
            live = [t for t in admin.list_tokens() if t["token_id"] not in known]
            assert live[0]["name"].startswith("sandbox-bridge-") and not live[0]["revoked"]
            assert len(live) == 1
            transport = httpx.HTTPTransport(uds=str(scoped.socket_path))
            with httpx.Client(transport=transport, base_url="http://127.0.0.1") as sandbox:
                begun = sandbox.post("/swarm/episodes", json={"task_id": "t"}).json()
            assert admin.get_episode(begun["episode_id"])["owner"] == live[0]["token_id"]  # not the admin's
        after = {t["token_id"]: t["revoked"] for t in admin.list_tokens()}
        assert after[live[0]["token_id"]] is True  # revoked when the bridge closed
        assert admin.get_episode(begun["episode_id"])["status"] == "aborted"  # left open: aborted on close


def test_a_bridge_given_a_client_token_injects_it_as_is(tiny_server: RunningServer) -> None:
    with SwarmClient(tiny_server.url, token=TOKEN) as admin:
        client_token = admin.create_token("a-laptop")
        before = len(admin.list_tokens())
        with SwarmBridge(SwarmAccess(tiny_server.url, client_token["token"])) as bridge:
            transport = httpx.HTTPTransport(uds=str(bridge.socket_path))
            with httpx.Client(transport=transport, base_url="http://127.0.0.1") as sandbox:
                begun = sandbox.post("/swarm/episodes", json={"task_id": "t"}).json()
                sandbox.post(f"/swarm/episodes/{begun['episode_id']}/abort")
        assert len(admin.list_tokens()) == before  # a client token cannot issue tokens: none was made
        assert admin.get_episode(begun["episode_id"])["owner"] == client_token["token_id"]


def test_a_bridge_without_a_token_takes_the_hosts_env_else_adds_none(
    tiny_server: RunningServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AGENTJET_TOKEN", TOKEN)
    with SwarmBridge(tiny_server.url) as from_env:
        transport = httpx.HTTPTransport(uds=str(from_env.socket_path))
        with httpx.Client(transport=transport, base_url="http://127.0.0.1") as client:
            assert client.get("/swarm/status").status_code == 200
    monkeypatch.delenv("AGENTJET_TOKEN")
    with SwarmBridge(tiny_server.url) as tokenless:
        transport = httpx.HTTPTransport(uds=str(tokenless.socket_path))
        with httpx.Client(transport=transport, base_url="http://127.0.0.1") as client:
            assert client.get("/swarm/status").status_code == 401
            assert client.get("/swarm/status", headers={"Authorization": f"Bearer {TOKEN}"}).status_code == 200


def test_socket_dir_is_private_and_removed_on_close(tiny_server: RunningServer) -> None:
    with SwarmBridge(SwarmAccess(tiny_server.url, TOKEN)) as running:
        mode = running.socket_dir.stat()
        assert stat.S_IMODE(running.socket_path.stat().st_mode) == 0o666
        if os.geteuid() == 0:
            assert stat.S_IMODE(mode.st_mode) == 0o710 and mode.st_gid == 65534  # root and the sandbox gid only
        else:
            assert stat.S_IMODE(mode.st_mode) == 0o711  # traversable, not listable
        assert running.env() == {"AGENTJET_SERVER": f"http://127.0.0.1:{tiny_server.port}"}
        assert running.wrap(["python3", "client.py"]) == [
            "python3", "-I", SANDBOX_FORWARDER, "--port", str(tiny_server.port), "--unix", SANDBOX_SOCKET,
            "--", "python3", "client.py",
        ]  # fmt: skip
        assert TOKEN not in repr(running) + repr(running.access)
        directory = running.socket_dir
    assert not directory.exists()


def test_closing_the_bridge_aborts_the_episodes_the_sandbox_left_open(tiny_server: RunningServer) -> None:
    with SwarmBridge(SwarmAccess(tiny_server.url, TOKEN)) as running:
        transport = httpx.HTTPTransport(uds=str(running.socket_path))
        with httpx.Client(transport=transport, base_url=f"http://127.0.0.1:{running.port}") as sandbox:
            left, ended = (sandbox.post("/swarm/episodes", json={"task_id": "t"}).json()["episode_id"] for _ in "ab")
            assert sandbox.post(f"/swarm/episodes/{ended}/end", json={"reward": 1.0}).json()["status"] == "ended"
    assert running.aborted_on_close == [left]
    with SwarmClient(tiny_server.url, token=TOKEN) as host_side:
        assert host_side.get_episode(left)["status"] == "aborted"
        assert host_side.get_episode(ended)["status"] == "ended"


@pytest.fixture
def slow_server(tmp_path: Path, tiny_tokenizer: Any) -> Iterator[RunningServer]:
    backend = ScriptedBackend(tiny_tokenizer, ["one two three four five six seven eight"], token_delay_s=0.25)
    yield from _serve(ServerSettings(model="tiny", state_dir=tmp_path / "state", token=TOKEN), backend)


def test_sse_streams_through_unbuffered(slow_server: RunningServer) -> None:
    with SwarmBridge(SwarmAccess(slow_server.url, TOKEN)) as running:
        port = _free_port()
        process = _forward(running, ["sleep", "600"], port)
        try:
            _wait_listening(port, process)
            url = f"http://127.0.0.1:{port}"
            begun = httpx.post(f"{url}/swarm/episodes", json={"task_id": "t"}).json()
            chat = {"model": "x", "messages": [{"role": "user", "content": "go"}], "max_tokens": 8, "stream": True}
            headers = {"Authorization": f"Bearer {begun['api_key']}"}
            arrivals: list[float] = []
            with httpx.stream("POST", f"{url}/v1/chat/completions", json=chat, headers=headers, timeout=30) as reply:
                for line in reply.iter_lines():
                    if line.startswith("data: {") and '"content":"' in line and '"content":""' not in line:
                        arrivals.append(time.monotonic())
            assert len(arrivals) >= 4
            assert arrivals[-1] - arrivals[0] > 1.0  # tokens arrived as sampled, 0.25 s apart, not in one piece
        finally:
            process.terminate()
            process.wait(timeout=10)


# ---- the forwarder alone -------------------------------------------------------------------------------


@pytest.fixture
def echo_socket(tmp_path: Path) -> Iterator[Path]:
    """A Unix server that reads to EOF, then answers what it got, upper-cased (half-close aware)."""
    path = tmp_path / "echo.sock"
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(path))
    server.listen(64)

    def answer(conn: socket.socket) -> None:
        with conn, contextlib.suppress(OSError):  # a command that exits early hangs up first
            data = b""
            while chunk := conn.recv(65536):
                data += chunk
            conn.sendall(data.upper())

    def serve() -> None:
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            threading.Thread(target=answer, args=(conn,), daemon=True).start()

    threading.Thread(target=serve, daemon=True).start()
    yield path
    server.close()


def _run_forwarder(socket_path: Path, code: str, timeout_s: float = 30) -> subprocess.CompletedProcess[str]:
    port = _free_port()
    command = _argv(socket_path, port, sys.executable, "-c", code)
    env = {**os.environ, "PORT": str(port)}
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=timeout_s)


def test_forwarder_relays_many_half_closed_connections(echo_socket: Path) -> None:
    code = """
import os, socket, threading
port = int(os.environ["PORT"])
answers = {}
def ask(i):
    with socket.create_connection(("127.0.0.1", port)) as c:
        c.sendall(b"msg-%d-" % i * 5000)
        c.shutdown(socket.SHUT_WR)
        data = b""
        while chunk := c.recv(65536):
            data += chunk
        answers[i] = data
threads = [threading.Thread(target=ask, args=(i,)) for i in range(24)]
[t.start() for t in threads]; [t.join() for t in threads]
assert all(answers[i] == (b"MSG-%d-" % i) * 5000 for i in range(24)), "wrong answer"
print("ok", len(answers))
"""
    done = _run_forwarder(echo_socket, code)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok 24"


@pytest.mark.parametrize(("code", "status"), [("raise SystemExit(7)", 7), ("import os; os.kill(os.getpid(), 9)", 137)])
def test_forwarder_exits_with_the_commands_status(echo_socket: Path, code: str, status: int) -> None:
    assert _run_forwarder(echo_socket, code).returncode == status


def test_forwarder_exits_when_the_command_does_even_with_a_connection_open(echo_socket: Path) -> None:
    code = "import os, socket; c = socket.create_connection(('127.0.0.1', int(os.environ['PORT']))); os._exit(5)"
    started = time.monotonic()
    assert _run_forwarder(echo_socket, code, timeout_s=10).returncode == 5
    assert time.monotonic() - started < 5


def test_forwarder_passes_sigterm_on(echo_socket: Path, tmp_path: Path) -> None:
    ready = tmp_path / "ready"
    code = f"""
import pathlib, signal, sys, time
signal.signal(signal.SIGTERM, lambda *_: sys.exit(42))
pathlib.Path({str(ready)!r}).touch()
time.sleep(60)
"""
    process = subprocess.Popen(_argv(echo_socket, _free_port(), sys.executable, "-c", code))
    deadline = time.monotonic() + 10
    while not ready.exists():
        assert time.monotonic() < deadline and process.poll() is None
        time.sleep(0.02)
    process.send_signal(signal.SIGTERM)
    assert process.wait(timeout=10) == 42  # the command handled it and its status came back


def test_forwarder_reports_a_missing_command(echo_socket: Path) -> None:
    command = _argv(echo_socket, _free_port(), "/nonexistent/agent")
    done = subprocess.run(command, capture_output=True, text=True, timeout=10)
    assert done.returncode == 127 and "cannot start" in done.stderr


# ---- several servers behind one forwarder (SwarmBridges) ---------------------------------------

SECOND_TOKEN = "bridge-test-second-token-77aa-987654"

TWO_SERVERS = """
import json, os
from agentjet.core import EpisodeNotFound, SwarmClient

seen = {}
for name in ("A", "B"):
    with SwarmClient(os.environ[f"SERVER_{name}"], client_id=f"sandboxed-{name}") as swarm:
        episode = swarm.begin_episode(f"task-{name}")
        seen[name] = {"episode_id": episode.episode_id, "base_url": episode.base_url,
                      "end": episode.end(reward=0.25 if name == "A" else 0.5)}
print(json.dumps(seen))
"""


@pytest.fixture(scope="module")
def second_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    settings = ServerSettings(model="tiny", state_dir=tmp_path_factory.mktemp("second"), token=SECOND_TOKEN)
    yield from _serve(settings)


def test_one_forwarder_reaches_two_servers_each_through_its_own_bridge_and_token(
    tiny_server: RunningServer, second_server: RunningServer, tmp_path: Path
) -> None:
    accesses = [SwarmAccess(tiny_server.url, TOKEN), SwarmAccess(second_server.url, SECOND_TOKEN)]
    with SwarmBridges(accesses) as group:
        sockets = sorted(p.name for p in group.socket_dir.iterdir())
        assert sockets == sorted(f"swarm-{b.port}.sock" for b in group.bridges)
        wrapped = group.wrap(["true"])  # what runs inside: one --port/--unix pair per server
        assert wrapped[:3] == ["python3", "-I", SANDBOX_FORWARDER] and wrapped.count("--port") == 2
        assert group.env() == {"AGENTJET_SERVER": f"http://127.0.0.1:{group.bridges[0].port}"}
        ports = [_free_port(), _free_port()]
        pairs = [
            a
            for b, p in zip(group.bridges, ports, strict=True)
            for a in ("--port", str(p), "--unix", str(b.socket_path))
        ]
        env = {
            "PATH": os.environ["PATH"],
            "HOME": str(tmp_path),
            "PYTHONPATH": str(Path(__file__).resolve().parents[2]),
        }
        env |= {"SERVER_A": f"http://127.0.0.1:{ports[0]}", "SERVER_B": f"http://127.0.0.1:{ports[1]}"}
        command = [sys.executable, "-I", str(FORWARDER), *pairs, "--", sys.executable, "-c", TWO_SERVERS]
        done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)
        socket_dir = group.socket_dir
    assert done.returncode == 0, done.stderr
    assert TOKEN not in done.stdout + done.stderr and SECOND_TOKEN not in done.stdout + done.stderr
    seen = json.loads(done.stdout)
    assert seen["A"]["base_url"] == f"http://127.0.0.1:{ports[0]}/v1" and seen["B"]["base_url"].endswith(
        f"{ports[1]}/v1"
    )
    for name, url, token, reward in (("A", tiny_server.url, TOKEN, 0.25), ("B", second_server.url, SECOND_TOKEN, 0.5)):
        with SwarmClient(url, token=token) as host_side:
            record = host_side.get_episode(seen[name]["episode_id"])
            assert record["status"] == "ended" and record["reward"] == reward and record["task_id"] == f"task-{name}"
    other = seen["B"]["episode_id"]
    with SwarmClient(tiny_server.url, token=TOKEN) as first, pytest.raises(EpisodeNotFound, match="no episode"):
        first.get_episode(other)  # B's episode lives on B's server only
    assert not socket_dir.exists()  # closing the group removes its dir and every socket


def test_a_group_refuses_two_servers_on_one_port_and_the_forwarder_unpaired_flags(echo_socket: Path) -> None:
    with pytest.raises(SandboxError, match="distinct ports"):
        SwarmBridges(["http://127.0.0.1:8710", "http://localhost:8710"])
    with pytest.raises(SandboxError, match="at least one"):
        SwarmBridges([])
    port = _free_port()
    unpaired = [sys.executable, "-I", str(FORWARDER), "--port", str(port), "--port", str(port + 1)]
    done = subprocess.run(
        [*unpaired, "--unix", str(echo_socket), "--", "true"], capture_output=True, text=True, timeout=30
    )
    assert done.returncode == 2 and "one --unix per --port" in done.stderr


def test_the_forwarder_relays_two_ports_to_two_sockets(echo_socket: Path, tmp_path: Path) -> None:
    code = """
import os, socket
for port in os.environ["PORTS"].split():
    with socket.create_connection(("127.0.0.1", int(port)), timeout=10) as conn:
        conn.sendall(b"ping " + port.encode())
        conn.shutdown(socket.SHUT_WR)
        print(conn.recv(100).decode())
"""
    ports = [_free_port(), _free_port()]
    pairs = [a for p in ports for a in ("--port", str(p), "--unix", str(echo_socket))]
    command = [sys.executable, "-I", str(FORWARDER), *pairs, "--", sys.executable, "-c", code]
    done = subprocess.run(
        command, env={**os.environ, "PORTS": " ".join(map(str, ports))}, capture_output=True, text=True, timeout=30
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[:2] == [f"PING {ports[0]}", f"PING {ports[1]}"]
