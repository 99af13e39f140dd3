"""The campaign scheduler: runs a session's trials on the pool until the plan's budget is spent, then confirms the best.

1. One thread per trial, each on a server acquired from the pool. A helper thread
   (`agentjet.a3r.session.prefetch`) asks the study ahead while every server is busy, so a freed server
   starts its next trial at once; a trial reports each eval (`trial.report`, `should_prune`) and is told
   COMPLETE / PRUNED / FAIL when it ends; its files are committed (`agentjet.a3r.repo`);
2. a trial whose server is lost (`ServerLost`) is failed with the reason and its params and seed
   queued to run on another server (the pool restarts a local server, drops a remote one until
   its heartbeat answers again);
3. stops starting fresh trials at `budget.trials` (search trials that count: not void) or
   `budget.wall_clock` (active campaign time, summed over sessions); queued re-runs still run;
4. then re-runs the best search trial's params `seeds.confirm` times with fresh seeds, each paired
   with a run of the plan's base config on the same seed (`kind: confirm` / `baseline` trials,
   never pruned), and logs the outcome in decisions.md.
A stop request (`stop`, or the STOP file: `poll_stop`) drains: no new trial starts, running ones finish;
`now` also interrupts them at their next report (failed, params queued for the next resume).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any

import optuna
from optuna.trial import FrozenTrial, TrialState

from agentjet.a3r.errors import CampaignError
from agentjet.a3r.plan.campaign_plan import CampaignPlan, search_space_distributions
from agentjet.a3r.pool.members import MemberState, PoolMember
from agentjet.a3r.pool.servers import ServerPool
from agentjet.a3r.repo import CampaignRepo
from agentjet.a3r.session.decisions import best_search, finish_summary
from agentjet.a3r.session.lock import StopMode, stop_requested
from agentjet.a3r.session.prefetch import Prefetcher
from agentjet.a3r.session.resume import BASELINE_RUNS, fail_and_requeue, queue_confirmations
from agentjet.a3r.session.study import search_budget, suggest_all
from agentjet.a3r.session.timing import TrialTiming
from agentjet.a3r.session.trial_worker import RunningTrial, TrialContext, run_trial_thread
from agentjet.a3r.trial.records import CONFIRM_OF, KIND, REPO_ID, SEED, WORKER, describe_params, is_void

__all__ = ["FINISHED", "Scheduler", "SessionLink"]

log = logging.getLogger(__name__)
FINISHED = "finished"  # study user attr: the campaign ran to its end (search and confirmation)
_POLL_S = 0.25


@dataclass(frozen=True)
class SessionLink:
    """What the scheduler uses of its campaign session, which owns each of these."""

    plan: CampaignPlan
    repo: CampaignRepo
    study: optuna.Study
    repo_id: str
    worker: str  # the session lock's worker name, tagged on each trial it asks
    shared: bool  # other campaign workers run trials on the study too (an RDB storage)
    study_lock: AbstractContextManager[Any]  # the study against this process's other threads
    locked: Callable[[], AbstractContextManager[optuna.Study]]  # ... and against every worker sharing it
    export: Callable[[], dict[str, Any]]
    say: Callable[[str], None]
    active_s: Callable[[], float]  # campaign time used so far, summed over sessions


class Scheduler:
    """Runs the trials of one session: owns the running trials and their threads, the timings, the stop
    mode, and where the search stands (`phase`)."""

    def __init__(self, session: SessionLink, *, max_attempts: int, baseline: bool, pool_wait_s: float) -> None:
        self._session = session
        self._plan = session.plan
        self._max_attempts = max_attempts
        self._baseline = baseline
        self._pool_wait_s = pool_wait_s
        self._dists = search_space_distributions(self._plan)
        self._budget = search_budget(self._plan)
        self._changed = threading.Condition()
        self._running: dict[int, RunningTrial] = {}
        self._threads: list[threading.Thread] = []
        self._timings: list[TrialTiming] = []
        self._stop: StopMode | None = None
        self._stop_now = threading.Event()
        self._crash: BaseException | None = None
        self._said_clock = False
        self._launched = 0  # trials this session started
        self._no_server_since: float | None = None
        self.phase = "starting"

    # -- what the session reads --------------------------------------------------------------------

    @property
    def stopped(self) -> StopMode | None:
        """How the session was asked to stop (None: it was not)."""
        return self._stop

    @property
    def timings(self) -> list[TrialTiming]:
        with self._changed:
            return sorted(self._timings, key=lambda t: t.number)

    def running_status(self) -> list[dict[str, Any]]:
        """The running trials as the heartbeat file shows them."""
        with self._changed:
            return [r.status() for _, r in sorted(self._running.items())]

    def pending(self) -> bool:
        """Anything to run in this session: queued trials, search budget, or the confirmation."""
        if self._session.study.user_attrs.get(FINISHED):
            return False
        return self._has_work() or self._confirmation_due()

    # -- stopping --------------------------------------------------------------------------------

    def stop(self, *, now: bool = False) -> None:
        """Start no new trial; with `now`, also interrupt the running ones at their next report."""
        self._stop = "now" if now or self._stop == "now" else "drain"
        if now:
            self._stop_now.set()
        with self._changed:
            self._changed.notify_all()

    def poll_stop(self) -> None:
        """Follow a stop request in the STOP file (`agentjet campaign stop`)."""
        mode = stop_requested(self._session.repo.runtime_dir)
        if mode is not None and (self._stop is None or (mode == "now" and self._stop != "now")):
            self._session.say(f"stop requested ({mode})")
            self.stop(now=mode == "now")

    def join_trials(self) -> None:
        for thread in list(self._threads):
            thread.join()

    # -- what is left --------------------------------------------------------------------------

    def _clock_left(self) -> bool:
        limit = self._plan.budget.wall_clock_s
        if limit is None or self._session.active_s() < limit:
            return True
        if not self._said_clock:
            self._said_clock = True
            self._session.repo.add_decision(
                f"wall clock budget {self._plan.budget.wall_clock} reached: no new search trials"
            )
        return False

    def _counts(self) -> tuple[int, int]:
        """(trials waiting in the queue, search trials that count against the budget)."""
        trials = self._session.study.get_trials(deepcopy=False)
        waiting = sum(t.state is TrialState.WAITING for t in trials)
        counted = sum(t.user_attrs.get(KIND, "search") == "search" and not is_void(t) for t in trials)
        return waiting, counted

    def _has_work(self) -> bool:
        if self._stop is not None:
            return False
        waiting, counted = self._counts()
        search_left = self._budget is None or counted < self._budget
        return waiting > 0 or (search_left and self._clock_left())

    def _others_running(self) -> bool:
        """Trials other campaign workers run on a shared (RDB) study: the search is not over before they end.
        A worker that died leaves its trials RUNNING until its own repo resumes."""
        if not self._session.shared:
            return False
        running = self._session.study.get_trials(deepcopy=False, states=(TrialState.RUNNING,))
        return any(t.number not in self._running for t in running)

    def _confirmation_due(self) -> bool:
        return self._plan.seeds.confirm > 0 and CONFIRM_OF not in self._session.study.user_attrs

    # -- the loop ------------------------------------------------------------------------------

    def run(self, pool: ServerPool) -> None:
        """Hand trials to `pool`'s servers until the budget and the confirmation are done, or a stop."""
        self.phase = "search"
        ctx = self._trial_context(pool)
        asker = Prefetcher(self._ask_if_work, self._changed, name="campaign-ask")
        run: RunningTrial | None = None
        try:
            while True:
                self._raise_crash(asker.error)
                self.poll_stop()
                if run is not None and self._stop == "now":  # asked, never launched: void like a running one
                    self._void_unlaunched(run, "stopped before it started (stop --now)")
                    run = None
                if run is None:
                    if asker.pending:
                        self._wait_for_change()
                    elif (run := asker.take()) is not None:
                        asker.request()  # one more ready while this one waits for a server
                    elif self._has_work():
                        asker.request()
                    elif self._running or self._others_running():
                        self._wait_for_change()
                    elif self._stop is not None or not self._begin_confirmation():
                        return
                    continue
                member = self._acquire(pool)
                if member is not None and self._stop == "now":  # came while waiting for a server
                    pool.release(member)
                elif member is not None:
                    self._launch(run, member, ctx)
                    run = None
        finally:
            left = [r for r in (asker.close(), run) if r is not None]  # only after an error
            for unlaunched in left:
                try:
                    self._void_unlaunched(unlaunched, "the session ended before it started")
                except Exception:  # the error in flight matters more; resume voids it anyway
                    log.exception("could not fail trial %d, asked but never launched", unlaunched.trial.number)

    def _trial_context(self, pool: ServerPool) -> TrialContext:
        session = self._session
        return TrialContext(
            session.plan, session.repo, session.study, pool, session.repo_id, self._max_attempts, self._stop_now,
            session.export, session.say,
        )  # fmt: skip

    def _ask_if_work(self) -> RunningTrial | None:
        return self._ask() if self._stop is None and self._has_work() else None

    def _void_unlaunched(self, run: RunningTrial, reason: str) -> None:
        frozen = fail_and_requeue(
            self._session.study, run.trial, reason, repo_id=self._session.repo_id, max_attempts=self._max_attempts,
            base_seed=self._plan.seeds.base, extra_attrs=run.tags,
        )  # fmt: skip
        self._session.repo.record_trial(frozen, self._plan, self._session.export)

    def _wait_for_change(self) -> None:
        with self._changed:
            self._changed.wait(_POLL_S)

    def _raise_crash(self, error: BaseException | None = None) -> None:
        self._crash = self._crash or error
        if self._crash is not None:
            self.stop(now=True)
            self.join_trials()
            raise CampaignError(f"the campaign stopped after an internal error: {self._crash!r}") from self._crash

    def _acquire(self, pool: ServerPool) -> PoolMember | None:
        try:
            return pool.acquire(timeout=_POLL_S)
        except CampaignError:
            if any(m.busy or m.state in (MemberState.UP, MemberState.STARTING) for m in pool.members):
                self._no_server_since = None
                return None
            since = self._no_server_since or time.monotonic()
            self._no_server_since = since
            if time.monotonic() - since > self._pool_wait_s:
                raise CampaignError(
                    f"no pool server has been up for {self._pool_wait_s:.0f} s: {pool.describe()}"
                ) from None
            return None

    def _ask(self) -> RunningTrial:
        """The next trial: a queued one (a re-run, a confirmation) first, else a fresh sample. Runs in the
        prefetch thread; it claims the trial for this repo (`repo_id`: this repo runs it, whoever queued
        it) and leaves the other attrs to the trial's thread, so the next ask comes sooner."""
        session = self._session
        started = time.perf_counter()
        with session.study_lock:
            trial = session.study.ask()
            queued = dict(trial.user_attrs)
            trial.set_user_attr(REPO_ID, session.repo_id)
            params = {} if queued.get(KIND) == "baseline" else suggest_all(trial, self._dists)
        tags = {} if KIND in queued else {KIND: "search", SEED: self._plan.seeds.base + trial.number}
        tags[WORKER] = session.worker
        return RunningTrial(
            trial, str({**queued, **tags}[KIND]), params, int({**queued, **tags}[SEED]),
            time.perf_counter() - started, tags=tags, attrs={**queued, **tags, REPO_ID: session.repo_id},
        )  # fmt: skip

    def _launch(self, run: RunningTrial, member: PoolMember, ctx: TrialContext) -> None:
        run.member = member
        run.launched_at = time.perf_counter()
        self._launched += 1
        with self._changed:
            self._running[run.trial.number] = run
        thread = threading.Thread(target=self._trial_thread, args=(ctx, run), name=f"trial-{run.trial.number}")
        self._threads = [t for t in self._threads if t.is_alive()] + [thread]
        thread.start()

    def _trial_thread(self, ctx: TrialContext, run: RunningTrial) -> None:
        crash: BaseException | None = None
        try:
            timing, crash = run_trial_thread(ctx, run)
            with self._changed:
                self._timings.append(timing)
        except Exception as exc:  # the study or git write failed: stop rather than lose track
            log.exception("recording trial %d failed", run.trial.number)
            crash = exc
        finally:
            with self._changed:
                self._running.pop(run.trial.number, None)
                self._changed.notify_all()
        if crash is not None:
            self._crash = self._crash or crash

    # -- confirmation and the end ----------------------------------------------------------------

    def _begin_confirmation(self) -> bool:
        """Queue the confirmation runs once the search is over; False when there is none to run."""
        if not self._confirmation_due():
            return False
        session, n = self._session, self._plan.seeds.confirm
        baseline = self._baseline and bool(self._plan.search_space)
        with session.locked() as study:
            decided = study.user_attrs.get(CONFIRM_OF)
            if decided is not None:  # another worker of the shared study decided a moment ago: follow it
                best = next((t for t in study.get_trials(deepcopy=False) if t.number == decided), None)
                baseline = bool(study.user_attrs.get(BASELINE_RUNS, baseline))
            else:  # queue first, then say so: after a crash in between, queueing again skips what is there
                best = self._best_search()
                if best is not None:
                    queue_confirmations(
                        study, best, runs=n, baseline=baseline, base_seed=self._plan.seeds.base, repo_id=session.repo_id
                    )
                study.set_user_attr(BASELINE_RUNS, baseline)
                study.set_user_attr(CONFIRM_OF, best.number if best is not None else -1)
        if best is None:
            session.repo.add_decision(
                "search finished with no completed trial: nothing to confirm", export=session.export
            )
            return False
        self.phase = "confirm"
        pairs = ", each paired with a run of the plan's base config on the same seed" if baseline else ""
        session.repo.add_decision(
            f"search finished: confirm trial {best.number} ({best.value:.4f}) with {n} fresh seeds",
            f"params: {describe_params(best.params)}\n{n} re-runs with fresh seeds{pairs}", export=session.export,
        )  # fmt: skip
        session.say(f"confirming trial {best.number} with {n} re-runs{' and baseline runs' if baseline else ''}")
        return True

    def _best_search(self) -> FrozenTrial | None:
        return best_search(self._session.study.get_trials(deepcopy=False), self._plan.objective.direction)

    def finish(self) -> None:
        """Wait for the running trials, then say in decisions.md how the session ended."""
        session = self._session
        self.join_trials()
        ended_elsewhere = bool(session.study.user_attrs.get(FINISHED))
        if ended_elsewhere and not self._launched:  # e.g. `resume` of a finished campaign: nothing to say
            return
        if self._stop is not None:
            waiting, counted = self._counts()
            session.repo.add_decision(
                f"stopped by request ({self._stop})",
                f"{counted} search trials counted so far, {waiting} queued; `resume` goes on from here",
                export=session.export,
            )
            return
        session.study.set_user_attr(FINISHED, True)
        self.phase = "finished"
        summary = finish_summary(session.study.get_trials(deepcopy=False), self._plan.objective.direction)
        if ended_elsewhere:  # a shared study: the last worker to end set the flag; each repo says so once
            summary = f"- the shared study was ended by another worker as this one finished its trials\n{summary}"
        session.repo.add_decision("campaign finished", summary, export=session.export)
