"""The server's malloc: which library AGENTJET_ALLOCATOR picks, how it reaches LD_PRELOAD, what a process runs,
and real servers (a `ServerProcess` child, `agentjet server start` typed by hand) running tcmalloc.

The real-process cases need Debian's libtcmalloc-minimal4; `make test` installs it as root and sets
AGENTJET_REQUIRE_TCMALLOC=1, so there they fail instead of skipping.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from agentjet.core import ServerProcess
from agentjet.core.errors import AgentJetError
from agentjet.core.launch import allocator
from agentjet.core.launch.allocator import (
    ALLOCATOR_ENV,
    allocator_library,
    loaded_allocator,
    reexec_with_allocator,
    with_allocator,
)
from agentjet.core.server.run import malloc_line

INSTALLED = allocator_library({}) is not None
REQUIRED = os.environ.get("AGENTJET_REQUIRE_TCMALLOC") == "1"
needs_tcmalloc = pytest.mark.skipif(
    not INSTALLED and not REQUIRED, reason="no libtcmalloc-minimal4 here (AGENTJET_REQUIRE_TCMALLOC=1 makes this fail)"
)


def _fake_library(folder: Path, name: str = "libtcmalloc_minimal.so.4") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_bytes(b"\x7fELF")
    return folder / name


@pytest.mark.parametrize(
    ("setting", "installed", "expected"),
    [
        (None, True, "found"),  # auto by default: the library the search finds
        ("auto", True, "found"),
        ("", True, "found"),  # empty counts as auto
        (" auto ", True, "found"),
        ("system", True, None),  # glibc's, even with tcmalloc there
        (None, False, None),  # auto without a library: the system's, no error
        ("auto", False, None),
        ("system", False, None),
        ("explicit", False, "explicit"),  # a path to a library is preloaded as given
    ],
)
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="LD_PRELOAD is Linux's")
def test_the_setting_picks_the_library(
    tmp_path: Path, setting: str | None, installed: bool, expected: str | None
) -> None:
    found = _fake_library(tmp_path / "lib") if installed else None
    other = _fake_library(tmp_path / "elsewhere", "libjemalloc.so.2")
    env = {} if setting is None else {ALLOCATOR_ENV: str(other) if setting == "explicit" else setting}
    picked = allocator_library(env, search=(str(tmp_path / "empty"), str(tmp_path / "lib")))
    assert picked == {"found": str(found), "explicit": str(other), None: None}[expected]


@pytest.mark.parametrize("setting", ["/no/such/libmalloc.so", "tcmalloc", "jemalloc", "./relative.so"])
def test_a_setting_that_names_no_library_is_one_sentence(setting: str) -> None:
    with pytest.raises(AgentJetError, match=rf"{ALLOCATOR_ENV}=.*: no such library \(use auto, system or the path"):
        allocator_library({ALLOCATOR_ENV: setting}, search=())


@pytest.mark.parametrize(
    ("before", "library", "after"),
    [
        (None, "/lib/tc.so", "/lib/tc.so"),
        ("/lib/other.so", "/lib/tc.so", "/lib/tc.so /lib/other.so"),  # the user's preloads stay, after ours
        ("/lib/a.so:/lib/b.so", "/lib/tc.so", "/lib/tc.so /lib/a.so /lib/b.so"),  # colon lists too
        ("/lib/tc.so", "/lib/tc.so", "/lib/tc.so"),  # never twice
        ("/lib/other.so /lib/tc.so", "/lib/tc.so", "/lib/other.so /lib/tc.so"),  # already there: left as it was
        ("/lib/other.so", None, "/lib/other.so"),  # nothing to preload: unchanged
        (None, None, None),
    ],
)
def test_the_library_goes_first_into_ld_preload(before: str | None, library: str | None, after: str | None) -> None:
    env = {"PATH": "/bin"} if before is None else {"PATH": "/bin", "LD_PRELOAD": before}
    out = with_allocator(env, library)
    assert out.get("LD_PRELOAD") == after and out["PATH"] == "/bin"
    assert env.get("LD_PRELOAD") == before  # the caller's mapping is not changed
    assert "TCMALLOC_RELEASE_RATE" not in out  # not a tcmalloc


@pytest.mark.parametrize(
    ("library", "given", "rate"),
    [
        ("/usr/lib/x86_64-linux-gnu/libtcmalloc_minimal.so.4", None, "0"),  # freed pages stay for the next batch
        ("/usr/lib64/libtcmalloc.so.4", None, "0"),
        ("/usr/lib/x86_64-linux-gnu/libtcmalloc_minimal.so.4", "5", "5"),  # the user's own setting wins
        ("/usr/lib/x86_64-linux-gnu/libjemalloc.so.2", None, None),
        (None, None, None),
    ],
)
def test_tcmalloc_keeps_freed_pages_unless_told_otherwise(
    library: str | None, given: str | None, rate: str | None
) -> None:
    env = {} if given is None else {"TCMALLOC_RELEASE_RATE": given}
    assert with_allocator(env, library).get("TCMALLOC_RELEASE_RATE") == rate


@pytest.mark.parametrize(
    ("mapped", "expected"),
    [
        ("7f00-7f01 r-xp 0 08:01 1 /usr/lib/x86_64-linux-gnu/libtcmalloc_minimal.so.4.5.10\n", "tcmalloc"),
        ("7f00-7f01 r-xp 0 08:01 1 /usr/lib/x86_64-linux-gnu/libjemalloc.so.2\n", "jemalloc"),
        ("7f00-7f01 r-xp 0 08:01 1 /usr/lib/x86_64-linux-gnu/libc.so.6\n", "system"),
    ],
)
def test_the_loaded_allocator_is_read_from_the_process_maps(tmp_path: Path, mapped: str, expected: str) -> None:
    maps = tmp_path / "maps"
    maps.write_text("5600-5601 r--p 0 08:01 1 /usr/bin/python3.11\n" + mapped)
    assert loaded_allocator(maps) == expected
    assert loaded_allocator(tmp_path / "missing") == "system"  # no /proc: the system's


class _Exec(Exception):
    """Raised by the fake execve: what it was asked to run."""


def _fake_exec(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    library = _fake_library(tmp_path / "lib")
    monkeypatch.setattr(allocator, "allocator_library", lambda env=os.environ: str(library))
    monkeypatch.setattr(allocator, "loaded_allocator", lambda: "system")

    def execve(path: str, argv: list[str], env: dict[str, str]) -> Any:
        raise _Exec(path, argv, env)

    monkeypatch.setattr(os, "execve", execve)


def test_a_server_start_typed_by_hand_execs_itself_once_with_the_library(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    _fake_exec(monkeypatch, tmp_path)
    monkeypatch.setattr(sys, "argv", ["/venv/bin/agentjet", "server", "start", "--model", "tiny"])
    monkeypatch.setattr(
        sys, "orig_argv", ["/venv/bin/python", "/venv/bin/agentjet", "server", "start", "--model", "tiny"]
    )
    monkeypatch.setenv("LD_PRELOAD", "/lib/mine.so")
    with pytest.raises(_Exec) as ran:
        reexec_with_allocator(("server", "start"))
    path, argv, env = ran.value.args
    assert path == sys.executable and argv == [
        sys.executable,
        "/venv/bin/agentjet",
        "server",
        "start",
        "--model",
        "tiny",
    ]
    assert env["LD_PRELOAD"] == f"{tmp_path / 'lib' / 'libtcmalloc_minimal.so.4'} /lib/mine.so"
    monkeypatch.setenv("AGENTJET_ALLOCATOR_REEXEC", env["AGENTJET_ALLOCATOR_REEXEC"])
    reexec_with_allocator(("server", "start"))  # the exec'd process: no second exec, even if ld.so ignored it


@pytest.mark.parametrize(
    "argv",
    [
        ["/venv/bin/pytest", "-q", "tests"],  # a CLI run inside another program (CliRunner): never replaced
        ["/venv/bin/agentjet", "server", "status"],
        ["/venv/bin/agentjet", "vibe", "server", "start"],
        ["/venv/bin/agentjet"],
    ],
)
def test_only_a_process_started_as_the_command_is_replaced(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, argv: list[str]
) -> None:
    _fake_exec(monkeypatch, tmp_path)
    monkeypatch.setattr(sys, "argv", argv)
    reexec_with_allocator(("server", "start"))  # returns: nothing exec'd


def test_a_cpu_server_without_tcmalloc_says_how_to_get_it(monkeypatch: pytest.MonkeyPatch) -> None:
    from agentjet.core.server import run

    monkeypatch.setattr(run, "process_malloc", lambda: "system")
    if sys.platform.startswith("linux"):
        assert "apt-get install libtcmalloc-minimal4" in malloc_line("cpu")
        monkeypatch.setenv(ALLOCATOR_ENV, "system")
        assert malloc_line("cpu") == f"system ({ALLOCATOR_ENV}=system)"
        monkeypatch.setenv(ALLOCATOR_ENV, " system ")  # read as allocator_library reads it
        assert malloc_line("cpu") == f"system ({ALLOCATOR_ENV}=system)"
    assert malloc_line("cuda:0") == "system"  # a GPU's update allocates on the device: no advice
    monkeypatch.setattr(run, "process_malloc", lambda: "tcmalloc")
    assert malloc_line("cpu") == "tcmalloc"


def _maps(pid: int) -> str:
    return Path(f"/proc/{pid}/maps").read_text()


@needs_tcmalloc
def test_a_server_child_runs_tcmalloc_and_its_status_says_so(tmp_path: Path) -> None:
    assert INSTALLED, "AGENTJET_REQUIRE_TCMALLOC=1 but libtcmalloc-minimal4 is missing (apt-get install it)"
    server = ServerProcess("tiny", tmp_path / "state", log_path=tmp_path / "server.log", env=dict(os.environ))
    try:
        server.start()
        server.wait_ready(time.monotonic() + 240)
        assert server.pid is not None and "libtcmalloc" in _maps(server.pid)
        assert b"TCMALLOC_RELEASE_RATE=0\x00" in Path(f"/proc/{server.pid}/environ").read_bytes()
        status = httpx.get(f"{server.url}/swarm/status", headers={"Authorization": f"Bearer {server.token}"}).json()
        assert status["memory"]["backend"]["malloc"] == "tcmalloc"
        assert "agentjet server: malloc tcmalloc" in (tmp_path / "server.log").read_text()
    finally:
        server.stop()


@needs_tcmalloc
@pytest.mark.parametrize("setting", [None, "system"])
def test_a_server_started_by_hand_execs_into_tcmalloc_keeping_its_pid(tmp_path: Path, setting: str | None) -> None:
    assert INSTALLED, "AGENTJET_REQUIRE_TCMALLOC=1 but libtcmalloc-minimal4 is missing (apt-get install it)"
    env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
    if setting is not None:
        env[ALLOCATOR_ENV] = setting
    argv = [sys.executable, "-m", "agentjet", "server", "start", "--model", "tiny", "--port", "0"]
    log = (tmp_path / "server.log").open("wb")
    child = subprocess.Popen([*argv, "--state-dir", str(tmp_path / "state")], env=env, stdout=log, stderr=log)
    try:
        deadline = time.monotonic() + 120
        while b"agentjet server: malloc" not in (tmp_path / "server.log").read_bytes():
            assert child.poll() is None and time.monotonic() < deadline, (tmp_path / "server.log").read_text()
            time.sleep(0.1)
        text = (tmp_path / "server.log").read_text()
        if setting is None:  # the pid the parent holds is the server's, now running tcmalloc
            assert "libtcmalloc" in _maps(child.pid) and "agentjet server: malloc tcmalloc" in text
        else:
            assert "libtcmalloc" not in _maps(child.pid)
            assert f"agentjet server: malloc system ({ALLOCATOR_ENV}=system)" in text
    finally:
        child.terminate()
        child.wait(30)
        log.close()


def test_a_bad_setting_refuses_the_start_in_one_line(tmp_path: Path) -> None:
    env = {**os.environ, ALLOCATOR_ENV: str(tmp_path / "nope.so")}
    argv = [sys.executable, "-m", "agentjet", "server", "start", "--model", "tiny", "--state-dir", str(tmp_path / "s")]
    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.strip().splitlines()[-1].startswith(f"error: {ALLOCATOR_ENV}={tmp_path / 'nope.so'}: no such")
    assert not (tmp_path / "s").exists()  # refused before anything was written
