"""The escape suite, run on every backend: each attempt must be contained AND reported with the right reason.

Network rule: nothing here sends a packet to a non-loopback address, not even one expected to
fail. The network checks look (interfaces, resolver config) or knock on loopback only; the DNS
check first proves the resolver points at loopback (or nowhere) before it tries a lookup.
Limits are small and timeouts short so the whole suite stays quick.
"""

from __future__ import annotations

import json
import os
import resource
import secrets
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from agentjet.sandbox.api import Sandbox
from agentjet.sandbox.limits import Limits
from agentjet.sandbox.result import RunResult, StopReason
from agentjet.sandbox.runspec import agentjet_source

SMALL = Limits(
    memory_bytes=96 * 1024**2,
    pids=32,
    timeout_s=10.0,
    output_bytes=64 * 1024,
    file_size_bytes=1024**2,
    workdir_bytes=16 * 1024**2,
    tmp_bytes=16 * 1024**2,
)


def run_py(sandbox: Sandbox, code: str, *, limits: Limits = SMALL, files: Path | None = None) -> RunResult:
    return sandbox.run(["python3", "-c", code], files=files, limits=limits)


def replace_limits(**changes: Any) -> Limits:
    return replace(SMALL, **changes)


def report(result: RunResult) -> dict[str, Any]:
    """The JSON a probe printed on its last stdout line."""
    assert result.stopped_by is StopReason.EXITED and result.exit_code == 0, (result, result.stderr)
    return dict(json.loads(result.stdout.strip().splitlines()[-1]))


# --- network -------------------------------------------------------------------------------------


@pytest.fixture
def host_listener() -> Iterator[tuple[int, list[Any]]]:
    """A real TCP service on the host's 127.0.0.1; records every connection it accepts."""
    accepted: list[Any] = []
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    server.settimeout(0.2)
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, peer = server.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            accepted.append(peer)
            conn.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield server.getsockname()[1], accepted
    stop.set()
    thread.join(timeout=2)
    server.close()


CONNECT = """
import json, socket, sys
port = int(sys.argv[1])
out = {}
for host in ("127.0.0.1", "localhost"):
    try:
        socket.create_connection((host, port), timeout=2).close()
        out[host] = "connected"
    except OSError as exc:
        out[host] = type(exc).__name__
try:
    s = socket.socket(socket.AF_UNIX)
    s.connect("\\0" + sys.argv[2])  # an abstract socket lives in the network namespace
    out["abstract"] = "connected"
except OSError as exc:
    out["abstract"] = type(exc).__name__
print(json.dumps(out))
"""


def test_host_services_on_loopback_are_unreachable(sandbox: Sandbox, host_listener: tuple[int, list[Any]]) -> None:
    port, accepted = host_listener
    abstract_name = "agentjet-escape-" + secrets.token_hex(4)
    abstract = socket.socket(socket.AF_UNIX)
    abstract.bind("\0" + abstract_name)
    abstract.listen(1)
    try:
        socket.create_connection(("127.0.0.1", port), timeout=2).close()  # the service really answers here
        deadline = time.monotonic() + 5
        while not accepted and time.monotonic() < deadline:
            time.sleep(0.01)
        accepted.clear()
        result = sandbox.run(["python3", "-c", CONNECT, str(port), abstract_name], limits=SMALL)
    finally:
        abstract.close()
    seen = report(result)
    assert seen["127.0.0.1"] == "ConnectionRefusedError"  # its own loopback, where nothing listens
    assert seen["abstract"] == "ConnectionRefusedError"
    assert seen["localhost"] != "connected"
    assert accepted == []


RESOLVE = """
import json, socket
servers = []
try:
    servers = [l.split()[1] for l in open("/etc/resolv.conf") if l.strip().startswith("nameserver")]
except OSError:
    pass
out = {"nameservers": servers}
if all(s.startswith("127.") or s == "::1" for s in servers):  # never ask a resolver off loopback
    try:
        out["lookup"] = socket.getaddrinfo("example.com", 443)[0][4][0]
    except socket.gaierror as exc:
        out["lookup"] = "gaierror"
print(json.dumps(out))
"""


def test_name_resolution_fails_and_the_resolver_is_loopback(sandbox: Sandbox) -> None:
    seen = report(run_py(sandbox, RESOLVE))
    assert all(server.startswith("127.") or server == "::1" for server in seen["nameservers"]), seen
    assert seen["lookup"] == "gaierror"


INTERFACES = """
import json, os, socket
net = "/sys/class/net"  # bwrap mounts no /sys: then the other two views must say it
print(json.dumps({"sys": sorted(os.listdir(net)) if os.path.isdir(net) else None,
                  "ifindex": sorted(name for _, name in socket.if_nameindex()),
                  "proc": sorted(l.split(":")[0].strip() for l in open("/proc/net/dev").readlines()[2:])}))
"""


def test_the_only_network_interface_is_loopback(sandbox: Sandbox) -> None:
    seen = report(run_py(sandbox, INTERFACES))
    assert seen["ifindex"] == ["lo"] and seen["proc"] == ["lo"]
    assert seen["sys"] in (["lo"], None)


# --- secrets and the filesystem ------------------------------------------------------------------

SNOOP = """
import glob, json, os, re, sys
secret_file, home = sys.argv[1], sys.argv[2]
pattern = re.compile(rb"agentjet-secret-[0-9a-f]{32}")  # the token's shape; the token itself is never passed in
out = {"env": dict(os.environ), "read": {}, "found": []}
def look(data, where):
    out["found"] += [(where, m.decode()) for m in pattern.findall(data)]
def attempt(path, record=True):
    try:
        with open(path, "rb") as f:
            look(f.read(1 << 20), path)
        outcome = "read"
    except OSError as exc:
        outcome = type(exc).__name__
    if record:
        out["read"][path] = outcome
look(json.dumps(out["env"]).encode(), "env")
for path in [secret_file, "/input/../" + os.path.basename(secret_file), "/work/link", "/etc/shadow",
             "/proc/1/environ", "/proc/self/environ", os.path.join(home, ".bash_history")]:
    attempt(path)
for path in glob.glob("/proc/[0-9]*/environ") + glob.glob("/proc/[0-9]*/cmdline"):
    attempt(path)
def listing(path):
    try:
        return sorted(os.listdir(path))
    except OSError as exc:
        return type(exc).__name__
out["listed"] = {d: listing(d) for d in ["/root", home, "/home"]}
for top in ["/work", "/tmp", "/run", "/etc", "/opt", "/root", "/home", "/var", "/input", "/dev/shm"]:
    for folder, _, names in os.walk(top):
        for name in names:
            attempt(os.path.join(folder, name), record=False)
out["env"] = sorted(out["env"])
print(json.dumps(out))
"""


def test_the_token_home_and_host_secrets_are_out_of_reach(
    sandbox: Sandbox, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    token = "agentjet-secret-" + secrets.token_hex(16)
    monkeypatch.setenv("AGENTJET_TOKEN", token)  # the caller's env must not leak in
    secret_file = tmp_path / "token"
    secret_file.write_text(token)
    secret_file.chmod(0o644)  # readable by anyone on the host: only the mount namespace protects it
    work = tmp_path / "work"
    work.mkdir()
    (work / "link").symlink_to(secret_file)  # staged as a link, which points nowhere inside
    home = os.path.expanduser("~")
    result = sandbox.run(["python3", "-c", SNOOP, str(secret_file), home], files=work, limits=SMALL)
    assert token not in result.stdout + result.stderr
    seen = report(result)
    assert seen["found"] == []
    assert "AGENTJET_TOKEN" not in seen["env"]
    read = seen["read"]
    assert read["/etc/shadow"] in ("PermissionError", "FileNotFoundError")
    for password in _host_password_hashes():
        assert password not in result.stdout
    assert read[str(secret_file)] == "FileNotFoundError"
    assert read["/work/link"] == "FileNotFoundError"
    # The image's own (empty or closed) /root, never the host's home.
    assert seen["listed"]["/root"] in ([], "PermissionError", "FileNotFoundError")
    assert seen["listed"][home] in ([], "PermissionError", "FileNotFoundError")


def _host_password_hashes() -> list[str]:
    try:
        lines = Path("/etc/shadow").read_text().splitlines()
    except OSError:
        return []
    return [fields[1] for fields in (line.split(":") for line in lines) if len(fields) > 1 and len(fields[1]) > 3]


WRITE = """
import json, os
out = {}
for path in ["/escape", "/usr/escape", "/etc/escape", "/opt/agentjet/escape", "/opt/agentjet/agentjet/escape",
             "/opt/agentjet/agentjet/__init__.py", "/input/escape", "/input/data.txt", "/var/escape", "/root/escape",
             "/work/ok", "/tmp/ok", "/work/data.txt"]:
    try:
        with open(path, "a") as f:
            f.write("pwned")
        out[path] = "written"
    except OSError as exc:
        out[path] = type(exc).__name__
print(json.dumps(out))
"""


def test_nothing_outside_work_and_tmp_is_writable(sandbox: Sandbox, tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (work / "data.txt").write_text("original")
    source_init = agentjet_source() / "__init__.py"
    before = source_init.read_bytes()
    seen = report(run_py(sandbox, WRITE, files=work))
    allowed = {"/work/ok", "/tmp/ok", "/work/data.txt"}
    assert {path for path, outcome in seen.items() if outcome == "written"} == allowed, seen
    assert (work / "data.txt").read_text() == "original"  # the sandbox wrote its copy, not the host's file
    assert sorted(p.name for p in work.iterdir()) == ["data.txt"]
    assert source_init.read_bytes() == before
    assert not (agentjet_source() / "escape").exists() and not Path("/escape").exists()


PRIVILEGE = """
import ctypes, json, os, socket, subprocess
out = {"uid": os.getuid(), "euid": os.geteuid(), "gid": os.getgid(), "groups": os.getgroups()}
status = open("/proc/self/status").read()
out["caps"] = {l.split(":")[0]: l.split()[1] for l in status.splitlines() if l.startswith("Cap")}
out["no_new_privs"] = [l.split()[1] for l in status.splitlines() if l.startswith("NoNewPrivs")]
def run(*argv):
    try:
        return subprocess.run(argv, capture_output=True, timeout=5).returncode
    except OSError as exc:
        return type(exc).__name__
out["unshare_user"] = run("unshare", "-r", "true")
out["mount"] = run("mount", "-t", "tmpfs", "none", "/work")
try:
    socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
    out["raw_socket"] = "created"
except OSError as exc:
    out["raw_socket"] = type(exc).__name__
try:
    os.setuid(0)
    out["setuid"] = "root"
except OSError as exc:
    out["setuid"] = type(exc).__name__
try:
    open("/proc/sys/kernel/hostname", "w").write("pwned")
    out["sysctl"] = "written"
except OSError as exc:
    out["sysctl"] = type(exc).__name__
out["docker_sock"] = [p for p in ("/var/run/docker.sock", "/run/docker.sock") if os.path.exists(p)]
print(json.dumps(out))
"""


def test_the_sandbox_user_has_no_privileges_to_escalate(sandbox: Sandbox) -> None:
    seen = report(run_py(sandbox, PRIVILEGE))
    assert (seen["uid"], seen["euid"], seen["gid"]) == (65534, 65534, 65534)
    assert seen["groups"] in ([], [65534])
    caps = seen["caps"]
    assert all(int(caps[name], 16) == 0 for name in ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb")), caps
    assert seen["no_new_privs"] == ["1"]
    assert seen["unshare_user"] != 0 and seen["mount"] != 0
    assert seen["raw_socket"] == "PermissionError"
    assert seen["setuid"] in ("PermissionError", "OSError")  # EPERM, or EINVAL where uid 0 is not even mapped
    assert seen["sysctl"] != "written" and seen["docker_sock"] == []


# --- resource limits -----------------------------------------------------------------------------

FORK_BOMB = """
import os, time
while True:
    try:
        os.fork()
    except OSError:
        time.sleep(0.01)
"""


def test_fork_bomb_hits_the_pids_limit(sandbox: Sandbox) -> None:
    started = time.monotonic()
    result = run_py(sandbox, FORK_BOMB, limits=replace_limits(timeout_s=3.0))
    assert result.stopped_by is StopReason.PIDS, result
    assert time.monotonic() - started < 15
    assert subprocess.run(["true"], check=False).returncode == 0  # the host still forks


def test_shell_fork_bomb_hits_the_pids_limit(sandbox: Sandbox) -> None:
    result = sandbox.run("f(){ f | f & }; f; sleep 2", limits=replace_limits(timeout_s=3.0))
    assert result.stopped_by is StopReason.PIDS, result


MEMORY_BOMB = "x = []\nwhile True: x.append(bytearray(1 << 20))"


def test_memory_bomb_is_oom_killed(sandbox: Sandbox) -> None:
    result = run_py(sandbox, MEMORY_BOMB)
    assert result.stopped_by is StopReason.MEMORY, result
    assert result.exit_code == -signal.SIGKILL
    if result.peak_memory_bytes is not None:
        assert result.peak_memory_bytes <= SMALL.memory_bytes + 1024**2


def test_memory_limit_covers_the_whole_tree(sandbox: Sandbox) -> None:
    """Two children of 60 MiB each: each alone fits in 96 MiB, together they do not."""
    hog = "python3 -c 'import time; x = b\"x\" * (60 << 20); time.sleep(3)'"
    result = sandbox.run(f"{hog} & {hog} & wait", limits=SMALL)
    assert result.stopped_by is StopReason.MEMORY, result


def test_cpu_spin_with_cpu_seconds_is_stopped_by_cpu(sandbox: Sandbox) -> None:
    result = run_py(sandbox, "while True: pass", limits=replace_limits(cpu_seconds=1, timeout_s=20.0))
    assert result.stopped_by is StopReason.CPU, result
    assert result.exit_code in (-signal.SIGXCPU, -signal.SIGKILL)
    assert result.wall_s < 15


def test_cpu_spin_without_cpu_seconds_times_out(sandbox: Sandbox) -> None:
    result = run_py(sandbox, "while True: pass", limits=replace_limits(timeout_s=1.0))
    assert result.stopped_by is StopReason.TIMEOUT, result
    assert result.exit_code == -signal.SIGKILL and 1.0 <= result.wall_s < 6


def test_a_cpu_hog_gets_no_more_than_its_share_of_cores(sandbox: Sandbox) -> None:
    """Four spinning processes with cpus=0.25: the whole tree gets a quarter of a core."""
    spin = "import multiprocessing as m\ndef f():\n    while True: pass\nfor _ in range(4): m.Process(target=f).start()"
    result = run_py(sandbox, spin, limits=replace_limits(cpus=0.25, timeout_s=2.0))
    assert result.stopped_by is StopReason.TIMEOUT, result
    if result.cpu_s is None:
        pytest.skip("this backend cannot read the tree's CPU time here")
    assert result.cpu_s < 0.25 * result.wall_s + 0.3, result


def test_endless_sleep_times_out_with_its_children(sandbox: Sandbox) -> None:
    result = sandbox.run("sleep 1000 & sleep 1000", limits=replace_limits(timeout_s=1.0))
    assert result.stopped_by is StopReason.TIMEOUT, result
    assert result.wall_s < 6
    assert not any("sleep 1000" in _cmdline(pid) for pid in _pids())  # nothing left behind on the host


def test_a_closed_output_does_not_outlive_the_wall_clock(sandbox: Sandbox) -> None:
    result = sandbox.run("exec >/dev/null 2>&1; sleep 1000", limits=replace_limits(timeout_s=1.0))
    assert result.stopped_by is StopReason.TIMEOUT, result
    assert result.wall_s < 6


@pytest.mark.parametrize("stream", ["stdout", "stderr"])
def test_gigabytes_of_output_stop_the_run_and_host_memory_stays_small(sandbox: Sandbox, stream: str) -> None:
    code = f"import sys\nchunk = b'x' * (1 << 20)\nfor _ in range(4096): sys.{stream}.buffer.write(chunk)"
    peak_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    started = time.monotonic()
    result = run_py(sandbox, code)
    assert result.stopped_by is StopReason.OUTPUT, result
    assert getattr(result, f"{stream}_truncated") and len(getattr(result, stream)) == SMALL.output_bytes
    assert time.monotonic() - started < 10
    grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 - peak_before
    assert grown < 64 * 1024**2, f"host peak RSS grew by {grown} bytes"


@pytest.mark.parametrize(
    "command",
    [
        "python3 -c \"open('/work/big', 'wb').write(b'x' * (4 << 20))\"",  # Python ignores SIGXFSZ: EFBIG
        "head -c 4000000 /dev/zero > /tmp/big",  # killed by SIGXFSZ
        "python3 -c \"import sys\ntry: open('/work/big', 'wb').write(b'x' * (4 << 20))\nexcept OSError: sys.exit(3)\"",
    ],
    ids=["efbig", "sigxfsz", "swallowed"],
)
def test_a_file_over_the_size_limit_is_reported(sandbox: Sandbox, command: str) -> None:
    result = sandbox.run(command, limits=SMALL)
    assert result.stopped_by is StopReason.FILE_SIZE, result
    assert result.exit_code != 0


# --- the host and its other sandboxes ------------------------------------------------------------

KILL_PARENT = """
import os, signal, sys
host_pid, victim = int(sys.argv[1]), int(sys.argv[2])
for pid in (host_pid, victim, os.getppid(), 1):
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.kill(pid, sig)
        except OSError:
            pass
try:
    os.kill(-1, signal.SIGKILL)  # everything this uid may signal
except OSError:
    pass
print("still here")
"""


def test_killing_the_parent_or_anything_else_leaves_the_host_alone(sandbox: Sandbox) -> None:
    """A host process running as the sandbox's own uid survives `kill -9 -1` from inside."""
    victim = _host_process_as_sandbox_uid()
    try:
        result = sandbox.run(["python3", "-c", KILL_PARENT, str(os.getpid()), str(victim.pid)], limits=SMALL)
        assert victim.poll() is None, "a host process of uid 65534 was killed from inside the sandbox"
    finally:
        victim.kill()
        victim.wait()
    # The sandbox may take itself down (its own parent and init are fair game); that is all it can do.
    assert result.stopped_by in (StopReason.EXITED, StopReason.SIGNALED), result
    assert result.wall_s < 6


def test_another_sandbox_is_unaffected_by_a_hostile_neighbour(sandbox: Sandbox) -> None:
    work = "import hashlib\nh = hashlib.sha256()\nfor i in range(200000): h.update(b'%d' % i)\nprint(h.hexdigest())"
    expected = subprocess.run(["python3", "-c", work], capture_output=True, text=True, check=True).stdout
    hostile = replace_limits(timeout_s=4.0)
    with ThreadPoolExecutor(max_workers=3) as pool:
        bombs = [pool.submit(run_py, sandbox, code, limits=hostile) for code in (FORK_BOMB, MEMORY_BOMB)]
        time.sleep(0.5)
        calm = run_py(sandbox, work, limits=replace_limits(timeout_s=30.0))
        stopped = {future.result().stopped_by for future in bombs}
    assert calm.ok and calm.stdout == expected, calm
    assert stopped == {StopReason.PIDS, StopReason.MEMORY}


def _host_process_as_sandbox_uid() -> subprocess.Popen[bytes]:
    if os.geteuid() != 0:
        pytest.skip("needs root to start a host process as uid 65534")

    def drop() -> None:
        os.setgid(65534)
        os.setuid(65534)

    return subprocess.Popen(["sleep", "60"], preexec_fn=drop)  # noqa: PLW1509 - the point of the test


def _pids() -> list[int]:
    return [int(name) for name in os.listdir("/proc") if name.isdigit()]


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


# --- leaks through inheritance, /proc and cgroups (added for bwrap; they hold on docker too) -----------

FDS = """
import json, os
fds = {}
for name in os.listdir("/proc/self/fd"):
    try:
        fds[name] = os.readlink(f"/proc/self/fd/{name}")
    except OSError:
        pass  # the listing's own directory fd, closed by now
print(json.dumps(fds))
"""


def test_only_stdin_stdout_and_stderr_are_inherited(sandbox: Sandbox) -> None:
    """No launcher fd (status pipe, host directory) reaches the command: an inherited dir fd escapes any root."""
    fds = report(run_py(sandbox, FDS))
    assert sorted(fds) == ["0", "1", "2"], fds
    assert fds["0"] == "/dev/null"


PROCESSES = """
import json, os
seen = {}
for pid in (p for p in os.listdir("/proc") if p.isdigit()):
    try:
        seen[pid] = open(f"/proc/{pid}/cmdline", "rb").read().replace(b"\\0", b" ").decode()
    except OSError:
        seen[pid] = "?"
print(json.dumps(seen))
"""


def test_only_the_sandboxes_own_processes_are_visible(sandbox: Sandbox) -> None:
    seen = report(run_py(sandbox, PROCESSES))
    assert len(seen) < 10, seen
    assert not any("pytest" in cmdline or "dockerd" in cmdline for cmdline in seen.values()), seen


CGROUP_WRITES = """
import glob, json, os
written = []
for path in glob.glob("/sys/fs/cgroup/**/cgroup.procs", recursive=True) + glob.glob("/sys/fs/cgroup/cgroup.procs"):
    try:
        with open(path, "w") as f:
            f.write(str(os.getpid()))
        written.append(path)
    except OSError:
        pass
for name in ("memory.max", "memory.limit_in_bytes", "pids.max"):
    for path in glob.glob(f"/sys/fs/cgroup/**/{name}", recursive=True):
        try:
            with open(path, "w") as f:
                f.write("max" if not name.endswith("bytes") else "-1")
            written.append(path)
        except OSError:
            pass
print(json.dumps({"written": written}))
"""


def test_the_cgroup_can_be_neither_left_nor_loosened(sandbox: Sandbox) -> None:
    assert report(run_py(sandbox, CGROUP_WRITES)) == {"written": []}
