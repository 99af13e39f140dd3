"""The real vibe nodes: thin adapters from the graph's `(state, ctx) -> dict` contract to the planner,
generator, validator, red team, repairer, launcher/watcher and reporter.

Each adapter loads what it needs from the state (the spec as a dict, the workspace path), calls
its module, and returns JSON-able results; a check that failed in a repairable way becomes
`NodeFailed` with the log tail the repair prompt needs. Modules are imported inside each node:
a run pays only for what it reaches (litellm, torch and the sandbox load slowly).
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentjet.vibe.context import NodeFailed, NodeFn, VibeContext
from agentjet.vibe.errors import VibeError
from agentjet.vibe.state import RepairRecord, VibeState

if TYPE_CHECKING:
    from agentjet.sandbox import SwarmAccess
    from agentjet.vibe.plan.spec import TaskSpec
    from agentjet.vibe.run.launch_options import LaunchOptions
    from agentjet.vibe.run.trouble import Finding
    from agentjet.vibe.run.watch import Regenerate
    from agentjet.vibe.workspace import Workspace

__all__ = [
    "client_regenerator",
    "generate",
    "launch_and_watch",
    "real_nodes",
    "red_team",
    "repair",
    "report",
    "understand",
    "validate",
]

TASK_FILE = "task.yaml"


def _assumption_text(spec: TaskSpec) -> str:
    lines = [f"Planner: {spec.planner}. Family: {spec.family} {spec.params or ''}".rstrip()]
    lines.append(f"Model: {spec.model}" + (f" ({spec.model_note})" if spec.model_note else ""))
    lines += [f"- {assumption}" for assumption in spec.assumptions]
    return "\n".join(lines)


def understand(state: VibeState, ctx: VibeContext) -> dict[str, Any]:
    """Plan the task from the sentence; only a plan that worked, and can launch, creates the workspace."""
    from agentjet.vibe.plan.planner import plan
    from agentjet.vibe.plan.spec import save_spec
    from agentjet.vibe.workspace import Workspace

    options = ctx.options
    spec = plan(state["sentence"], llm=ctx.llm, **options.plan_flags())
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


def _spec(state: VibeState) -> TaskSpec:
    from agentjet.vibe.plan.spec import TaskSpec

    if not state.get("spec"):
        raise VibeError("this step needs the task spec, and the run has none (understand did not finish)")
    return TaskSpec.model_validate(state["spec"])


def _workspace(state: VibeState) -> Workspace:
    from agentjet.vibe.workspace import Workspace

    return Workspace(Path(state["workspace"])).init()


def _started_at(state: VibeState) -> float:
    """When the run began (wall clock): the first node's start, kept in the checkpoint across resumes."""
    starts = [t["started_at"] for t in state.get("timings", {}).values() if "started_at" in t]
    return min(starts) if starts else time.time()


def generate(state: VibeState, ctx: VibeContext) -> dict[str, Any]:
    """Write client, reward, dataset and tests (a template, or the LLM for a generated task)."""
    from agentjet.vibe.generate.generator import generate as generate_files

    spec = _spec(state)
    sandbox = ctx.sandbox() if spec.is_generated else None  # only LLM-written dataset.py needs one
    files = generate_files(spec, _workspace(state), llm=ctx.llm, sandbox=sandbox, max_rounds=ctx.options.max_repairs)
    ctx.progress.log(f"generated {', '.join(files.paths)} ({files.source})")
    return {"results": {"generate": files.to_dict()}}


def validate(state: VibeState, ctx: VibeContext) -> dict[str, Any]:
    """Tests, dataset schema, dry and real episodes in the sandbox; a failed check goes to repair."""
    from agentjet.vibe.check.validate import Check
    from agentjet.vibe.check.validate import validate as run_checks

    def said(check: Check) -> None:
        took = f" ({check.seconds:.1f}s)" if check.seconds else ""
        ctx.progress.log(f"validate {check.name}: {'ok' if check.ok else 'FAILED'}: {check.summary}{took}")

    from agentjet.vibe.run.early_server import discard_stale, start_beside_checks, start_early

    spec, workspace = _spec(state), _workspace(state)
    options = _launch_options(spec)
    ctx.stop_beside()  # validated again (after a repair): what was held beside the last checks stops
    discard_stale(workspace, ctx.progress.log)  # ... and is never trained on, when the files changed since
    if ctx.run_server is None:  # the run's own server, starting while the first checks run; the launch takes it
        ctx.run_server = start_early(workspace, options, ctx.progress.log)

    def checked(check: Check) -> None:  # once the dry run passes, training starts beside the rest, held still
        said(check)
        if check.name == "dry_run" and check.ok and ctx.run_server is not None:
            ctx.beside = start_beside_checks(
                workspace, options, ctx.run_server, started_at=_started_at(state), progress=ctx.progress.log
            )
            if ctx.beside is not None:
                ctx.run_server = None  # the held training owns the server now

    def server() -> SwarmAccess:
        if ctx.beside is not None:
            return ctx.beside.access()
        if ctx.run_server is None:
            raise VibeError("the run's server is not running")
        return ctx.run_server.access()

    report = run_checks(workspace, spec, sandbox=ctx.sandbox(), server=server, on_check=checked)
    if not report.ok:
        ctx.stop_beside()
        failed = ", ".join(f"{c.name} ({c.summary})" for c in report.failures)
        raise NodeFailed(f"validation failed: {failed}", logs=report.logs(), report=report.to_dict())
    return {"results": {"validate": report.to_dict()}}


def red_team(state: VibeState, ctx: VibeContext) -> dict[str, Any]:
    """Degenerate policies against the reference; a hackable (or unjudgeable) reward goes to repair."""
    from agentjet.vibe.check.redteam import red_team as attack

    report = attack(_workspace(state), _spec(state), sandbox=ctx.sandbox())
    ctx.progress.log(f"red team: {report.verdict}: {report.reason}")
    if not report.ok:
        ctx.stop_beside()  # the reward may change: nothing played beside the checks is trained on
        raise NodeFailed(
            f"red team: {report.verdict}: {report.reason}", logs=report.evidence(), report=report.to_dict()
        )
    return {"results": {"red_team": report.to_dict()}}


def repair(state: VibeState, ctx: VibeContext) -> dict[str, Any]:
    """One repair round of the failing node's files (the LLM's fix, committed)."""
    from agentjet.vibe.repair import repair as fix

    failure = state.get("failure")
    if failure is None:
        raise VibeError("the repair step ran without a failure to repair")
    node = failure["node"]
    attempt = state.get("repair_counts", {}).get(node, 0) + 1
    spec, workspace = _spec(state), _workspace(state)
    result = fix(
        node, failure["error"], failure["logs"], workspace, spec, ctx.llm, attempt, max_attempts=ctx.options.max_repairs
    )
    ctx.progress.log(f"repair({node}) {attempt}: {result.summary}")
    return {"results": {"repair": result.to_dict()}}


def client_regenerator(state: VibeState, ctx: VibeContext, records: list[RepairRecord]) -> Regenerate | None:
    """The watcher's hook: the LLM repairs the client from the trouble's evidence (None without an LLM:
    a template rendered again is the same file, so the watcher tries its other remedies)."""
    from agentjet.vibe.repair import repair as fix

    if ctx.llm is None:
        return None
    spec, workspace = _spec(state), _workspace(state)

    def regenerate(finding: Finding) -> Path | None:
        attempt = len(records) + 1
        try:
            result = fix("launch_and_watch", finding.detail, finding.evidence, workspace, spec, ctx.llm, attempt,
                         max_attempts=ctx.options.max_repairs)  # fmt: skip
        except VibeError as exc:  # NodeFailed (unusable reply) or RepairStopped: no new client this time
            ctx.progress.log(f"could not regenerate the client: {exc}")
            return None
        records.append(RepairRecord(node="launch_and_watch", attempt=attempt, error=finding.detail,
                                    summary=f"client regenerated and hot-swapped: {result.summary}"))  # fmt: skip
        return workspace.file("client.py")

    return regenerate


def _launch_options(spec: TaskSpec) -> LaunchOptions:
    """What the run trains and where, from its spec (the early server and the launch read the same)."""
    from agentjet.vibe.run.launch_options import LaunchOptions
    from agentjet.vibe.run.recipe import greedy_params, train_config_for

    return LaunchOptions(
        model=spec.model,
        steps=spec.budget.steps,
        seed=spec.dataset.seed,
        train_config=train_config_for(spec.train),
        eval_episodes=spec.dataset.eval_items,
        eval_params=greedy_params(spec),
        policies=() if spec.shares_one_policy else tuple(p.name for p in spec.policies),  # one server each
    )


def launch_and_watch(state: VibeState, ctx: VibeContext) -> dict[str, Any]:
    """Start (or adopt, after a resume) the server, run the sandboxed client to the target step, watch and act."""
    from agentjet.vibe.run.evaluation import HeldOutEval
    from agentjet.vibe.run.launch import launch, stop
    from agentjet.vibe.run.swarm_server import stop_server
    from agentjet.vibe.run.watch import WatchSettings, catch_up, training_record, watch

    spec, started = _spec(state), _started_at(state)
    minutes = spec.budget.minutes
    pending, ctx.run_server = ctx.run_server, None  # from here the launch owns it (a later validate starts anew)
    beside, ctx.beside = ctx.beside, None
    records: list[RepairRecord] = []
    if beside is not None:  # training began beside the checks, which passed: it may update now
        run = beside.release()
    else:
        prepared = pending.take() if pending is not None else None  # validation's server, when it still runs
        try:
            run = launch(
                _workspace(state), options=_launch_options(spec), started_at=started, progress=ctx.progress.log,
                server=prepared,
            )  # fmt: skip
        except BaseException:  # the launch failed (it may have stopped the server itself): none is left running
            if prepared is not None and prepared.is_alive():
                stop_server(prepared)
            raise
    try:
        evaluation = HeldOutEval(run, spec.success_metric, every_steps=spec.dataset.eval_every)
        evaluation.before()

        def said(line: dict[str, Any]) -> None:
            ctx.progress.train_step(int(line["step"]), _reward(line))

        result = watch(
            run,
            settings=WatchSettings(budget_s=minutes * 60 if minutes else None, keep_lr=bool(spec.train)),
            regenerate=client_regenerator(state, ctx, records),
            on_step=said,
            on_poll=evaluation.poll,
        )
        if result.status != "failed":
            evaluation.after(on_settled=lambda: catch_up(run, result, said))  # an update under way lands first
        outcome, apart = evaluation.outcome(), evaluation.outcomes()
        for name, each in apart.items() or [(None, outcome)]:
            ctx.progress.log(f"outcome{'' if name is None else f' of policy {name}'}: {each.sentence()}")
        record = training_record(run, result) | {"outcome": outcome.to_dict()}
        if apart:
            record["policy_outcomes"] = {name: each.to_dict() for name, each in apart.items()}
    finally:
        stop(run)
    if result.status == "failed":
        raise NodeFailed(f"training stopped: {result.reason}", logs=_evidence(record), report=record)
    first = record.get("time_to_first_step_s")
    ctx.progress.log(f"trained to step {record['steps']}" + (f"; first step after {first:.1f} s" if first else ""))
    return {"results": {"launch_and_watch": record}, "repairs": records}


def _reward(line: Mapping[str, Any]) -> float | None:
    value = line.get("reward_mean")
    return float(value) if isinstance(value, int | float) else None


def _evidence(record: Mapping[str, Any]) -> str:
    findings = record.get("findings") or []
    return "\n\n".join(f"{f.get('detail', '')}\n{f.get('evidence', '')}".strip() for f in findings[-3:])


def report(state: VibeState, ctx: VibeContext) -> dict[str, Any]:
    """report.md, run.json and curves.png from the state (a failed run is reported too)."""
    from agentjet.vibe.report.writer import ReportInput, write_report

    results = state.get("results", {})
    final = "failed" if state.get("status") == "failed" else "done"
    data = ReportInput(
        sentence=state["sentence"],
        status=final,
        started_at=_started_at(state),
        run_id=state["run_id"],
        message=state.get("message", ""),
        spec=state.get("spec"),
        generated=results.get("generate"),
        validation=results.get("validate"),
        red_team=results.get("red_team"),
        repairs=state.get("repairs", []),
        training=results.get("launch_and_watch"),
        timings=state.get("timings", {}),
    )
    files = write_report(_workspace(state), data)
    summary = json.loads(files["run.json"].read_text())
    keep = ("status", "time_to_first_step_s", "total_s", "steps", "repairs")
    return {"results": {"report": {k: summary.get(k) for k in keep} | {"files": sorted(files)}}}


def real_nodes() -> dict[str, NodeFn]:
    """The production node functions by name."""
    return {
        "understand": understand,
        "generate": generate,
        "validate": validate,
        "red_team": red_team,
        "launch_and_watch": launch_and_watch,
        "report": report,
        "repair": repair,
    }
