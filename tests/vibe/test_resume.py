"""Durable vibe runs: a run stopped mid-way (a crash, or `kill -9` of `agentjet vibe`) resumes at the node it was in."""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import IO

import git
import pytest

from agentjet.vibe.driver import pending_nodes, resume_vibe, run_vibe
from agentjet.vibe.errors import VibeError
from agentjet.vibe.graph import ENV_NODES
from agentjet.vibe.runs import list_runs
from agentjet.vibe.state import VibeOptions
from tests.vibe.fake_nodes import ENV_SCRIPT, FakeScript, calls, make_nodes

REPO = Path(__file__).resolve().parents[2]


def test_a_crash_resumes_at_the_node_that_crashed(tmp_path: Path) -> None:
    workdir = tmp_path / "runs"
    nodes = make_nodes(FakeScript(crash="red_team"))
    with pytest.raises(RuntimeError, match="red_team crashed"):
        run_vibe("train a word game", VibeOptions(workdir=str(workdir), steps=7), run_id="t-1", nodes=nodes)
    assert pending_nodes("t-1", workdir) == ("red_team",)
    result = resume_vibe("t-1", workdir, nodes=nodes)
    assert result.status == "done"
    assert calls(workdir) == [
        "understand", "generate", "validate", "red_team", "red_team", "launch_and_watch", "report",
    ]  # fmt: skip
    assert result.state["options"]["steps"] == 7  # the options come back from the checkpoint
    assert result.state["finished"] == ["understand", "generate", "validate", "red_team", "launch_and_watch", "report"]
    assert pending_nodes("t-1", workdir) == ()


def test_resuming_a_finished_run_runs_nothing(tmp_path: Path) -> None:
    workdir = tmp_path / "runs"
    run_vibe("train a word game", VibeOptions(workdir=str(workdir)), run_id="t-1", nodes=make_nodes())
    before = calls(workdir)
    result = resume_vibe("t-1", workdir, nodes=make_nodes())
    assert result.status == "done"
    assert calls(workdir) == before


def test_resuming_an_unknown_run_names_the_runs_there(tmp_path: Path) -> None:
    workdir = tmp_path / "runs"
    run_vibe("train a word game", VibeOptions(workdir=str(workdir)), run_id="t-1", nodes=make_nodes())
    with pytest.raises(VibeError, match=r"no vibe run 't-9'.*runs there: t-1"):
        resume_vibe("t-9", workdir, nodes=make_nodes())
    with pytest.raises(VibeError, match="runs there: none"):
        resume_vibe("t-1", tmp_path / "elsewhere", nodes=make_nodes())


def _lines(stream: IO[str]) -> queue.Queue[str]:
    """The lines of `stream` as they come, read by a thread (a queue with timeouts, never a sleep)."""
    lines: queue.Queue[str] = queue.Queue()

    def pump() -> None:
        for line in stream:
            lines.put(line.rstrip("\n"))

    threading.Thread(target=pump, daemon=True).start()
    return lines


def _wait_for(lines: queue.Queue[str], text: str, timeout_s: float) -> list[str]:
    seen: list[str] = []
    deadline = time.monotonic() + timeout_s
    while not any(text in line for line in seen):
        seen.append(lines.get(timeout=max(0.1, deadline - time.monotonic())))
    return seen


def _vibe(*args: str) -> list[str]:
    return [sys.executable, "-m", "agentjet.cli.main", "vibe", *args]


def test_kill_9_then_resume_continues_from_the_last_finished_node(tmp_path: Path) -> None:
    workdir = tmp_path / "runs"
    # real planner and templates; scripted validate, red team, training and report (no sandbox or server needed)
    env = {**os.environ, ENV_NODES: "tests.vibe.fake_nodes:SANDBOXED", ENV_SCRIPT: json.dumps({"block": "red_team"})}
    env["PYTHONPATH"] = str(REPO)
    proc = subprocess.Popen(
        _vibe("train a 7B to play werewolves", "--workdir", str(workdir)),
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        # the fake logs this after it recorded its call: a kill right after "red_team: started" could beat that
        seen = _wait_for(_lines(proc.stdout), "red_team is blocking until killed", timeout_s=120)  # type: ignore[arg-type]
        run_id = seen[0].split("] run ", 1)[1]
        racing = subprocess.run(_vibe("--resume", run_id, "--workdir", str(workdir)), cwd=tmp_path, env=env,
                                capture_output=True, text=True, timeout=120)  # fmt: skip
        assert racing.returncode == 2  # the run is still being driven: a second driver is refused
        assert f"run {run_id} is being driven by another process (pid {proc.pid})" in racing.stderr
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL
    assert [line.split("] ", 1)[1] for line in seen if "validate: " in line][-1].startswith("validate: done")
    assert list_runs(workdir) == [run_id]
    assert pending_nodes(run_id, workdir) == ("red_team",)  # validate's checkpoint was written before red_team began

    resumed = subprocess.run(
        _vibe("--resume", run_id, "--workdir", str(workdir)),
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert resumed.returncode == 0, resumed.stderr
    assert f"run {run_id}: done" in resumed.stdout
    assert "red_team: started" in resumed.stdout and "generate: started" not in resumed.stdout
    assert calls(workdir) == ["validate", "red_team", "red_team", "launch_and_watch", "report"]
    subjects = [str(c.summary) for c in git.Repo(workdir / run_id).iter_commits()]
    assert sum(s.startswith("understand: task spec") for s in subjects) == 1
    assert sum(s.startswith("generate(template werewolves)") for s in subjects) == 1
    assert "understand: started" not in resumed.stdout
    assert (workdir / run_id / "report.md").is_file()
    assert pending_nodes(run_id, workdir) == ()


def test_sigterm_stops_the_run_like_ctrl_c_and_leaves_it_resumable(tmp_path: Path) -> None:
    workdir = tmp_path / "runs"
    env = {**os.environ, ENV_NODES: "tests.vibe.fake_nodes:NODES", ENV_SCRIPT: json.dumps({"block": "validate"})}
    env["PYTHONPATH"] = str(REPO)
    argv = _vibe("train a word game", "--workdir", str(workdir))
    proc = subprocess.Popen(argv, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        seen = _wait_for(_lines(proc.stdout), "validate is blocking until killed", timeout_s=120)  # type: ignore[arg-type]
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=60) == 130
    finally:
        proc.kill()
    run_id = seen[0].split("] run ", 1)[1]
    assert f"interrupted: resume with agentjet vibe --resume {run_id} --workdir {workdir}" in proc.stderr.read()  # type: ignore[union-attr]
    assert pending_nodes(run_id, workdir) == ("validate",)
    assert resume_vibe(run_id, workdir, nodes=make_nodes()).status == "done"
    assert calls(workdir) == [
        "understand",
        "generate",
        "validate",
        "validate",
        "red_team",
        "launch_and_watch",
        "report",
    ]


@pytest.mark.parametrize(("first", "second"), [(signal.SIGINT, signal.SIGINT), (signal.SIGTERM, signal.SIGINT),
                                             (signal.SIGINT, signal.SIGTERM)])  # fmt: skip
def test_a_second_signal_does_not_cut_the_cleanup_short(tmp_path: Path, first: int, second: int) -> None:
    workdir = tmp_path / "runs"
    script = json.dumps({"block": "validate", "cleanup_s": 3})
    env = {**os.environ, ENV_NODES: "tests.vibe.fake_nodes:NODES", ENV_SCRIPT: script, "PYTHONPATH": str(REPO)}
    argv = _vibe("train a word game", "--workdir", str(workdir))
    proc = subprocess.Popen(argv, cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        lines = _lines(proc.stdout)  # type: ignore[arg-type]
        _wait_for(lines, "validate is blocking until killed", timeout_s=120)
        proc.send_signal(first)
        _wait_for(lines, "validate is cleaning up", timeout_s=60)
        proc.send_signal(second)  # an impatient second Ctrl-C, or a supervisor's SIGTERM
        assert proc.wait(timeout=60) == 130
    finally:
        proc.kill()
    assert (workdir / "cleaned.log").read_text() == "validate"  # the cleanup ran to its end
    stderr = proc.stderr.read()  # type: ignore[union-attr]
    assert "still stopping" in stderr and "Traceback" not in stderr


def test_resuming_a_failed_run_retries_the_node_that_failed_it(tmp_path: Path) -> None:
    workdir = tmp_path / "runs"
    nodes = make_nodes(FakeScript(fail={"red_team": 1}))  # fails once: e.g. a timeout on a busy machine
    options = VibeOptions(workdir=str(workdir), max_repairs=0)
    failed = run_vibe("train a word game", options, run_id="t-1", nodes=nodes)
    assert (failed.status, failed.state["failed_at"]) == ("failed", "red_team")
    assert json.loads((workdir / "t-1" / "run.json").read_text())["status"] == "failed"
    result = resume_vibe("t-1", workdir, nodes=nodes)
    assert result.status == "done"
    assert calls(workdir) == [
        "understand", "generate", "validate", "red_team", "report",  # the failed run
        "red_team", "launch_and_watch", "report",  # the retry: from the node that failed
    ]  # fmt: skip
    assert json.loads((workdir / "t-1" / "run.json").read_text())["status"] == "done"
    assert result.state["failed_at"] is None  # the retry forked the history before the failure
    assert resume_vibe("t-1", workdir, nodes=nodes).status == "done"  # now finished: nothing runs
    assert len(calls(workdir)) == 8


def test_a_run_that_failed_in_repair_is_retried_at_the_repaired_node(tmp_path: Path) -> None:
    workdir = tmp_path / "runs"
    failing = make_nodes(FakeScript(fatal="repair", fail={"validate": 1}))
    failed = run_vibe("train a word game", VibeOptions(workdir=str(workdir)), run_id="t-1", nodes=failing)
    assert (failed.status, failed.state["failed_at"]) == ("failed", "validate")
    result = resume_vibe("t-1", workdir, nodes=make_nodes())  # e.g. an LLM configured since
    assert result.status == "done"
    assert calls(workdir)[5:] == ["validate", "red_team", "launch_and_watch", "report"]
