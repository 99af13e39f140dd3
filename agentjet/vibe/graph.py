"""The vibe graph: understand -> generate -> validate -> red_team -> launch_and_watch -> report, plus bounded repair.

A node that fails in a repairable way (`NodeFailed` from generate, validate, red_team or
launch_and_watch) goes to `repair`, which fixes the workspace and sends the run back to the
failing node (a reward fixed after the red team is validated again first). Each node gets
`options.max_repairs` rounds; after that the run is failed and goes straight to `report`. A
refusal of the planner (or any failure before there is a plan) ends the run with nothing written.

This module wires the nodes (`build_graph`) and picks their functions (`resolve_nodes`: the real ones,
then `$AGENTJET_VIBE_NODES=module:attr`, then in-process overrides); `agentjet.vibe.driver` runs and
resumes the compiled graph with its checkpoints.
"""

from __future__ import annotations

import importlib
import logging
import os
import time
from collections.abc import Callable, Mapping
from typing import Any, cast

from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime

from agentjet.llm.chat import LLMError
from agentjet.vibe.context import NodeFailed, NodeFn, VibeContext
from agentjet.vibe.errors import PlanRefused, VibeError
from agentjet.vibe.state import NODES, Failure, RepairRecord, VibeState

__all__ = ["ENV_NODES", "NEXT", "REPAIRABLE", "RESUME_AFTER_REPAIR", "build_graph", "resolve_nodes"]

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
