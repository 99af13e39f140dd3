"""The bwrap backend on this machine: identity, isolation, every limit's stop reason, cleanup of the whole tree."""

from __future__ import annotations

import errno
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

import pytest

from agentjet.sandbox.api import staged
from agentjet.sandbox.bwrap.backend import BwrapBackend
from agentjet.sandbox.bwrap.cgroups import CgroupLayout, detect
from agentjet.sandbox.docker.image import ImageRef
from agentjet.sandbox.errors import SandboxUnavailable
from agentjet.sandbox.limits import Limits
from agentjet.sandbox.result import RunResult, StopReason

pytestmark = pytest.mark.bwrap


@pytest.fixture(scope="module")
def bwrap() -> BwrapBackend:
    """A checked backend; skipped with the reason when it cannot run here (failed with AGENTJET_REQUIRE_SANDBOX=1)."""
    backend = BwrapBackend()
    try:
        backend.check()
    except SandboxUnavailable as exc:
        if os.environ.get("AGENTJET_REQUIRE_SANDBOX") == "1":
            pytest.fail(f"bwrap backend unavailable but AGENTJET_REQUIRE_SANDBOX=1: {exc}")
        pytest.skip(f"bwrap backend unavailable: {exc}")
    return backend


def run(
    backend: BwrapBackend, command: str, files: dict[str, str | bytes] | None = None, **limits: object
) -> RunResult:
    with staged(files, Limits().workdir_bytes) as workdir:
        return backend.run(["/bin/sh", "-c", command], workdir=workdir, limits=Limits(**limits), env={}, swarm=None)  # type: ignore[arg-type]


def _processes_with(marker: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if marker in (entry / "cmdline").read_bytes().decode(errors="replace"):
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


def _remove_group(path: Path, timeout_s: float = 10.0) -> None:
    """rmdir a run's cgroup, retried while the kernel still counts a just-killed (unreaped) process in it."""
    deadline = time.monotonic() + timeout_s
    while path.is_dir():
        try:
            path.rmdir()
        except OSError as exc:
            if exc.errno != errno.EBUSY or time.monotonic() > deadline:
                raise
            time.sleep(0.1)


def _mount_bases() -> set[Path]:
    return set(Path(tempfile.gettempdir()).glob("agentjet-bwrap-*"))


def _run_groups(layout: CgroupLayout) -> set[str]:
    return {child.name for base in layout.bases.values() if base.is_dir() for child in base.iterdir() if child.is_dir()}


def test_runs_as_65534_without_capabilities_network_or_host_env(
    bwrap: BwrapBackend, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("AGENTJET_SERVER_TOKEN", "host-secret-token")
    command = (
        "echo ids $(id -u) $(id -g) $(id -G); grep -E '^(CapEff|CapBnd|NoNewPrivs)' /proc/self/status;"
        " for name in $(sed -n '3,$s/:.*//p' /proc/net/dev); do echo if $name; done; env | sed 's/^/env /'"
    )
    result = bwrap.run(["/bin/sh", "-c", command], workdir=None, limits=Limits(), env={"MINE": "1"}, swarm=None)

    assert result.ok, result
    lines = result.stdout.splitlines()
    assert "ids 65534 65534 65534" in lines
    assert "CapEff:\t0000000000000000" in lines and "CapBnd:\t0000000000000000" in lines
    assert "NoNewPrivs:\t1" in lines
    assert [line for line in lines if line.startswith("if ")] == ["if lo"]
    env_names = {line[4:].split("=", 1)[0] for line in lines if line.startswith("env ")}
    assert env_names == {"PATH", "HOME", "PYTHONPATH", "LANG", "PYTHONDONTWRITEBYTECODE", "MINE", "PWD"}
    assert "host-secret-token" not in result.stdout


def test_files_are_copied_in_writable_and_the_rest_is_read_only(bwrap: BwrapBackend) -> None:
    files: dict[str, str | bytes] = {"data/in.txt": "hello\n", "run.py": "print(open('data/in.txt').read().upper())"}
    command = (
        "python3 run.py && echo new > data/in.txt && cat data/in.txt"
        " && python3 -c 'import agentjet.sandbox.limits as l; print(l.__file__)'"
        " && for path in /etc/x /usr/x /input/x /opt/agentjet/agentjet/x /x; do"
        "   touch $path 2>/dev/null && echo W $path; done"
        "; echo done"
    )
    with staged(files, 1 << 20) as workdir:
        assert workdir is not None
        result = bwrap.run(["/bin/sh", "-c", command], workdir=workdir, limits=Limits(), env={}, swarm=None)
        assert (workdir / "data/in.txt").read_text() == "hello\n"  # the host copy is untouched

    assert result.ok, result
    assert result.stdout.splitlines() == ["HELLO", "", "new", "/opt/agentjet/agentjet/sandbox/limits.py", "done"]


def test_the_run_has_its_own_cgroup_which_is_removed_afterwards(bwrap: BwrapBackend) -> None:
    layout = detect()
    before = _run_groups(layout)
    seen: set[str] = set()
    results: list[RunResult] = []
    thread = threading.Thread(target=lambda: results.append(run(bwrap, "sleep 1")))
    thread.start()
    deadline = time.monotonic() + 10
    while not seen and time.monotonic() < deadline:
        seen = _run_groups(layout) - before
        time.sleep(0.02)
    thread.join()

    assert seen, "no run cgroup appeared while the sandbox ran"
    assert results[0].ok
    assert not (_run_groups(layout) & seen)


@pytest.mark.parametrize(
    ("limits", "why"),
    [({"timeout_s": 1.0}, StopReason.TIMEOUT), ({"output_bytes": 4096, "timeout_s": 20.0}, StopReason.OUTPUT)],
)
def test_a_killed_run_leaves_no_process_behind(bwrap: BwrapBackend, limits: dict[str, float], why: StopReason) -> None:
    marker = f"77{uuid.uuid4().int % 10**6}"
    flood = "yes flood | cat;" if why is StopReason.OUTPUT else ""
    command = (
        f"setsid sleep {marker}.1 & (sleep {marker}.2 &) ; nohup sleep {marker}.3 >/dev/null 2>&1 &"
        f" trap '' TERM HUP; {flood} sleep {marker}.4"
    )

    result = run(bwrap, command, **limits)

    assert result.stopped_by is why, result
    assert result.wall_s < 10
    time.sleep(0.2)
    assert _processes_with(marker) == []


def test_output_is_capped_per_stream_and_gigabytes_do_not_reach_the_host(bwrap: BwrapBackend) -> None:
    result = run(bwrap, "echo start >&2; head -c 4G /dev/zero | tr '\\0' x", output_bytes=64 * 1024)

    assert result.stopped_by is StopReason.OUTPUT
    assert len(result.stdout) == 64 * 1024 and result.stdout_truncated
    assert result.stderr == "start\n" and not result.stderr_truncated
    assert result.wall_s < 10


@pytest.mark.parametrize(
    ("code", "limits", "why"),
    [
        ("x = bytearray(400 << 20)", {"memory_bytes": 64 << 20}, StopReason.MEMORY),
        ("import os\nwhile True:\n    os.fork()", {"pids": 16, "timeout_s": 20.0}, StopReason.PIDS),
        ("while True: pass", {"cpu_seconds": 1, "timeout_s": 20.0}, StopReason.CPU),
        (
            "import signal\nsignal.signal(signal.SIGXCPU, signal.SIG_IGN)\nwhile True: pass",
            {"cpu_seconds": 1, "timeout_s": 20.0},
            StopReason.CPU,
        ),
        ("open('big', 'wb').write(b'x' * (4 << 20))", {"file_size_bytes": 1 << 20}, StopReason.FILE_SIZE),
        (
            "try:\n    open('/tmp/big', 'wb').write(b'x' * (4 << 20))\nexcept OSError:\n    raise SystemExit(3)",
            {"file_size_bytes": 1 << 20},
            StopReason.FILE_SIZE,
        ),
        ("import time\ntime.sleep(60)", {"timeout_s": 1.0}, StopReason.TIMEOUT),
        ("import os, signal\nos.kill(os.getpid(), signal.SIGTERM)", {}, StopReason.SIGNALED),
    ],
    ids=["memory", "fork-bomb", "cpu", "cpu-sigxcpu-ignored", "efbig", "efbig-caught", "sleep", "self-kill"],
)
def test_each_limit_reports_its_stop_reason(
    bwrap: BwrapBackend, code: str, limits: dict[str, object], why: StopReason
) -> None:
    result = run(bwrap, "exec python3 main.py", {"main.py": code}, **limits)

    assert result.stopped_by is why, result
    assert result.detail


def test_a_shell_write_past_the_file_size_limit_is_sigxfsz(bwrap: BwrapBackend) -> None:
    result = run(bwrap, "head -c 4M /dev/zero > /work/big", file_size_bytes=1 << 20)

    assert result.stopped_by is StopReason.FILE_SIZE
    assert result.exit_code == -signal.SIGXFSZ


def test_work_and_tmp_are_sized_tmpfs(bwrap: BwrapBackend) -> None:
    command = "df -B1 --output=size /work /tmp /dev/shm | tail -n 3; head -c 8M /dev/zero > /work/fill; echo $?"
    result = run(bwrap, command, workdir_bytes=4 << 20, tmp_bytes=2 << 20)

    sizes = [int(line) for line in result.stdout.split()[:3]]
    assert sizes == [4 << 20, 2 << 20, 2 << 20]
    assert "No space left on device" in result.stderr
    assert result.stdout.split()[-1] != "0"


def test_peak_memory_and_cpu_time_are_reported(bwrap: BwrapBackend) -> None:
    code = "import time\nx = bytearray(96 << 20)\nend = time.process_time() + 0.4\n"
    code += "while time.process_time() < end:\n    pass"
    result = run(bwrap, "exec python3 main.py", {"main.py": code})

    assert result.ok, result
    assert result.peak_memory_bytes is not None and result.peak_memory_bytes >= 96 << 20
    assert result.cpu_s is not None and result.cpu_s >= 0.35


def test_concurrent_runs_do_not_see_each_other(bwrap: BwrapBackend) -> None:
    results: dict[int, RunResult] = {}

    def one(index: int) -> None:
        results[index] = run(bwrap, f"touch /tmp/mine-{index}; sleep 0.3; ls /tmp; ls /proc | grep -c '^[0-9]'")

    threads = [threading.Thread(target=one, args=(index,)) for index in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    for index, result in results.items():
        assert result.ok, result
        lines = result.stdout.split()
        assert lines[0] == f"mine-{index}"
        assert int(lines[1]) < 10  # only this sandbox's own processes are visible


def test_a_killed_host_process_takes_its_sandbox_down(bwrap: BwrapBackend, tmp_path: Path) -> None:
    marker = f"78{uuid.uuid4().int % 10**6}"
    script = tmp_path / "host.py"
    script.write_text(
        "from agentjet.sandbox.bwrap.backend import BwrapBackend\nfrom agentjet.sandbox.limits import Limits\n"
        f"BwrapBackend().run(['sleep', '{marker}'], workdir=None, limits=Limits(timeout_s=60), env={{}}, swarm=None)\n"
    )
    layout = detect()
    before, bases_before = _run_groups(layout), _mount_bases()
    log = tmp_path / "host.log"
    with log.open("wb") as out:
        host = subprocess.Popen([sys.executable, str(script)], env=dict(os.environ), stdout=out, stderr=out)
    try:
        deadline = time.monotonic() + 30
        while not _processes_with(f"sleep\0{marker}") and time.monotonic() < deadline and host.poll() is None:
            time.sleep(0.05)
        assert _processes_with(f"sleep\0{marker}"), f"no sandboxed sleep (host exit {host.poll()}):\n{log.read_text()}"
        host.kill()
        host.wait()
        deadline = time.monotonic() + 30  # generous for a loaded machine
        while _processes_with(f"sleep\0{marker}") and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _processes_with(f"sleep\0{marker}") == []
    finally:
        host.kill()
        for base in layout.bases.values():  # the dead host could not remove its group; the next sweep would
            for name in _run_groups(layout) - before:
                _remove_group(base / name)
        for left in _mount_bases() - bases_before:  # empty mount points, as the dead host left them
            for child in left.iterdir():
                child.rmdir()
            left.rmdir()


def test_interrupting_a_run_cleans_up(bwrap: BwrapBackend) -> None:
    marker = f"79{uuid.uuid4().int % 10**6}"
    layout = detect()
    before, bases_before = _run_groups(layout), _mount_bases()

    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGALRM, interrupt)
    signal.setitimer(signal.ITIMER_REAL, 0.5)
    try:
        with pytest.raises(KeyboardInterrupt):
            run(bwrap, f"sleep {marker}", timeout_s=30)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)

    assert _processes_with(marker) == []
    assert _run_groups(layout) <= before
    assert _mount_bases() <= bases_before


def test_check_names_the_missing_rootfs_and_the_fix(bwrap: BwrapBackend, tmp_path: Path) -> None:
    with pytest.raises(SandboxUnavailable) as info:
        BwrapBackend(ImageRef("agentjet/sandbox:none", tmp_path / "absent")).check()
    assert "agentjet sandbox build" in info.value.fix

    (tmp_path / "half/usr/bin").mkdir(parents=True)
    (tmp_path / "half/usr/bin/python3").touch()
    with pytest.raises(SandboxUnavailable, match="lacks mount points /work"):
        BwrapBackend(ImageRef("agentjet/sandbox:half", tmp_path / "half")).check()
