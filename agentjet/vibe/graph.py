"""The vibe graph: understand -> generate -> validate -> red_team -> launch_and_watch -> report, plus bounded repair.

A node that fails in a repairable way (`NodeFailed` from generate, validate, red_team or
launch_and_watch) goes to `repair`, which fixes the workspace and sends the run back to the
failing node (a reward fixed after the red team is validated again first). Each node gets
`options.max_repairs` rounds; after that the run is failed and goes straight to `report`. A
refusal of the planner (or any failure before there is a plan) ends the run with nothing written.

Durable: LangGraph's SqliteSaver checkpoints the state after every node in
`<workdir>/.vibe/checkpoints.sqlite` (thread id = run id, see runs.py), synchronously, so after
`kill -9` `resume_vibe` continues with the first node that had not finished; finished nodes never
run again. One process drives a run at a time (a lock file per run).

Seam for tests and experiments: `run_vibe(..., nodes={name: fn})` replaces nodes in-process;
the env var `AGENTJET_VIBE_NODES=module:attr` (a mapping of the same shape) does it for the CLI.
"""

from __future__ import annotations

import importlib
import logging
import os
import shutil
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from langchain_core.runnables import RunnableConfig
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.runtime import Runtime

from agentjet.llm.chat import LLMError
from agentjet.vibe.context import NodeFailed, NodeFn, VibeContext
from agentjet.vibe.errors import PlanRefused, VibeError
from agentjet.vibe.progress import NullProgress, ProgressSink
from agentjet.vibe.runs import (
    CHECKPOINTS,
    checkpoint_path,
    list_runs,
    lock_path,
    new_paths,
    open_checkpointer,
    remove_new,
    run_lock,
)
from agentjet.vibe.state import (
    NODES,
    Failure,
    RepairRecord,
    RunStatus,
    VibeOptions,
    VibeState,
    initial_state,
    is_run_id,
    new_run_id,
)

__all__ = [
    "CHECKPOINTS",
    "ENV_NODES",
    "NEXT",
    "REPAIRABLE",
    "RESUME_AFTER_REPAIR",
    "RunResult",
    "build_graph",
    "checkpoint_path",
    "list_runs",
    "pending_nodes",
    "resume_vibe",
    "run_vibe",
]

log = logging.getLogger(__name__)

ENV_NODES = "AGENTJET_VIBE_NODES"  # "module:attr" naming a {node: fn} mapping that replaces real nodes
NEXT: dict[str, str] = {
    "understand": "generate",
    "generate": "validate",
    "validate": "red_team",
    "red_team": "launch_and_watch",
    "launch_and_watch": "report",
    "report": END,
}
REPAIRABLE = frozenset({"generate", "validate", "red_team", "launch_and_watch"})
RESUME_AFTER_REPAIR = {"red_team": "validate"}  # a repaired reward is validated again before the red team retries
_RECURSION_LIMIT = 500  # supersteps; the repair bound ends every run far below this

Graph = CompiledStateGraph[VibeState, VibeContext, VibeState, VibeState]


@dataclass(frozen=True)
class RunResult:
    """How a run ended (or stands, when it was interrupted), and where its files are."""

    run_id: str
    status: RunStatus
    workspace: Path
    message: str
    state: dict[str, Any]

    @property
    def report(self) -> Path | None:
        path = self.workspace / "report.md"
        return path if path.is_file() else None


# -- the node wrapper: timings, progress, failures -> state ---------------------------------------------------------


def _failed(name: str, state: VibeState, exc: NodeFailed) -> dict[str, Any]:
    """A repairable failure while rounds are left; otherwise the run is failed."""
    update: dict[str, Any] = {"errors": [f"{name}: {exc}"]}
    if exc.report is not None:
        update["results"] = {name: exc.report}
    rounds = state.get("repair_counts", {}).get(name, 0)
    update["failure"] = Failure(node=name, error=str(exc), logs=exc.logs)
    if name not in REPAIRABLE or rounds >= int(state["options"]["max_repairs"]):
        after = f" after {rounds} repair round(s)" if name in REPAIRABLE else ""
        update |= {"status": "failed", "message": f"{name} failed{after}: {exc}", "failed_at": name}
    return update


def _repaired(state: VibeState, update: dict[str, Any], error: NodeFailed | None) -> dict[str, Any]:
    """The repair's bookkeeping: one more round for the failing node, and where to go next."""
    failure = state.get("failure")
    if failure is None:
        raise VibeError("the repair node ran without a failure to repair (a graph bug)")
    node = failure["node"]
    attempt = state.get("repair_counts", {}).get(node, 0) + 1
    result = update.get("results", {}).get("repair", {})
    summary = f"repair failed: {error}" if error else str(result.get("summary", "") if isinstance(result, dict) else "")
    record = RepairRecord(node=node, attempt=attempt, error=failure["error"], summary=summary)
    update |= {"repair_counts": {node: attempt}, "repairs": [record]}
    if error is None:
        return update | {"failure": None, "resume_at": RESUME_AFTER_REPAIR.get(node, node)}
    update["errors"] = [f"repair({node}): {error}"]
    if attempt >= int(state["options"]["max_repairs"]):
        message = f"{node} failed and {attempt} repair round(s) did not fix it: {error}"
        update |= {"status": "failed", "message": message, "failed_at": node}
    return update


def _call(name: str, fn: NodeFn, state: VibeState, ctx: VibeContext) -> tuple[dict[str, Any], str, str]:
    """Run one node; returns (state update, outcome word, detail for the progress line)."""
    try:
        update = dict(fn(state, ctx))
    except NodeFailed as exc:
        if name == "repair":
            return _repaired(state, {}, exc), "failed", str(exc)
        return _failed(name, state, exc), "failed", str(exc)
    except PlanRefused as exc:
        return {"status": "refused", "message": str(exc)}, "refused", str(exc)
    except (VibeError, LLMError) as exc:
        failure = state.get("failure")
        failed_at = failure["node"] if name == "repair" and failure else name
        update = {"status": "failed", "message": f"{name}: {exc}", "errors": [f"{name}: {exc}"], "failed_at": failed_at}
        return update, "failed", str(exc)
    if name == "repair":
        update = _repaired(state, update, None)
        return update, "done", update["repairs"][0]["summary"]
    if state.get("status") == "running":
        update.setdefault("failure", None)
    if name == "report" and update.get("status", state.get("status")) == "running":
        update["status"] = "done"
    return update, "done", ""


def _node(name: str, fn: NodeFn) -> Callable[[VibeState, Runtime[VibeContext]], dict[str, Any]]:
    def run(state: VibeState, runtime: Runtime[VibeContext]) -> dict[str, Any]:
        ctx = runtime.context
        ctx.progress.node_started(name)
        log.info("vibe node started run=%s node=%s", ctx.run_id, name)
        started_at, t0 = time.time(), time.monotonic()
        update, outcome, detail = _call(name, fn, state, ctx)
        elapsed_s = time.monotonic() - t0
        before = state.get("timings", {}).get(name, {})
        update["timings"] = {
            name: {
                "started_at": before.get("started_at", started_at),
                "last_started_at": started_at,
                "elapsed_s": before.get("elapsed_s", 0.0) + elapsed_s,
                "runs": before.get("runs", 0) + 1,
            }
        }
        update["finished"] = [name]
        log.info("vibe node finished run=%s node=%s outcome=%s elapsed_s=%.2f", ctx.run_id, name, outcome, elapsed_s)
        ctx.progress.node_finished(name, outcome, elapsed_s, detail)
        return update

    run.__name__ = name
    return run


# -- routing ----------------------------------------------------------------------------------------------------------


def _route_from(name: str) -> Callable[[VibeState], str]:
    def route(state: VibeState) -> str:
        status = state.get("status")
        if status == "refused":
            return END
        if status == "failed":
            return "report" if name != "report" and state.get("spec") else END
        if state.get("failure"):
            return "repair"
        return NEXT[name]

    return route


def _route_after_repair(state: VibeState) -> str:
    if state.get("status") == "failed":
        return "report"
    if state.get("failure"):
        return "repair"
    return state.get("resume_at") or "report"


def build_graph(nodes: Mapping[str, NodeFn]) -> StateGraph[VibeState, VibeContext, VibeState, VibeState]:
    """Wire the nodes (every name in NODES plus "repair"); compile it with a checkpointer."""
    missing = [n for n in (*NODES, "repair") if n not in nodes]
    if missing:
        raise VibeError(f"vibe graph is missing node functions for {', '.join(missing)}")
    graph = StateGraph(VibeState, context_schema=VibeContext)
    for name in (*NODES, "repair"):
        # cast: langgraph's add_node overloads type-check differently from one langchain-core release to the next
        graph.add_node(name, cast(Any, _node(name, nodes[name])))
    graph.add_edge(START, "understand")
    for name in NODES:
        targets = sorted({NEXT[name], "repair", "report", END})
        graph.add_conditional_edges(name, _route_from(name), targets)
    graph.add_conditional_edges("repair", _route_after_repair, sorted({*REPAIRABLE, "repair", "report"}))
    return graph


def resolve_nodes(overrides: Mapping[str, NodeFn] | None = None) -> dict[str, NodeFn]:
    """The real nodes, then those named by $AGENTJET_VIBE_NODES, then `overrides` (later wins)."""
    from agentjet.vibe.nodes import real_nodes

    nodes: dict[str, NodeFn] = dict(real_nodes())
    spec = os.environ.get(ENV_NODES, "").strip()
    if spec:
        module, _, attr = spec.partition(":")
        try:
            found = getattr(importlib.import_module(module), attr or "NODES")
        except (ImportError, AttributeError) as exc:
            raise VibeError(f"{ENV_NODES}={spec!r} does not name a module:attr mapping of node functions") from exc
        nodes.update(cast(Mapping[str, NodeFn], found))
    nodes.update(overrides or {})
    return nodes


# -- durable runs -------------------------------------------------------------------------------------------------


def pending_nodes(run_id: str, workdir: Path | str) -> tuple[str, ...]:
    """The nodes a resume of `run_id` would run first (empty: it finished, or there is no such run)."""
    if run_id not in list_runs(workdir):
        return ()
    with open_checkpointer(workdir) as saver:
        graph: Graph = build_graph(resolve_nodes()).compile(checkpointer=saver)
        return tuple(graph.get_state(_config(run_id)).next)


def _config(run_id: str) -> RunnableConfig:
    return {"configurable": {"thread_id": run_id}, "recursion_limit": _RECURSION_LIMIT}


def _drive(graph: Graph, start: VibeState | None, ctx: VibeContext, config: RunnableConfig | None = None) -> VibeState:
    """Run from `start` (None: on from the checkpoint `config` names, default the newest) to the end."""
    graph.invoke(start, config or _config(ctx.run_id), context=ctx, durability="sync")
    return cast(VibeState, graph.get_state(_config(ctx.run_id)).values)


def _retry_point(graph: Graph, run_id: str, node: str) -> RunnableConfig | None:
    """The newest checkpoint of a failed run from which `node` ran (the history is a tree: a retry forks it)."""
    for snapshot in graph.get_state_history(_config(run_id)):
        if snapshot.next == (node,) and snapshot.values.get("status") == "running":
            return cast(RunnableConfig, {**snapshot.config, "recursion_limit": _RECURSION_LIMIT})
    return None


def _result(state: VibeState) -> RunResult:
    return RunResult(
        run_id=state["run_id"],
        status=state.get("status", "running"),
        workspace=Path(state["workspace"]),
        message=state.get("message", ""),
        state=dict(state),
    )


def _context(
    run_id: str, options: VibeOptions, workspace: Path, progress: ProgressSink | None, sandbox_factory: Any
) -> VibeContext:
    from agentjet.llm.chat import resolve_llm

    llm = resolve_llm(options.llm)
    return VibeContext(run_id, options, workspace, progress or NullProgress(), llm, sandbox_factory)


def run_vibe(
    sentence: str,
    options: VibeOptions | None = None,
    *,
    run_id: str | None = None,
    nodes: Mapping[str, NodeFn] | None = None,
    progress: ProgressSink | None = None,
    sandbox_factory: Any = None,
) -> RunResult:
    """Run the whole graph for `sentence`; the workspace is `<workdir>/<run_id>/`. Raises VibeError before it starts."""
    options = options or VibeOptions()
    if not sentence.strip():
        raise VibeError('say what to train, e.g. agentjet vibe "train a 7B to play werewolves"')
    run_id = run_id or new_run_id(sentence)
    if not is_run_id(run_id):
        raise VibeError(f"run id {run_id!r} must be lowercase letters, digits and -")
    workdir = Path(options.workdir).resolve()
    workspace = workdir / run_id
    if workspace.exists() or run_id in list_runs(workdir):
        raise VibeError(f"run {run_id} exists in {workdir}: resume it with --resume {run_id}")
    created = new_paths(checkpoint_path(workdir), lock_path(workdir, run_id))
    graph_nodes = resolve_nodes(nodes)
    ctx = _context(run_id, options, workspace, progress, sandbox_factory)
    with run_lock(workdir, run_id), open_checkpointer(workdir) as saver:
        graph: Graph = build_graph(graph_nodes).compile(checkpointer=saver)
        state = _drive(graph, initial_state(run_id, sentence, options, str(workspace)), ctx)
        ended_early = state.get("status") in ("refused", "failed") and not state.get("spec")
        if ended_early:  # refused, or no plan at all: nothing half-done stays behind
            saver.delete_thread(run_id)
    if ended_early:
        shutil.rmtree(workspace, ignore_errors=True)  # it did not exist before this run
        remove_new(created)
    return _result(state)


def resume_vibe(
    run_id: str,
    workdir: Path | str = "vibe-runs",
    *,
    nodes: Mapping[str, NodeFn] | None = None,
    progress: ProgressSink | None = None,
    sandbox_factory: Any = None,
) -> RunResult:
    """Continue run `run_id` from its last checkpoint: the node that was running when it stopped runs again.

    A run that failed is retried from the node that failed it (its earlier nodes are not run again);
    a finished or refused run is returned as it is."""
    workdir = Path(workdir).resolve()
    runs = list_runs(workdir)
    if run_id not in runs:
        known = ", ".join(runs[-5:]) or "none"
        raise VibeError(f"no vibe run {run_id!r} in {checkpoint_path(workdir)} (runs there: {known}); check --workdir")
    with run_lock(workdir, run_id), open_checkpointer(workdir) as saver:
        graph: Graph = build_graph(resolve_nodes(nodes)).compile(checkpointer=saver)
        snapshot = graph.get_state(_config(run_id))
        values = cast(VibeState, snapshot.values)
        start = None if snapshot.next else _retry_from(graph, values)
        if not snapshot.next and start is None:
            return _result(values)  # done, refused, or nothing to retry
        options = VibeOptions.model_validate(values["options"])
        ctx = _context(run_id, options, Path(values["workspace"]), progress, sandbox_factory)
        if start is not None:
            ctx.progress.log(f"the run had failed ({values.get('message', '')}): retrying {values.get('failed_at')}")
        log.info("vibe resume run=%s next=%s", run_id, ",".join(snapshot.next) or f"retry {values.get('failed_at')}")
        return _result(_drive(graph, None, ctx, start))


def _retry_from(graph: Graph, values: VibeState) -> RunnableConfig | None:
    """Where a resume of a failed run starts: the checkpoint before the node that failed it (None: not failed)."""
    node = values.get("failed_at")
    if values.get("status") != "failed" or not node:
        return None
    return _retry_point(graph, values["run_id"], node)
