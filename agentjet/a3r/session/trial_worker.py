"""The thread of one campaign trial: run it on its server, report each eval, tell the outcome, commit it.

Outcomes: the trial ends (COMPLETE, or PRUNED when the pruner says so at a report); it is *void*
(its server was lost, a `stop --now` interrupted it, or it crashed): FAIL with the reason and its
params and seed queued to run again (`resume.fail_and_requeue`); or it *fails* for a reason of its
own (a CampaignError/AgentJetError: a config the server refused, a task with no signal, a server
that is not fresh): FAIL, counted, not run again. The server is released as soon as `run_trial`
returns, before the study and git writes, so the pool's next trial does not wait for them.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import optuna
from optuna.trial import FrozenTrial, TrialState

from agentjet.a3r.errors import CampaignError, ServerLost
from agentjet.a3r.plan.campaign_plan import CampaignPlan, trial_setup
from agentjet.a3r.pool.members import PoolMember
from agentjet.a3r.pool.servers import ServerPool
from agentjet.a3r.repo import CampaignRepo
from agentjet.a3r.session.resume import fail_and_requeue
from agentjet.a3r.session.timing import TrialTiming
from agentjet.a3r.trial.records import FAIL_REASON, RETRIED, SERVER, STEPS_DONE, describe_params
from agentjet.a3r.trial.runner import TrialResult, run_trial
from agentjet.core import AgentJetError

__all__ = ["RunningTrial", "StopNow", "TrialContext", "run_trial_thread"]

log = logging.getLogger(__name__)


class StopNow(Exception):  # noqa: N818 - a signal that unwinds a trial, not an error
    """Raised from a trial's report callback when `stop --now` interrupts it."""


@dataclass
class RunningTrial:
    """A trial the scheduler asked for; `member` is set when it is launched on a server."""

    trial: optuna.Trial
    kind: str
    params: dict[str, Any]  # read once at ask time: optuna.Trial.params is a storage read
    seed: int
    ask_s: float
    tags: dict[str, Any] = field(default_factory=dict)  # user attrs its thread writes first (kind, seed, worker)
    attrs: dict[str, Any] = field(default_factory=dict)  # all its user attrs once tagged
    member: PoolMember | None = None
    launched_at: float = 0.0
    step: int = 0
    value: float | None = None
    report_s: float = 0.0  # study writes while the server is held: its tags, then each report + should_prune

    def status(self) -> dict[str, Any]:
        """What the heartbeat file says about it (`agentjet campaign status` shows it live)."""
        return {
            "number": self.trial.number, "kind": self.kind, "server": self.member.name if self.member else None,
            "params": self.params, "step": self.step, "value": self.value,
            "elapsed_s": round(time.perf_counter() - self.launched_at, 1),
        }  # fmt: skip


@dataclass(frozen=True)
class TrialContext:
    """What a trial thread shares with its campaign session."""

    plan: CampaignPlan
    repo: CampaignRepo
    study: optuna.Study
    pool: ServerPool
    repo_id: str
    max_attempts: int
    stop_now: threading.Event
    export: Callable[[], dict[str, Any]]  # the study as JSON, for the commit
    say: Callable[[str], None]


def run_trial_thread(ctx: TrialContext, run: RunningTrial) -> tuple[TrialTiming, BaseException | None]:
    """Run, release the server, tell, commit. Returns the timing, and the exception of a crash (a bug)."""
    assert run.member is not None
    member = run.member
    crash: BaseException | None = None
    try:
        _tag(ctx, run)
        outcome: tuple[str, Any] = ("done", _run(ctx, run, member))
    except ServerLost as exc:
        ctx.pool.mark_down(member, exc.reason)
        outcome = ("void", f"server {exc.server} was lost: {exc.reason}")
    except StopNow:
        outcome = ("void", "interrupted by a stop request (stop --now)")
    except (CampaignError, AgentJetError) as exc:
        outcome = ("failed", f"{type(exc).__name__}: {exc}")
    except Exception as exc:  # a bug: the trial is void (its params run again on resume); the campaign stops
        log.exception("trial %d crashed", run.trial.number)
        outcome, crash = ("void", f"the trial crashed: {type(exc).__name__}: {exc}"), exc
    ended = time.perf_counter()
    ctx.pool.release(member)
    return _conclude(ctx, run, member, outcome, ended), crash


def _tag(ctx: TrialContext, run: RunningTrial) -> None:
    """The trial's attrs and config.yaml (before the run, so a killed campaign leaves them), written
    here rather than by the prefetch thread, which must be quick to have the next trial ready."""
    started = time.perf_counter()
    for key, value in run.tags.items():
        run.trial.set_user_attr(key, value)
    ctx.repo.write_config(run.trial.number, ctx.plan, run.params, run.attrs)
    run.report_s += time.perf_counter() - started


def _run(ctx: TrialContext, run: RunningTrial, member: PoolMember) -> TrialResult:
    plan = ctx.plan
    return run_trial(
        member, trial_setup(plan, run.params), task=plan.task, steps=plan.budget.steps_per_trial,
        eval_every=plan.budget.eval_every, eval_items=plan.budget.eval_items, seed=run.seed,
        report=lambda step, value: _report(ctx, run, step, value), metric=plan.objective.metric,
        eval_seed=plan.seeds.base, out_dir=ctx.repo.trial_dir(run.trial.number),
    )  # fmt: skip


def _report(ctx: TrialContext, run: RunningTrial, step: int, value: float) -> bool:
    """Each eval: into the study, and ask the pruner (never for confirmation re-runs)."""
    started = time.perf_counter()
    if ctx.stop_now.is_set():
        raise StopNow
    run.trial.report(value, step)  # Optuna's storages are thread-safe
    pruner = ctx.plan.pruner  # the median pruner never prunes before warmup_steps: skip asking it
    prune = run.kind == "search" and pruner.name != "none" and step >= pruner.warmup_steps and run.trial.should_prune()
    run.step, run.value = step, value
    run.report_s += time.perf_counter() - started
    return prune


def _conclude(
    ctx: TrialContext, run: RunningTrial, member: PoolMember, outcome: tuple[str, Any], ended: float
) -> TrialTiming:
    kind, detail = outcome
    trial = run.trial
    started = time.perf_counter()
    decision = None
    trial.set_user_attr(SERVER, member.name)
    trial.set_user_attr(STEPS_DONE, detail.steps_done if isinstance(detail, TrialResult) else run.step)
    if kind == "done":
        frozen = _tell_done(ctx.study, trial, detail)
    elif kind == "void":  # tell, then enqueue: the scheduler waits while this trial is still running
        frozen = fail_and_requeue(
            ctx.study, trial, str(detail), repo_id=ctx.repo_id, max_attempts=ctx.max_attempts,
            base_seed=ctx.plan.seeds.base, extra_attrs=run.tags,
        )  # fmt: skip
        decision = f"trial {trial.number} is void: {detail}; " + (
            "its params and seed are queued to run again" if frozen.user_attrs.get(RETRIED)
            else f"it ran {ctx.max_attempts} times, so the failure stands"
        )  # fmt: skip
    else:
        trial.set_user_attr(FAIL_REASON, str(detail))
        frozen = ctx.study.tell(trial, state=TrialState.FAIL)
    told = time.perf_counter()
    ctx.repo.record_trial(frozen, ctx.plan, ctx.export, decision=decision)
    ctx.say(f"trial {trial.number} on {member.name}: {describe_params(run.params)} -> {_outcome(frozen)}")
    return TrialTiming(
        trial.number, member.name, frozen.state.name, run.ask_s, run.report_s, ended - run.launched_at,
        told - started, time.perf_counter() - told, run.launched_at, ended,
    )  # fmt: skip


def _tell_done(study: optuna.Study, trial: optuna.Trial, result: TrialResult) -> FrozenTrial:
    if result.pruned:
        return study.tell(trial, state=TrialState.PRUNED)
    if math.isnan(result.value) or math.isinf(result.value):
        trial.set_user_attr(FAIL_REASON, f"the objective was {result.value}")
        return study.tell(trial, state=TrialState.FAIL)
    return study.tell(trial, result.value)


def _outcome(trial: FrozenTrial) -> str:
    if trial.state is TrialState.COMPLETE and trial.value is not None:
        return f"{trial.value:.4f}"
    reason = trial.user_attrs.get(FAIL_REASON)
    return trial.state.name.lower() + (f" ({reason})" if reason else "")
