"""Scripted vibe nodes for the graph tests: real git workspace and files, no LLM, sandbox or server.

Every call appends `<node>` to `<workdir>/calls.log` (one line each), so a test can count how often
each node ran, across processes too. The script (a `FakeScript`, or JSON in $VIBE_FAKE for the CLI
through `AGENTJET_VIBE_NODES=tests.vibe.fake_nodes:NODES`, or `:SANDBOXED` to keep the real
understand and generate) says which nodes fail and how often,
which node blocks on its first call (to be killed there), and how many train steps to report.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentjet.vibe.context import NodeFailed, NodeFn, VibeContext
from agentjet.vibe.errors import PlanRefused, VibeError
from agentjet.vibe.state import VibeState
from agentjet.vibe.workspace import Workspace

ENV_SCRIPT = "VIBE_FAKE"


@dataclass
class FakeScript:
    fail: dict[str, int] = field(default_factory=dict)  # node -> NodeFailed on its first N calls
    fatal: str | None = None  # node (repair too) that raises a plain VibeError (not repairable)
    crash: str | None = None  # node that raises RuntimeError on its first call (a bug: the run stops, resumable)
    block: str | None = None  # node that sleeps on its first call until the process is killed
    cleanup_s: float = 0.0  # an interrupted blocking node takes this long to clean up, then writes cleaned.log
    repair_fails: int = 0  # the repair node's first N calls fail too
    steps: int = 3


def calls(workdir: Path) -> list[str]:
    path = Path(workdir) / "calls.log"
    return path.read_text().split() if path.is_file() else []


def _record(ctx: VibeContext, name: str) -> int:
    """Log the call; returns how many calls of `name` there were before this one."""
    workdir = Path(ctx.options.workdir)
    before = calls(workdir).count(name)
    workdir.mkdir(parents=True, exist_ok=True)
    with (workdir / "calls.log").open("a") as out:
        out.write(name + "\n")
    return before


def _scripted(name: str, script: FakeScript, ctx: VibeContext) -> None:
    """Apply the script to this call of `name` (fail, block or crash as told)."""
    before = _record(ctx, name)
    if script.block == name and before == 0:
        try:  # the log goes inside: a signal sent on seeing it may land before a `try` after it is entered
            ctx.progress.log(f"{name} is blocking until killed")
            time.sleep(600)
        finally:
            if script.cleanup_s:
                ctx.progress.log(f"{name} is cleaning up")
                time.sleep(script.cleanup_s)
                (Path(ctx.options.workdir) / "cleaned.log").write_text(name)
    if script.crash == name and before == 0:
        raise RuntimeError(f"{name} crashed (scripted)")
    if script.fatal == name:
        raise VibeError(f"{name} cannot go on (scripted)")
    if before < script.fail.get(name, 0):
        raise NodeFailed(
            f"{name} check failed (scripted, call {before + 1})",
            logs=f"log tail of {name}",
            report={"ok": False, "call": before + 1},
        )


def make_nodes(script: FakeScript | None = None) -> dict[str, NodeFn]:
    script = script or FakeScript()

    def understand(state: VibeState, ctx: VibeContext) -> dict[str, Any]:
        _scripted("understand", script, ctx)
        if "poem" in state["sentence"]:
            raise PlanRefused("a poem is not a training task (scripted refusal)")
        workspace = Workspace(state["workspace"]).init()
        workspace.write("task.yaml", f"sentence: {state['sentence']}\n")
        workspace.commit("understand: task spec", ["task.yaml"])
        return {"spec": {"name": "fake", "family": "word"}, "results": {"understand": {"family": "word"}}}

    def generate(state: VibeState, ctx: VibeContext) -> dict[str, Any]:
        _scripted("generate", script, ctx)
        workspace = Workspace(state["workspace"])
        workspace.write("client.py", "def make_task():\n    return None\n")
        workspace.commit("generate: client.py", ["client.py"])
        return {"results": {"generate": {"files": ["client.py"]}}}

    def check(name: str) -> NodeFn:
        def node(state: VibeState, ctx: VibeContext) -> dict[str, Any]:
            _scripted(name, script, ctx)
            return {"results": {name: {"ok": True}}}

        return node

    def launch_and_watch(state: VibeState, ctx: VibeContext) -> dict[str, Any]:
        _scripted("launch_and_watch", script, ctx)
        for step in range(1, script.steps + 1):
            ctx.progress.train_step(step, step / script.steps)
        return {"results": {"launch_and_watch": {"steps": script.steps, "time_to_first_step_s": 0.5}}}

    def report(state: VibeState, ctx: VibeContext) -> dict[str, Any]:
        _scripted("report", script, ctx)
        workspace = Workspace(state["workspace"])
        final = "failed" if state.get("status") == "failed" else "done"
        workspace.write("report.md", f"# {state['run_id']}\n\nstatus: {final}\n")
        workspace.write("run.json", json.dumps({"status": final, "repairs": len(state.get("repairs", []))}))
        workspace.commit("report: report.md and run.json", ["report.md", "run.json"])
        return {"results": {"report": {"status": final}}}

    def repair(state: VibeState, ctx: VibeContext) -> dict[str, Any]:
        before = _record(ctx, "repair")
        failure = state.get("failure")
        assert failure is not None, "repair ran without a failure"
        if script.fatal == "repair":
            raise VibeError("no LLM is configured to repair it (scripted)")
        if before < script.repair_fails:
            raise NodeFailed("the fix did not parse (scripted)")
        workspace = Workspace(state["workspace"])
        workspace.write(f"fix-{failure['node']}-{before}.txt", failure["error"])
        workspace.commit(f"repair({failure['node']}): scripted fix", [f"fix-{failure['node']}-{before}.txt"])
        return {"results": {"repair": {"summary": f"fixed {failure['node']}"}}}

    nodes: dict[str, NodeFn] = {
        "understand": understand,
        "generate": generate,
        "validate": check("validate"),
        "red_team": check("red_team"),
        "launch_and_watch": launch_and_watch,
        "report": report,
        "repair": repair,
    }
    return nodes


def _script_from_env() -> FakeScript:
    raw: Mapping[str, Any] = json.loads(os.environ.get(ENV_SCRIPT, "{}"))
    return FakeScript(**raw)


NODES = make_nodes(_script_from_env())
# the nodes that need a sandbox or a server, scripted; understand and generate stay real (planner, templates)
SANDBOXED = {name: fn for name, fn in NODES.items() if name not in ("understand", "generate")}
