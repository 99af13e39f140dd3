"""The vibe run drivers: start a run of the graph, resume one after a stop, a crash or a failure.

Durable: LangGraph's SqliteSaver checkpoints the state after every node in
`<workdir>/.vibe/checkpoints.sqlite` (thread id = run id, see runs.py), synchronously, so after
`kill -9` `resume_vibe` continues with the first node that had not finished; finished nodes never
run again. One process drives a run at a time (a lock file per run).

Seam for tests and experiments: `run_vibe(..., nodes={name: fn})` replaces nodes in-process;
the env var `AGENTJET_VIBE_NODES=module:attr` (a mapping of the same shape) does it for the CLI
(`agentjet.vibe.graph.resolve_nodes`).
"""

from __future__ import annotations

import json
import logging
import shutil
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from langchain_core.runnables import RunnableConfig
from langgraph.graph.state import CompiledStateGraph

from agentjet.core import check_model
from agentjet.vibe.context import NodeFn, VibeContext
from agentjet.vibe.errors import VibeError
from agentjet.vibe.graph import build_graph, resolve_nodes
from agentjet.vibe.progress import NullProgress, ProgressSink
from agentjet.vibe.runs import checkpoint_path, list_runs, lock_path, new_paths, open_checkpointer, remove_new, run_lock
from agentjet.vibe.state import RunStatus, VibeOptions, VibeState, initial_state, is_run_id, new_run_id

__all__ = ["RunResult", "check_request", "pending_nodes", "resume_vibe", "run_vibe"]

log = logging.getLogger(__name__)

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

    @property
    def outcome(self) -> str | None:
        """The held-out result in one line (before -> after, the interval, the verdict), once the report has it."""
        try:
            line = json.loads((self.workspace / "run.json").read_text()).get("outcome_line")
        except (OSError, ValueError, AttributeError):
            return None
        return line if isinstance(line, str) else None


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
    try:
        graph.invoke(start, config or _config(ctx.run_id), context=ctx, durability="sync")
    finally:  # also on Ctrl-C: a server validation started and no launch took is stopped
        ctx.close()
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


def check_request(sentence: str, options: VibeOptions) -> None:
    """Raise VibeError/ModelError for a request no run can start from (an empty sentence, a `--model` that
    is neither registered nor a model folder, a workdir that cannot be made), before anything is written or
    shown as a run."""
    if not sentence.strip():
        raise VibeError('say what to train, e.g. agentjet vibe "train a 7B to play werewolves"')
    if options.model is not None:
        check_model(options.model)
    check_workdir(Path(options.workdir))


def check_workdir(workdir: Path) -> None:
    """VibeError unless `workdir` is a folder or can be made one; writes nothing (a probe folder is removed)."""
    if workdir.exists():
        if not workdir.is_dir():
            raise VibeError(f"--workdir {workdir} is a file, not a folder")
        return
    parent = next(p for p in workdir.absolute().parents if p.exists())
    try:
        tempfile.TemporaryDirectory(dir=parent).cleanup()
    except OSError as exc:
        raise VibeError(f"--workdir {workdir} cannot be made in {parent}: {exc.strerror or exc}") from exc


def check_resume(run_id: str, workdir: Path | str) -> None:
    """VibeError unless `workdir` holds a checkpointed run `run_id` (said before the run's first progress line)."""
    workdir = Path(workdir).resolve()
    runs = list_runs(workdir) if workdir.is_dir() else []
    if run_id not in runs:
        known = ", ".join(runs[-5:]) or "none"
        raise VibeError(f"no vibe run {run_id!r} in {checkpoint_path(workdir)} (runs there: {known}); check --workdir")


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
    check_request(sentence, options)
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
    check_resume(run_id, workdir)
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
