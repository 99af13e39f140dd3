"""The run's server started during validation (`early_server`), on `tiny`: the launch trains on that same process,
a run that ends before training stops it, a resumed process adopts it, and a start that failed or a server that
died leaves the launch to start its own."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from agentjet.core import SwarmClient
from agentjet.vibe.errors import VibeError
from agentjet.vibe.run.early_server import PendingServer, discard_stale, start_beside_checks, start_early
from agentjet.vibe.run.launch import CONFIG_FILE, HELD_FOR_CHECKS, launch, stop
from agentjet.vibe.run.swarm_server import ServerHandle, read_launch_file, write_launch_file
from tests.vibe.launch_helpers import VARIED_REWARD, make_workspace, swarm_status, tiny_options


def test_the_launch_trains_on_the_server_validation_started(tmp_path: Path) -> None:
    workspace = make_workspace(tmp_path / "ws")
    lines: list[str] = []
    options = tiny_options(steps=1)
    pending = start_early(workspace, options, lines.append)
    committed = workspace.repo.git.show(f"HEAD:{CONFIG_FILE}")  # written before the server reads it
    assert yaml.safe_load(committed)["grpo"]["group_size"] == 2
    access = pending.access()  # waits until it rolls
    with SwarmClient(access.url, token=access.token) as swarm:
        assert swarm.status()["state"] == "rolling"
    early = pending.take()
    assert early is not None and early.pid == read_launch_file(workspace.path)["server_pid"]
    run = launch(workspace, options=options, started_at=time.time(), progress=lines.append, server=early)
    try:
        assert run.server is early and run.server.is_alive()
        assert sum("starting a tiny server" in line for line in lines) == 1, lines  # one server, not two
        assert any("started during validation" in line for line in lines)
        with pytest.raises(VibeError, match="handed to the launch"):
            pending.access()
    finally:
        stop(run)
    pending.close()  # taken: the launch's to stop, and it did
    assert not early.is_alive() and read_launch_file(workspace.path)["server_pid"] is None


def test_a_run_that_ends_before_training_stops_it_and_a_resumed_process_adopts_it(tmp_path: Path) -> None:
    workspace = make_workspace(tmp_path / "ws")
    first = start_early(workspace, tiny_options(), lambda line: None)
    url = first.access().url
    lines: list[str] = []
    again = start_early(workspace, tiny_options(), lines.append)  # a resumed process: the killed one's server runs
    assert again.access().url == url and any("adopted" in line for line in lines), lines
    handle = again.take()
    assert handle is not None and handle.adopted
    first.close()  # the run ended before training: its server is stopped and forgotten
    assert not handle.is_alive() and read_launch_file(workspace.path)["server_pid"] is None
    first.close()  # twice is harmless


def test_a_start_that_failed_fails_the_access_and_leaves_the_launch_to_start_one(tmp_path: Path) -> None:
    def broken() -> ServerHandle:
        raise VibeError("the model is missing")

    pending = PendingServer(broken, tmp_path)
    with pytest.raises(VibeError, match="did not start: the model is missing"):
        pending.access()
    assert pending.take() is None
    pending.close()


def test_a_server_that_died_since_is_not_handed_over(tmp_path: Path) -> None:
    gone = subprocess.Popen(["true"])
    gone.wait()
    pending = PendingServer(lambda: ServerHandle("http://127.0.0.1:9", "t", "tiny", pid=gone.pid), tmp_path)
    assert pending.access().url == "http://127.0.0.1:9"
    assert pending.take() is None  # the launch starts (or adopts) one itself


def test_a_launch_that_fails_leaves_the_early_server_stopped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """launch_and_watch takes validation's server, then the launch fails before training: nothing runs on."""
    from agentjet.vibe import nodes
    from agentjet.vibe.context import VibeContext
    from agentjet.vibe.run import launch as launch_module
    from agentjet.vibe.state import VibeOptions, VibeState
    from tests.vibe.test_generate import make_spec

    server = subprocess.Popen(["sleep", "300"], start_new_session=True)  # stands in for the server process
    try:
        workspace = make_workspace(tmp_path / "ws")
        ctx = VibeContext("t-1", VibeOptions(workdir=str(tmp_path)), workspace.path)
        handle = ServerHandle("http://127.0.0.1:9", "t", "tiny", pid=server.pid)
        ctx.run_server = PendingServer(lambda: handle, workspace.path)

        def refused(*args: object, **kwargs: object) -> None:
            raise VibeError("no sandbox works here")

        monkeypatch.setattr(launch_module, "launch", refused)
        state: VibeState = {"spec": make_spec("arithmetic").model_dump(mode="json"), "workspace": str(workspace.path)}
        with pytest.raises(VibeError, match="no sandbox"):
            nodes.launch_and_watch(state, ctx)
        assert server.wait(timeout=30) is not None
    finally:
        server.kill()


# --- training beside the checks: launched held once the dry run passes, released after the red team ------------


def _wait_for(predicate: Callable[[], bool], timeout_s: float = 120.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.2)


def test_training_beside_the_checks_plays_its_round_but_takes_no_step_until_released(tmp_path: Path) -> None:
    workspace = make_workspace(tmp_path / "ws")
    lines: list[str] = []
    options = tiny_options(steps=1)
    pending = start_early(workspace, options, lines.append)
    beside = start_beside_checks(workspace, options, pending, started_at=time.time(), progress=lines.append)
    assert beside is not None
    try:
        server = beside.run.server
        assert beside.access().url == server.url  # validation's real episodes play on the same server
        assert server.read_config()["collect"]["hold"] is True
        assert read_launch_file(workspace.path)[HELD_FOR_CHECKS] == workspace.head()
        assert any("every server is held still" in line for line in lines), lines
        per_step = beside.run.per_step
        _wait_for(lambda: swarm_status(server.url, server.token)["episodes"]["finished"] >= per_step)
        time.sleep(2.0)  # a whole round is in: only the hold keeps the update from starting
        assert swarm_status(server.url, server.token)["step"] == 0
        run = beside.release()
        assert run is beside.run and server.read_config()["collect"]["hold"] is False
        assert HELD_FOR_CHECKS not in read_launch_file(workspace.path) or not read_launch_file(workspace.path)[
            HELD_FOR_CHECKS
        ]
        _wait_for(lambda: swarm_status(server.url, server.token)["step"] >= 1)
    finally:
        beside.stop()
    assert not server.is_alive() and beside.run.client.exit_code is not None
    pending.close()  # taken by the held training: nothing left for it to stop


def test_a_held_training_of_files_a_repair_changed_is_discarded_and_of_the_same_files_kept(tmp_path: Path) -> None:
    workspace = make_workspace(tmp_path / "ws")
    options = tiny_options(steps=1)
    beside = start_beside_checks(
        workspace, options, start_early(workspace, options, lambda _: None), started_at=time.time(), progress=print
    )
    assert beside is not None
    server, client = beside.run.server, beside.run.client
    _wait_for(lambda: swarm_status(server.url, server.token)["episodes"]["finished"] >= 1)
    lines: list[str] = []
    assert not discard_stale(workspace, lines.append)  # the same files: a resumed process keeps what they played
    assert server.is_alive() and (workspace.path / "state").is_dir()
    workspace.write("reward.py", VARIED_REWARD + "\n# repaired\n")  # a repair, while the killed run's processes live
    workspace.commit("repair(red_team): a test fix")
    write_launch_file(workspace.path, server_url="http://127.0.0.1:9")  # one that does not answer: stopped all the same
    assert discard_stale(workspace, lines.append)
    _wait_for(lambda: not server.is_alive(), 60.0)
    assert client.process.wait(timeout=30) is not None
    assert not (workspace.path / "state").exists() and (workspace.path / "state.discarded" / "token").is_file()
    assert any("none of its episodes is trained on" in line for line in lines), lines
    fresh = start_early(workspace, options, lambda _: None)  # the next validation's server starts empty
    access = fresh.access()
    try:
        assert access.url != server.url or not server.is_alive()
        assert swarm_status(access.url, access.token)["episodes"]["finished"] == 0
        assert not discard_stale(workspace, lines.append)  # nothing held any more
    finally:
        fresh.close()
    stop(beside.run)  # harmless: its processes are gone


def test_a_launch_after_a_killed_run_releases_the_hold_its_checks_left(tmp_path: Path) -> None:
    workspace = make_workspace(tmp_path / "ws")
    options = tiny_options(steps=1)
    beside = start_beside_checks(
        workspace, options, start_early(workspace, options, lambda _: None), started_at=time.time(), progress=print
    )
    assert beside is not None  # the process is "killed" here: its held server and client live on
    lines: list[str] = []
    run = launch(workspace, options=options, started_at=time.time(), progress=lines.append)  # the resumed launch
    try:
        assert run.server.url == beside.run.server.url and run.server.adopted  # the same server, adopted
        assert run.server.read_config()["collect"]["hold"] is False
        assert not read_launch_file(workspace.path).get(HELD_FOR_CHECKS)
        _wait_for(lambda: swarm_status(run.server.url, run.server.token)["step"] >= 1)
    finally:
        stop(run)
    assert beside.run.client.process.wait(timeout=30) is not None  # the stray client was replaced


def test_a_server_reused_by_url_gets_no_training_beside_the_checks(tmp_path: Path) -> None:
    workspace = make_workspace(tmp_path / "ws")
    pending = start_early(workspace, tiny_options(), lambda _: None)
    try:
        options = tiny_options(server_url=pending.access().url, token="t")
        assert start_beside_checks(workspace, options, pending, started_at=time.time(), progress=print) is None
        pending.access()  # still validation's, not taken
    finally:
        pending.close()
