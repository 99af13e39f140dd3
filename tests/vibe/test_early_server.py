"""The run's server started during validation (`early_server`), on `tiny`: the launch trains on that same process,
a run that ends before training stops it, a resumed process adopts it, and a start that failed or a server that
died leaves the launch to start its own."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import pytest
import yaml

from agentjet.core import SwarmClient
from agentjet.vibe.errors import VibeError
from agentjet.vibe.run.early_server import PendingServer, start_early
from agentjet.vibe.run.launch import CONFIG_FILE, launch, stop
from agentjet.vibe.run.swarm_server import ServerHandle, read_launch_file
from tests.vibe.launch_helpers import make_workspace, tiny_options


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
