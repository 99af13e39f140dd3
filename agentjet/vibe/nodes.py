"""The real vibe nodes: thin adapters from the graph's `(state, ctx) -> dict` contract to the planner,
generator, validator, red team, repairer, launcher/watcher and reporter.

Each adapter loads what it needs from the state (the spec as a dict, the workspace path), calls
its module, and returns JSON-able results; a check that failed in a repairable way becomes
`NodeFailed` with the log tail the repair prompt needs. Modules are imported inside each node:
a run pays only for what it reaches (litellm, torch and the sandbox load slowly).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agentjet.vibe.context import NodeFn, VibeContext
from agentjet.vibe.errors import VibeError
from agentjet.vibe.state import VibeState

__all__ = ["real_nodes", "understand"]

TASK_FILE = "task.yaml"


def _assumption_text(spec: Any) -> str:
    lines = [f"Planner: {spec.planner}. Family: {spec.family} {spec.params or ''}".rstrip()]
    lines.append(f"Model: {spec.model}" + (f" ({spec.model_note})" if spec.model_note else ""))
    lines += [f"- {assumption}" for assumption in spec.assumptions]
    return "\n".join(lines)


def understand(state: VibeState, ctx: VibeContext) -> dict[str, Any]:
    """Plan the task from the sentence; only a plan that worked creates the workspace (task.yaml + decision)."""
    from agentjet.vibe.planner import plan
    from agentjet.vibe.spec import save_spec
    from agentjet.vibe.workspace import Workspace

    options = ctx.options
    spec = plan(
        state["sentence"], llm=ctx.llm, model=options.model, steps=options.steps, minutes=options.budget_minutes
    )
    workspace = Workspace(Path(state["workspace"])).init()
    save_spec(spec, workspace.file(TASK_FILE))
    workspace.commit(f"understand: task spec ({spec.family}, {spec.model})", [TASK_FILE])
    workspace.log_decision("understand", _assumption_text(spec))
    ctx.progress.log(f"{spec.family} task {spec.name!r} on {spec.model} ({spec.planner} planner)")
    summary = {
        "family": spec.family,
        "name": spec.name,
        "model": spec.model,
        "model_note": spec.model_note,
        "planner": spec.planner,
        "assumptions": list(spec.assumptions),
    }
    return {"spec": spec.model_dump(mode="json"), "results": {"understand": summary}}


def _not_built(name: str) -> NodeFn:
    def node(state: VibeState, ctx: VibeContext) -> dict[str, Any]:
        raise VibeError(f"the {name} node is not built yet")

    return node


def real_nodes() -> dict[str, NodeFn]:
    """The production node functions by name."""
    nodes: dict[str, NodeFn] = {"understand": understand}
    for name in ("generate", "validate", "red_team", "launch_and_watch", "report", "repair"):
        nodes[name] = _not_built(name)
    return nodes
