"""The vibe graph: node order, the bounded repair loop, failures, refusals and the progress view (scripted nodes)."""

from __future__ import annotations

import io
import json
import sqlite3
import subprocess
from pathlib import Path
from typing import Any

import git
import pytest

from agentjet.vibe.context import VibeContext
from agentjet.vibe.driver import run_vibe
from agentjet.vibe.errors import VibeError
from agentjet.vibe.graph import NEXT, build_graph
from agentjet.vibe.progress import PlainProgress, sparkline
from agentjet.vibe.run.early_server import PendingServer
from agentjet.vibe.run.swarm_server import ServerHandle
from agentjet.vibe.runs import checkpoint_path, list_runs
from agentjet.vibe.state import NODES, VibeOptions, VibeState, new_run_id
from tests.vibe.fake_nodes import FakeScript, calls, make_nodes

HAPPY = ["understand", "generate", "validate", "red_team", "launch_and_watch", "report"]


def _run(tmp_path: Path, script: FakeScript | None = None, *, sentence: str = "train a word game", **options: int):
    workdir = tmp_path / "runs"
    result = run_vibe(
        sentence,
        VibeOptions(workdir=str(workdir), **options),
        run_id="t-1",
        nodes=make_nodes(script),
    )
    return workdir, result


def _subjects(workspace: Path) -> list[str]:
    return [str(c.summary) for c in git.Repo(workspace).iter_commits()][::-1]


def test_nodes_run_in_order_once_each(tmp_path: Path) -> None:
    workdir, result = _run(tmp_path)
    assert result.status == "done"
    assert calls(workdir) == HAPPY
    assert result.state["finished"] == HAPPY
    assert set(result.state["timings"]) == set(HAPPY)
    assert all(t["runs"] == 1 and t["elapsed_s"] >= 0 for t in result.state["timings"].values())
    assert result.report == workdir / "t-1" / "report.md"
    assert json.loads((workdir / "t-1" / "run.json").read_text())["status"] == "done"
    json.dumps(result.state)  # the state is plain data


def test_graph_order_table_matches_nodes() -> None:
    chain = ["understand"]
    while NEXT[chain[-1]] in NEXT:
        chain.append(NEXT[chain[-1]])
    assert tuple(chain) == NODES


def test_failed_validation_is_repaired_then_validated_again(tmp_path: Path) -> None:
    workdir, result = _run(tmp_path, FakeScript(fail={"validate": 2}))
    assert result.status == "done"
    assert calls(workdir) == [
        "understand", "generate", "validate", "repair", "validate", "repair", "validate",
        "red_team", "launch_and_watch", "report",
    ]  # fmt: skip
    assert result.state["repair_counts"] == {"validate": 2}
    assert [(r["node"], r["attempt"]) for r in result.state["repairs"]] == [("validate", 1), ("validate", 2)]
    assert result.state["repairs"][0]["summary"] == "fixed validate"
    assert result.state["failure"] is None
    subjects = _subjects(workdir / "t-1")
    assert subjects.count("repair(validate): scripted fix") == 2


def test_hackable_reward_goes_back_through_validate(tmp_path: Path) -> None:
    workdir, result = _run(tmp_path, FakeScript(fail={"red_team": 1}))
    assert result.status == "done"
    assert calls(workdir)[3:7] == ["red_team", "repair", "validate", "red_team"]


def test_repair_loop_is_bounded_and_the_report_still_runs(tmp_path: Path) -> None:
    workdir, result = _run(tmp_path, FakeScript(fail={"validate": 99}), max_repairs=2)
    assert result.status == "failed"
    rounds = ["validate", "repair", "validate", "repair", "validate"]
    assert calls(workdir) == ["understand", "generate", *rounds, "report"]
    assert "validate failed after 2 repair round(s)" in result.message
    assert result.state["results"]["validate"] == {"ok": False, "call": 3}
    assert len(result.state["errors"]) == 3
    assert json.loads((workdir / "t-1" / "run.json").read_text()) == {"status": "failed", "repairs": 2}


def test_no_repairs_allowed_fails_at_once(tmp_path: Path) -> None:
    workdir, result = _run(tmp_path, FakeScript(fail={"generate": 1}), max_repairs=0)
    assert result.status == "failed"
    assert calls(workdir) == ["understand", "generate", "report"]


def test_a_repair_that_fails_counts_as_a_round(tmp_path: Path) -> None:
    workdir, result = _run(tmp_path, FakeScript(fail={"launch_and_watch": 1}, repair_fails=1), max_repairs=3)
    assert result.status == "done"
    assert calls(workdir)[4:] == ["launch_and_watch", "repair", "repair", "launch_and_watch", "report"]
    assert result.state["repair_counts"] == {"launch_and_watch": 2}
    assert result.state["repairs"][0]["summary"].startswith("repair failed: the fix did not parse")


def test_repairs_exhausted_by_failing_repairs(tmp_path: Path) -> None:
    workdir, result = _run(tmp_path, FakeScript(fail={"validate": 1}, repair_fails=5), max_repairs=2)
    assert result.status == "failed"
    assert calls(workdir) == ["understand", "generate", "validate", "repair", "repair", "report"]
    assert "2 repair round(s) did not fix it" in result.message


def test_a_fatal_error_skips_to_the_report(tmp_path: Path) -> None:
    workdir, result = _run(tmp_path, FakeScript(fatal="red_team"))
    assert result.status == "failed"
    assert calls(workdir) == ["understand", "generate", "validate", "red_team", "report"]
    assert result.message == "red_team: red_team cannot go on (scripted)"


def test_refusal_leaves_nothing_behind(tmp_path: Path) -> None:
    workdir = tmp_path / "runs"
    options = VibeOptions(workdir=str(workdir))
    result = run_vibe("write me a poem", options, run_id="t-1", nodes=make_nodes())
    assert result.status == "refused"
    assert "scripted refusal" in result.message
    assert not workdir.exists()


def test_refusal_keeps_other_runs_and_removes_its_own_checkpoints(tmp_path: Path) -> None:
    workdir, first = _run(tmp_path)
    refused = run_vibe("a poem please", VibeOptions(workdir=str(workdir)), run_id="t-2", nodes=make_nodes())
    assert (first.status, refused.status) == ("done", "refused")
    assert list_runs(workdir) == ["t-1"]
    assert sorted(p.name for p in workdir.iterdir()) == [".vibe", "calls.log", "t-1"]
    assert not [p.name for p in (workdir / ".vibe").iterdir() if "t-2" in p.name]  # its lock file is gone too


def test_checkpoints_are_in_sqlite_under_the_run_id(tmp_path: Path) -> None:
    workdir, _ = _run(tmp_path)
    with sqlite3.connect(checkpoint_path(workdir)) as conn:
        threads = {row[0] for row in conn.execute("SELECT thread_id FROM checkpoints")}
    assert threads == {"t-1"}


def test_an_existing_run_id_is_refused_before_anything_runs(tmp_path: Path) -> None:
    workdir, _ = _run(tmp_path)
    with pytest.raises(VibeError, match="--resume t-1"):
        run_vibe("again", VibeOptions(workdir=str(workdir)), run_id="t-1", nodes=make_nodes())
    assert calls(workdir) == HAPPY


def test_a_graph_missing_a_node_is_an_error() -> None:
    nodes = make_nodes()
    del nodes["repair"]
    with pytest.raises(VibeError, match="missing node functions for repair"):
        build_graph(nodes)


def test_plain_progress_lines_and_curve(tmp_path: Path) -> None:
    stream = io.StringIO()
    workdir = tmp_path / "runs"
    run_vibe("train", VibeOptions(workdir=str(workdir)), run_id="t-1", nodes=make_nodes(FakeScript(steps=4)),
             progress=PlainProgress(stream, "t-1"))  # fmt: skip
    lines = [line.split("] ", 1)[1] for line in stream.getvalue().splitlines()]
    assert lines[0] == "run t-1"
    assert "validate: started" in lines and "red_team: started" in lines
    assert lines.index("validate: started") < lines.index("red_team: started")
    assert any(line.startswith("report: done (") for line in lines)
    steps = [line for line in lines if line.startswith("step ")]
    assert steps[0] == "step 1: train reward 0.250 ▄"
    assert steps[-1] == "step 4: train reward 1.000 ▁▃▆█"


def test_sparkline_scales_between_min_and_max() -> None:
    assert sparkline([]) == ""
    assert sparkline([0.0, 1.0]) == "▁█"
    assert sparkline([2.0, 2.0, 2.0]) == "▄▄▄"
    assert sparkline(list(range(100)), width=5) == "▁▃▅▆█"  # the last 5 only: 95..99


def test_run_ids_are_readable_and_distinct() -> None:
    first, second = new_run_id("Train a 7B to play Werewolves!"), new_run_id("Train a 7B to play Werewolves!")
    assert first.startswith("train-a-7b-to-play-werewolves-")
    assert first != second


def test_the_package_exports_resolve() -> None:
    import agentjet.vibe

    assert all(getattr(agentjet.vibe, name) is not None for name in agentjet.vibe.__all__)
    assert agentjet.vibe.run_vibe is run_vibe
    with pytest.raises(AttributeError):
        agentjet.vibe.nothing_here  # noqa: B018


# -- the real nodes where they need no sandbox or server: planner, templates, repair -----------------------------------


def test_real_understand_and_generate_write_a_committed_workspace(tmp_path: Path) -> None:
    from agentjet.vibe.nodes import generate, understand
    from agentjet.vibe.plan.spec import load_spec

    workdir = tmp_path / "runs"
    nodes = make_nodes() | {"understand": understand, "generate": generate}
    result = run_vibe("train a 7B to play werewolves", VibeOptions(workdir=str(workdir), steps=4), run_id="t-1",
                      nodes=nodes)  # fmt: skip
    assert result.status == "done"
    workspace = workdir / "t-1"
    spec = load_spec(workspace / "task.yaml")
    assert (spec.family, spec.requested_model, spec.budget.steps, spec.planner) == (
        "werewolves",
        "7B",
        4,
        "deterministic",
    )
    assert spec.model != "7B" and spec.model_note  # no 7B here: the note says what trains instead
    assert result.state["spec"] == spec.model_dump(mode="json")
    for name in ("client.py", "reward.py", "dataset.py", "tests/test_task.py", "data/train.jsonl", "data/eval.jsonl"):
        assert (workspace / name).is_file(), name
    subjects = _subjects(workspace)
    assert subjects[:3] == ["workspace: new vibe run", f"understand: task spec (werewolves, {spec.model})",
                            subjects[2]]  # fmt: skip
    assert subjects[2].startswith("decision(understand): Planner: deterministic")
    assert sum(s.startswith("generate(template werewolves)") for s in subjects) == 1
    assert all(a in (workspace / "decisions.md").read_text() for a in spec.assumptions)
    assert result.state["results"]["generate"]["source"] == "template"


def test_the_real_planner_refuses_and_nothing_is_written(tmp_path: Path) -> None:
    from agentjet.vibe.nodes import understand

    workdir = tmp_path / "runs"
    nodes = make_nodes() | {"understand": understand}
    result = run_vibe("write me a poem about autumn", VibeOptions(workdir=str(workdir)), run_id="t-1", nodes=nodes)
    assert result.status == "refused"
    assert "families" in result.message.lower() or "werewolves" in result.message
    assert not workdir.exists()


def test_real_repair_without_an_llm_stops_the_run_with_why(tmp_path: Path) -> None:
    from agentjet.vibe.nodes import generate, repair, understand

    workdir = tmp_path / "runs"
    nodes = make_nodes(FakeScript(fail={"validate": 1})) | {"understand": understand, "generate": generate,
                                                             "repair": repair}  # fmt: skip
    result = run_vibe("train a 7B to play werewolves", VibeOptions(workdir=str(workdir)), run_id="t-1", nodes=nodes)
    assert result.status == "failed"
    assert "no LLM is configured to repair it" in result.message
    assert calls(workdir) == ["validate", "report"]  # the fakes' calls: validate failed, repair stopped, report ran
    assert json.loads((workdir / "t-1" / "run.json").read_text())["status"] == "failed"


def test_real_repair_with_a_scripted_llm_commits_the_fix_and_validates_again(tmp_path: Path) -> None:
    from dataclasses import replace

    from agentjet.vibe.nodes import generate, repair, understand
    from tests.vibe.fake_llm import serve_fake_llm

    def offline_understand(state: VibeState, ctx: VibeContext) -> dict[str, object]:
        return understand(state, replace(ctx, llm=None))  # the deterministic plan; the LLM is for the repair

    fixed = "def score(item, answer):\n    return 0.0\n"
    reply = f"SUMMARY: reward.py returns a float for every outcome\n```python path=reward.py\n{fixed}```\n"
    workdir = tmp_path / "runs"
    nodes = make_nodes(FakeScript(fail={"validate": 1})) | {"understand": offline_understand, "generate": generate,
                                                             "repair": repair}  # fmt: skip
    with serve_fake_llm([reply]) as fake:
        options = VibeOptions(workdir=str(workdir), llm=fake.url)
        result = run_vibe("train a 7B to play werewolves", options, run_id="t-1", nodes=nodes)
    assert result.status == "done"
    assert calls(workdir) == ["validate", "validate", "red_team", "launch_and_watch", "report"]
    assert (workdir / "t-1" / "reward.py").read_text() == fixed
    assert "repair(validate): reward.py returns a float for every outcome" in _subjects(workdir / "t-1")
    assert result.state["repairs"][0]["summary"] == "reward.py returns a float for every outcome"
    assert "validate check failed (scripted, call 1)" in fake.requests[0]["messages"][1]["content"]


def test_live_progress_shows_nodes_repairs_curve_and_last_line() -> None:
    from rich.console import Console

    from agentjet.vibe.progress import LiveProgress

    out = io.StringIO()
    console = Console(file=out, force_terminal=True, width=120, color_system=None)
    with LiveProgress(console, "t-1", "train a word game") as view:
        for node in ("understand", "generate", "validate"):
            view.node_started(node)
            view.node_finished(
                node, "failed" if node == "validate" else "done", 1.5, "tests failed" * (node == "validate")
            )
        view.node_started("repair")
        view.node_finished("repair", "done", 0.5, "fixed reward.py")
        view.node_started("validate")
        for step, reward in enumerate([0.0, 0.5, 1.0], start=1):
            view.train_step(step, reward)
        view.log("first training step after 12.0 s")
    frame = out.getvalue().split("vibe t-1")[-1]  # the last frame drawn
    assert "«train a word game»" in frame
    assert "✓ understand" in frame.replace("  ", " ") and "● validate" in frame.replace("  ", " ")
    assert "repair x1" in frame and "fixed reward.py" in frame
    assert "· report" in frame.replace("  ", " ")
    assert "train reward ▁▅█  step 3  last 1.000" in frame
    assert "first training step after 12.0 s" in frame


def test_make_progress_is_plain_off_a_terminal() -> None:
    from agentjet.vibe.progress import make_progress

    assert isinstance(make_progress(io.StringIO(), "t-1"), PlainProgress)


def test_the_watchers_regenerate_hook_repairs_the_client_through_the_llm(tmp_path: Path) -> None:
    from agentjet.llm.chat import resolve_llm
    from agentjet.vibe.context import VibeContext
    from agentjet.vibe.nodes import client_regenerator, generate, understand
    from agentjet.vibe.run.trouble import Finding, Trouble
    from agentjet.vibe.state import RepairRecord
    from tests.vibe.fake_llm import serve_fake_llm

    workdir = tmp_path / "runs"
    nodes = make_nodes() | {"understand": understand, "generate": generate}
    state = run_vibe(
        "train a 7B to play werewolves", VibeOptions(workdir=str(workdir)), run_id="t-1", nodes=nodes
    ).state
    crash = Finding(Trouble.CLIENT_EXITED, "the client process (generation 1) exited with status 1", 3, "KeyError: 'x'")
    offline = VibeContext("t-1", VibeOptions(workdir=str(workdir)), workdir / "t-1")
    assert client_regenerator(state, offline, []) is None  # no LLM: the watcher tries its other remedies

    new_client = (
        "from agentjet.tasks.werewolves import Werewolves\n\n\ndef make_task(**params):\n    return Werewolves()\n"
    )
    with serve_fake_llm([f"SUMMARY: guard the missing key\n```python path=client.py\n{new_client}```\n"]) as fake:
        records: list[RepairRecord] = []
        ctx = VibeContext("t-1", VibeOptions(workdir=str(workdir)), workdir / "t-1", llm=resolve_llm(fake.url))
        hook = client_regenerator(state, ctx, records)
        assert hook is not None
        path = hook(crash)
    assert path == (workdir / "t-1" / "client.py").resolve()
    assert path.read_text() == new_client
    assert records == [RepairRecord(node="launch_and_watch", attempt=1, error=crash.detail,
                                    summary="client regenerated and hot-swapped: guard the missing key")]  # fmt: skip
    assert "KeyError: 'x'" in fake.requests[0]["messages"][1]["content"]  # the evidence reached the prompt
    assert _subjects(workdir / "t-1")[-1] == "repair(launch_and_watch): guard the missing key"


@pytest.mark.parametrize(
    "script", [FakeScript(fatal="red_team"), FakeScript(crash="red_team")], ids=["failed", "crashed"]
)
def test_a_server_validation_started_is_stopped_when_the_run_ends_before_a_launch_took_it(
    tmp_path: Path, script: FakeScript
) -> None:
    """`ctx.run_server` (validate's early server) is stopped by the driver however the run ends."""
    server = subprocess.Popen(["sleep", "300"], start_new_session=True)  # stands in for the server process
    nodes = make_nodes(script)
    check = nodes["validate"]

    def validate(state: VibeState, ctx: VibeContext) -> dict[str, Any]:
        handle = ServerHandle("http://127.0.0.1:9", "t", "tiny", pid=server.pid)
        ctx.run_server = PendingServer(lambda: handle, ctx.workspace)
        return check(state, ctx)

    nodes["validate"] = validate
    try:
        try:
            run_vibe("train a word game", VibeOptions(workdir=str(tmp_path / "runs")), run_id="t-1", nodes=nodes)
        except RuntimeError:
            pass  # the scripted crash: the run stops, resumable
        assert server.wait(timeout=30) is not None  # stopped, not left running
    finally:
        server.kill()
