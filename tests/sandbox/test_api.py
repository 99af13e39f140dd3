"""The Sandbox API and CLI around the backends: staging, backend choice, verdicts, cleanup, exit codes."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from agentjet.cli.main import app
from agentjet.sandbox.api import Sandbox, choose_backend, staged
from agentjet.sandbox.capture import CappedOutput
from agentjet.sandbox.errors import SandboxError
from agentjet.sandbox.limits import Limits
from agentjet.sandbox.result import StopReason
from agentjet.sandbox.verdict import Evidence, decide, exit_code_of
from tests.conftest import TOKEN
from tests.sandbox.conftest import sandbox_for
from tests.signals import sigint_default

QUICK = Limits(memory_bytes=128 * 1024**2, pids=32, timeout_s=20.0, workdir_bytes=8 * 1024**2)
runner = CliRunner()


# --- pure parts ----------------------------------------------------------------------------------


def test_capped_output_keeps_the_head_and_counts_the_rest() -> None:
    out = CappedOutput(5)
    assert not out.feed(b"abc")
    assert out.feed(b"defgh")
    out.feed(b"x" * 10_000)
    assert out.text() == "abcde" and out.seen == 10_008 and out.over


def test_exit_statuses_above_128_are_signals() -> None:
    assert [exit_code_of(s) for s in (0, 1, 127, 137, 152, 255, None)] == [0, 1, 127, -9, -24, 255, None]


def test_the_most_specific_limit_wins_and_every_one_is_named() -> None:
    limits = Limits(pids=16, cpu_seconds=2)
    bomb = decide(Evidence(status=137, killed_for=StopReason.TIMEOUT, pids_limit_hit=True), limits)
    assert bomb.stopped_by is StopReason.PIDS and "16-process" in bomb.detail and "wall-clock" in bomb.detail
    assert decide(Evidence(status=137, oom_killed=True, pids_limit_hit=True), limits).stopped_by is StopReason.MEMORY
    assert decide(Evidence(status=152), limits).stopped_by is StopReason.CPU
    assert decide(Evidence(status=152), Limits()).stopped_by is StopReason.SIGNALED  # no cpu_seconds: not ours
    assert decide(Evidence(status=137, cpu_s=2.5), limits).stopped_by is StopReason.CPU  # SIGXCPU handled
    assert decide(Evidence(status=153), limits).stopped_by is StopReason.FILE_SIZE
    assert decide(Evidence(status=0, big_file="/work/x"), limits).stopped_by is StopReason.EXITED
    assert decide(Evidence(status=1, big_file="/work/x"), limits).stopped_by is StopReason.FILE_SIZE
    assert decide(Evidence(status=1, stderr="OSError: [Errno 27] File too large"), limits).stopped_by is (
        StopReason.FILE_SIZE
    )
    assert decide(Evidence(status=3), limits) == decide(Evidence(status=3), Limits())
    assert decide(Evidence(status=3), limits).stopped_by is StopReason.EXITED


def test_staging_copies_links_as_links_skips_fifos_and_opens_files_to_the_sandbox_user(tmp_path: Path) -> None:
    source = tmp_path / "src"
    (source / "sub").mkdir(parents=True)
    (source / "sub" / "private.txt").write_text("p")
    (source / "sub" / "private.txt").chmod(0o600)
    (source / "run.sh").write_text("#!/bin/sh\n")
    (source / "run.sh").chmod(0o700)
    (source / "link").symlink_to("/etc/shadow")
    os.mkfifo(source / "fifo")
    with staged(source, 1024**2) as root:
        assert root is not None
        assert (root / "sub" / "private.txt").stat().st_mode & 0o777 == 0o644
        assert (root / "run.sh").stat().st_mode & 0o777 == 0o755
        assert (root / "link").is_symlink() and os.readlink(root / "link") == "/etc/shadow"
        assert not (root / "fifo").exists()
        assert root.stat().st_mode & 0o777 == 0o755
    assert not root.exists()


@pytest.mark.parametrize("name", ["/etc/passwd", "../up", "a/../../up", "", "."])
def test_staged_file_names_must_stay_inside_the_work_dir(name: str) -> None:
    with pytest.raises(SandboxError, match="relative path"), staged({name: "x"}, 1024):
        pass


def test_staging_refuses_more_than_the_work_dir_holds(tmp_path: Path) -> None:
    (tmp_path / "big").write_bytes(b"x" * 2048)
    with pytest.raises(SandboxError, match="work-dir limit"), staged(tmp_path, 1024):
        pass
    with pytest.raises(SandboxError, match="work-dir limit"), staged({"a": b"x" * 2048}, 1024):
        pass


def test_unknown_backend_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(SandboxError, match="unknown sandbox backend 'qemu'"):
        choose_backend("qemu")
    monkeypatch.setenv("AGENTJET_SANDBOX_BACKEND", "qemu")  # the override applies to auto only
    with pytest.raises(SandboxError, match="unknown sandbox backend 'qemu'"):
        choose_backend("auto")


# --- through a backend ---------------------------------------------------------------------------


def test_env_override_picks_the_backend(backend: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENTJET_SANDBOX_BACKEND", backend)
    assert Sandbox().name == backend


def test_files_env_and_a_shell_command(sandbox: Sandbox, tmp_path: Path) -> None:
    result = sandbox.run(
        'cat data/in.txt; printf "%s" "$GREETING" > out.txt; cat out.txt; echo; python3 script.py; echo err >&2',
        files={"data/in.txt": "staged\n", "script.py": b"import os; print(os.getcwd(), os.getuid())"},
        env={"GREETING": "hi there"},
        limits=QUICK,
        timeout=15,
    )
    assert result.ok, result
    assert result.stdout == "staged\nhi there\n/work 65534\n" and result.stderr == "err\n"
    assert result.stopped_by is StopReason.EXITED and result.detail
    assert 0 < result.wall_s < 15


def test_a_failing_command_reports_its_own_status(sandbox: Sandbox) -> None:
    result = sandbox.run(["sh", "-c", "exit 7"], limits=QUICK)
    assert (result.stopped_by, result.exit_code, result.ok) == (StopReason.EXITED, 7, False)
    missing = sandbox.run(["no-such-program"], limits=QUICK)
    assert missing.stopped_by is StopReason.EXITED and missing.exit_code == 127


def test_timeout_argument_overrides_the_limits(sandbox: Sandbox) -> None:
    result = sandbox.run("sleep 30", limits=QUICK, timeout=0.5)
    assert result.stopped_by is StopReason.TIMEOUT and result.wall_s < 5


def test_usage_figures_are_read_from_the_cgroup(sandbox: Sandbox) -> None:
    if os.geteuid() != 0:
        pytest.skip("cgroup figures need root")
    result = sandbox.run(
        [
            "python3",
            "-c",
            "import time\nx = b'x' * (40 << 20)\nt = time.process_time()\nwhile time.process_time() - t < 0.3: pass",
        ],
        limits=QUICK,
    )
    assert result.ok, result
    assert result.peak_memory_bytes is not None and 40 * 1024**2 < result.peak_memory_bytes <= QUICK.memory_bytes
    assert result.cpu_s is not None and 0.3 <= result.cpu_s < result.wall_s + 1


@pytest.mark.docker
def test_docker_leaves_no_container_or_cgroup_even_when_interrupted() -> None:
    """Ctrl-C in the middle of a run: the container and its cgroup parent are gone afterwards."""
    sandbox_for("docker")
    from agentjet.sandbox.docker.engine import connect

    client = connect()
    label = "agentjet.sandbox.run"

    def runs(**filters: str) -> dict[str, str]:  # container id -> run id, for every sandbox container (others' too)
        rows = client.api.containers(all=True, filters={"label": label, **filters})
        return {row["Id"]: row["Labels"][label] for row in rows}

    before = runs()
    code = "from agentjet.sandbox.api import Sandbox\nprint('running', flush=True)\nSandbox('docker').run('sleep 60')"
    child = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True, preexec_fn=sigint_default)
    try:
        assert child.stdout is not None and child.stdout.readline() == "running\n"
        deadline = time.monotonic() + 20
        while not (ours := {cid: run for cid, run in runs(status="running").items() if cid not in before}):
            assert time.monotonic() < deadline, "the container never started"
            time.sleep(0.05)
        child.send_signal(signal.SIGINT)  # Ctrl-C in the middle of the run
        child.wait(timeout=120)  # generous: container removal on a loaded engine
    finally:
        child.kill()
    assert child.returncode != 0
    assert not set(ours) & set(runs())
    for run in ours.values():
        root = Path("/sys/fs/cgroup")
        assert [*root.glob(f"*/agentjet-docker/{run}"), *root.glob(f"agentjet-docker/{run}")] == []


@pytest.mark.docker
def test_a_container_whose_host_process_was_killed_stops_itself_and_is_swept() -> None:
    """kill -9 of the host mid-run: the in-container deadline kills the command, the next backend removes it."""
    sandbox_for("docker")
    from agentjet.sandbox.docker import backend as docker_backend
    from agentjet.sandbox.docker.engine import connect

    client = connect()
    label = "agentjet.sandbox.run"

    def ids(**filters: str) -> set[str]:
        return {row["Id"] for row in client.api.containers(all=True, filters={"label": label, **filters})}

    before = ids()
    code = (
        "from agentjet.sandbox.docker import backend as d\nfrom agentjet.sandbox.api import Sandbox\n"
        "d._DEADLINE_GRACE_S = 1.0\nprint('running', flush=True)\nSandbox('docker').run('sleep 600', timeout=1)"
    )
    child = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True, preexec_fn=sigint_default)
    assert child.stdout is not None and child.stdout.readline() == "running\n"
    deadline = time.monotonic() + 20
    while not (ours := ids(status="running") - before):
        assert time.monotonic() < deadline, "the container never started"
        time.sleep(0.05)
    child.kill()  # no cleanup runs in the host process
    child.wait()
    container = client.containers.get(ours.pop())
    assert container.status == "running"
    assert container.wait(timeout=30)["StatusCode"] != 0  # killed from inside after timeout + grace
    time.sleep(max(0.0, int(container.labels["agentjet.sandbox.deadline"]) + 1 - time.time()))
    docker_backend.DockerBackend().check()  # a fresh backend sweeps what is past its deadline
    assert container.id not in ids()


# --- CLI -----------------------------------------------------------------------------------------


def _cli(args: list[str], cwd: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[int, str, str]:
    monkeypatch.chdir(cwd)
    result = runner.invoke(app, ["sandbox", "run", *args])
    return result.exit_code, result.stdout, result.stderr


def test_cli_run_copies_the_current_dir_in_and_exits_with_the_commands_status(
    backend: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "main.py").write_text(
        "import sys, os; print(open('note.txt').read(), os.environ.get('AGENTJET_TOKEN'))\n"
    )
    (tmp_path / "note.txt").write_text("copied")
    monkeypatch.setenv("AGENTJET_TOKEN", "host-token-must-stay-out")
    code, out, err = _cli(["--backend", backend, "--", "sh", "-c", "python3 main.py; exit 5"], tmp_path, monkeypatch)
    assert code == 5, (out, err)
    assert out == "copied None\n"
    assert "exit status 5" in err and "stopped by: exited" in err and "peak memory" in err
    assert (tmp_path / "main.py").exists() and sorted(p.name for p in tmp_path.iterdir()) == ["main.py", "note.txt"]


def test_cli_run_limit_exit_codes_and_json(backend: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    code, out, _ = _cli(
        ["--backend", backend, "--timeout", "0.5", "--json", "--", "sleep", "30"], tmp_path, monkeypatch
    )
    assert code == 124
    assert json.loads(out)["stopped_by"] == "timeout"
    code, _, err = _cli(
        ["--backend", backend, "--memory", "48m", "--", "python3", "-c", "b'x' * (1 << 30)"], tmp_path, monkeypatch
    )
    assert code == 120, err
    assert "stopped by: memory" in err


def test_cli_run_refuses_a_current_dir_over_the_work_dir_limit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "big.bin").write_bytes(b"x" * 4096)
    code, _, err = _cli(["--workdir-size", "1k", "--", "true"], tmp_path, monkeypatch)
    assert code == 2
    assert "over the 1 KiB work-dir limit" in err and "--workdir-size" in err


def test_cli_doctor_reports_each_backend(backend: str) -> None:
    result = runner.invoke(app, ["sandbox", "doctor", "--json"])
    rows = {row["name"]: row for row in json.loads(result.stdout)}
    assert set(rows) == {"docker", "bwrap"}
    assert rows[backend]["works"] and result.exit_code == 0
    for row in rows.values():
        assert row["works"] or (row["reason"] and row["fix"])


def test_limits_from_the_cli_flags_keep_the_defaults_otherwise() -> None:
    from agentjet.cli.sandbox import _limits

    limits = _limits("64m", None, 0.5, 3, None, "2k", None, None)
    assert limits == replace(Limits(), memory_bytes=64 * 1024**2, cpus=0.5, cpu_seconds=3, output_bytes=2048)


def test_the_package_imports_without_host_only_dependencies() -> None:
    """Code inside the sandbox imports agentjet.sandbox submodules; the image has no uvicorn."""
    code = "import sys, agentjet.sandbox.runspec, agentjet.sandbox as s; assert 'uvicorn' not in sys.modules"
    assert subprocess.run([sys.executable, "-c", code], check=False).returncode == 0


SWARM_PROBE = """
import json, os, httpx
server = os.environ["AGENTJET_SERVER"]
status = httpx.get(server + "/swarm/status", timeout=10)
config = httpx.put(server + "/swarm/config", json={}, timeout=10)
print(json.dumps({"server": server, "status": status.status_code, "config_write": config.status_code,
                  "token_env": os.environ.get("AGENTJET_TOKEN")}))
"""


def test_cli_run_with_swarm_reaches_the_server_without_the_token(
    backend: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, live_server: Any, echo_backend: Any
) -> None:
    server = live_server(echo_backend)
    port = server.url.rsplit(":", 1)[1]
    monkeypatch.setenv("AGENTJET_TOKEN", TOKEN)  # where the CLI reads the token from; it must not go in
    args = ["--backend", backend, "--swarm", server.url, "--", "python3", "-c", SWARM_PROBE]
    code, out, err = _cli(args, tmp_path, monkeypatch)
    assert code == 0, err
    seen = json.loads(out.strip().splitlines()[-1])
    assert seen == {"server": f"http://127.0.0.1:{port}", "status": 200, "config_write": 403, "token_env": None}
    assert TOKEN not in out + err
