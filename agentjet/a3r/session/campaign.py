"""The campaign engine: an Optuna study whose trials run in parallel on a pool of swarm servers.

`start_campaign(plan, repo_dir)` creates the campaign repo and runs; `resume_campaign(repo_dir)`
runs it again from where the study and the repo say it is. A session:
1. takes the repo's lock (`agentjet.a3r.session.lock`: a second live session is refused), opens the study
   (`agentjet.a3r.session.study`), reconciles study and repo (`agentjet.a3r.session.resume`), starts the pool;
2. schedules: one thread per trial, each on a server acquired from the pool. A helper thread
   (`agentjet.a3r.session.prefetch`) asks the study ahead while every server is busy, so a freed server
   starts its next trial at once; a trial reports each eval (`trial.report`, `should_prune`) and is told
   COMPLETE / PRUNED / FAIL when it ends; its files are committed (`agentjet.a3r.repo`);
3. a trial whose server is lost (`ServerLost`) is failed with the reason and its params and seed
   queued to run on another server (the pool restarts a local server, drops a remote one until
   its heartbeat answers again);
4. stops starting fresh trials at `budget.trials` (search trials that count: not void) or
   `budget.wall_clock` (active campaign time, summed over sessions); queued re-runs still run;
5. then re-runs the best search trial's params `seeds.confirm` times with fresh seeds, each paired
   with a run of the plan's base config on the same seed (`kind: confirm` / `baseline` trials,
   never pruned), and logs the outcome in decisions.md.
A stop request (`request_stop`: the STOP file) drains: no new trial starts, running ones finish;
`now` also interrupts them at their next report (failed, params queued for the next resume).
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import optuna
from optuna.storages import BaseStorage
from optuna.trial import FrozenTrial, TrialState

from agentjet.a3r.errors import CampaignError
from agentjet.a3r.plan.campaign_plan import CampaignPlan, parse_pool, search_space_distributions
from agentjet.a3r.pool.members import MemberState, PoolMember
from agentjet.a3r.pool.servers import ServerPool
from agentjet.a3r.repo import CampaignRepo, CampaignSettings
from agentjet.a3r.session.decisions import best_search, finish_summary, start_text
from agentjet.a3r.session.lock import CampaignLock, StopMode, clear_stop, stop_requested
from agentjet.a3r.session.prefetch import Prefetcher
from agentjet.a3r.session.resume import (
    BASELINE_RUNS,
    commit_missing,
    fail_and_requeue,
    queue_confirmations,
    reconcile_study,
)
from agentjet.a3r.session.study import (
    LOCAL_STORAGES,
    load_campaign_study,
    make_storage,
    search_budget,
    storage_path,
    suggest_all,
)
from agentjet.a3r.session.study_mutex import study_mutex
from agentjet.a3r.session.timing import CampaignResult, TrialTiming
from agentjet.a3r.session.trial_worker import RunningTrial, TrialContext, run_trial_thread
from agentjet.a3r.trial.curve import CurveDrawer
from agentjet.a3r.trial.records import (
    CONFIRM_OF,
    KIND,
    REPO_ID,
    SEED,
    WORKER,
    describe_params,
    is_void,
    study_export,
)

__all__ = ["Campaign", "CampaignResult", "EngineOptions", "TrialTiming", "resume_campaign", "start_campaign"]

log = logging.getLogger(__name__)
ACTIVE_S = "active_s"  # study user attr: campaign time used so far, summed over sessions
FINISHED = "finished"  # study user attr: the campaign ran to its end (search and confirmation)
SESSIONS = "sessions"  # study user attr: campaign sessions so far, all workers (1 = the start, then each resume)
REPO_SESSIONS = "sessions:"  # + repo id: that repo's sessions on the study (several repos share an RDB study)
_POLL_S = 0.25
_ACTIVE_EVERY_S = 10.0


@dataclass(frozen=True)
class EngineOptions:
    """How a session runs, beyond the plan (CLI flags, tests, the bench)."""

    pool: str | list[Any] | None = None  # override the plan's pool (--pool); kept in campaign.yaml
    storage: str | None = None  # override the plan's storage (a new campaign only)
    synthetic_members: bool = False  # server-less pool members (synthetic trials only)
    heartbeat_s: float = 2.0  # campaign heartbeat file period
    pool_heartbeat_s: float = 2.0  # pool members' health checks
    max_attempts: int = 3  # runs of the same params and seed before a void failure stands
    baseline: bool = True  # pair each confirmation re-run with a run of the plan's base config (same seed)
    pool_wait_s: float = 600.0  # give up when no pool server is up for this long
    server_start_timeout_s: float = 600.0
    progress: Callable[[str], None] | None = None  # one line per lifecycle event (the CLI prints them)


def start_campaign(
    plan: CampaignPlan,
    repo_dir: Path,
    *,
    plan_text: str | None = None,
    options: EngineOptions | None = None,
    pool: ServerPool | None = None,
) -> CampaignResult:
    """Create the campaign repo for `plan` at `repo_dir` and run the campaign (see the module doc)."""
    options = options or EngineOptions()
    settings = CampaignSettings(study=plan.name, storage=options.storage or plan.storage, pool=options.pool)
    repo = CampaignRepo.create(repo_dir, plan, settings, plan_text)
    return Campaign(repo, options=options, pool=pool).run()


def resume_campaign(
    repo_dir: Path, *, options: EngineOptions | None = None, pool: ServerPool | None = None
) -> CampaignResult:
    """Run the campaign in `repo_dir` on from where its study and repo say it is."""
    return Campaign(CampaignRepo(repo_dir), options=options, pool=pool).run()


class Campaign:
    """One session of a campaign: owns the lock, the study, the pool (unless given), the trial threads."""

    def __init__(
        self, repo: CampaignRepo, *, options: EngineOptions | None = None, pool: ServerPool | None = None
    ) -> None:
        self.repo = repo
        self.options = options or EngineOptions()
        self.plan = repo.load_plan()
        pool_override = self.options.pool if self.options.pool is not None else repo.settings.pool
        if pool_override is not None:
            self.plan = self.plan.model_copy(update={"pool": parse_pool(pool_override)})
        self.storage = repo.settings.storage
        self._given_pool = pool
        self.pool: ServerPool | None = pool
        self.lock = CampaignLock(repo.runtime_dir)
        self.repo_id = ""
        self.study: optuna.Study | None = None
        self._storage: BaseStorage | None = None
        self._dists = search_space_distributions(self.plan)
        self._budget = search_budget(self.plan)
        self._study_lock = threading.RLock()
        self._changed = threading.Condition()
        self._running: dict[int, RunningTrial] = {}
        self._threads: list[threading.Thread] = []
        self._timings: list[TrialTiming] = []
        self._stop: StopMode | None = None
        self._stop_now = threading.Event()
        self._crash: BaseException | None = None
        self._active_before = 0.0
        self._session_start = time.monotonic()
        self._said_clock = False
        self._launched = 0  # trials this session started
        self._no_server_since: float | None = None
        self._phase = "starting"

    # -- session ---------------------------------------------------------------------------------

    def run(self) -> CampaignResult:
        started = time.perf_counter()
        self.lock.acquire()
        beat: threading.Thread | None = None
        try:
            clear_stop(self.repo.runtime_dir)
            self.study = self._open_study()
            self._reconcile()
            if self._pending():
                self.repo.drawer = CurveDrawer(process=True)
                self._start_pool()
                beat = threading.Thread(target=self._heartbeat, name="campaign-heartbeat", daemon=True)
                beat.start()
                self._schedule()
            self._finish_session()
        except KeyboardInterrupt:
            self.stop(now=True)
            self._join_trials()
            raise
        finally:
            self._phase = "stopped"
            self._save_active()
            if self.pool is not None and self._given_pool is None:
                self.pool.close()
            self.repo.drawer.close()
            self.repo.drawer = CurveDrawer()
            self.lock.beat(self._status())
            self.lock.release()
            if beat is not None:
                beat.join(timeout=self.options.heartbeat_s + 1)
        return self._result(time.perf_counter() - started)

    def stop(self, *, now: bool = False) -> None:
        """Start no new trial; with `now`, also interrupt the running ones at their next report."""
        self._stop = "now" if now or self._stop == "now" else "drain"
        if now:
            self._stop_now.set()
        with self._changed:
            self._changed.notify_all()

    def _say(self, message: str) -> None:
        log.info("%s", message)
        if self.options.progress is not None:
            self.options.progress(message)

    def _open_study(self) -> optuna.Study:
        storage = make_storage(self.storage, self.repo.runtime_dir)
        self._storage = storage
        study = load_campaign_study(self.plan, storage, parallel=self._pool_size() > 1)
        self.repo_id = self.repo.repo_id
        self._active_before = float(study.user_attrs.get(ACTIVE_S, 0.0))
        self._session_start = time.monotonic()
        return study

    @contextlib.contextmanager
    def _study_mutex(self) -> Iterator[optuna.Study]:
        """The study, locked against this process's threads and every other worker sharing it: for
        each read-then-write (is it queued yet? then queue it) that must not run twice."""
        study = self._require_study()
        file = storage_path(self.storage, self.repo.runtime_dir)
        assert self._storage is not None  # opened with the study
        with self._study_lock, study_mutex(self._storage, study.study_name, file=file):
            yield study

    def _reconcile(self) -> None:
        with self._study_mutex() as study:  # a resumed worker must not requeue what another is queueing
            sessions = int(study.user_attrs.get(SESSIONS, 0)) + 1
            study.set_user_attr(SESSIONS, sessions)
            here = int(study.user_attrs.get(REPO_SESSIONS + self.repo_id, 0)) + 1
            study.set_user_attr(REPO_SESSIONS + self.repo_id, here)
            notes = reconcile_study(
                study, repo_id=self.repo_id, local_storage=self.storage in LOCAL_STORAGES,
                max_attempts=self.options.max_attempts, confirm=self.plan.seeds.confirm,
                base_seed=self.plan.seeds.base,
            )  # fmt: skip
        notes += commit_missing(study, self.repo, self.plan, self._export, ours=self._ours)
        if here == 1:
            setup = start_text(self.plan, storage=self.storage, budget=self._budget)
            if sessions == 1:
                self.repo.add_decision(f"campaign started: study {self.plan.name}", setup)
            else:  # another worker's repo started this shared study
                so_far = len(study.get_trials(deepcopy=False))
                joined = f"- joined the shared study: {so_far} trials so far from other workers\n{setup}"
                self.repo.add_decision(f"campaign started: joined study {self.plan.name}", joined)
        else:
            text = "\n".join(f"- {n}" for n in notes) or "- study and repo agree: nothing to repair"
            self.repo.add_decision(f"campaign resumed (session {here})", text)

    def _ours(self, trial: FrozenTrial) -> bool:
        return self.storage in LOCAL_STORAGES or trial.user_attrs.get(REPO_ID) == self.repo_id

    def _pool_size(self) -> int:
        return len(self._given_pool.members) if self._given_pool is not None else self.plan.pool.size

    def _start_pool(self) -> None:
        if self.pool is not None:
            return
        self._say(f"starting the pool: {self.plan.pool.to_plan_value()}")
        if self.options.synthetic_members:
            self.pool = ServerPool.synthetic(self.plan.pool.size, heartbeat_s=self.options.pool_heartbeat_s)
            return
        self.pool = ServerPool.from_spec(
            self.plan.pool, self.repo.runtime_dir / "pool", model=self.plan.model, config=self.plan.train,
            start_timeout_s=self.options.server_start_timeout_s, progress=self._say,
            heartbeat_s=self.options.pool_heartbeat_s,
        )  # fmt: skip

    # -- what is left --------------------------------------------------------------------------

    def _active_s(self) -> float:
        return self._active_before + time.monotonic() - self._session_start

    def _clock_left(self) -> bool:
        limit = self.plan.budget.wall_clock_s
        if limit is None or self._active_s() < limit:
            return True
        if not self._said_clock:
            self._said_clock = True
            self.repo.add_decision(f"wall clock budget {self.plan.budget.wall_clock} reached: no new search trials")
        return False

    def _counts(self) -> tuple[int, int]:
        """(trials waiting in the queue, search trials that count against the budget)."""
        trials = self._require_study().get_trials(deepcopy=False)
        waiting = sum(t.state is TrialState.WAITING for t in trials)
        counted = sum(t.user_attrs.get(KIND, "search") == "search" and not is_void(t) for t in trials)
        return waiting, counted

    def _has_work(self) -> bool:
        if self._stop is not None:
            return False
        waiting, counted = self._counts()
        search_left = self._budget is None or counted < self._budget
        return waiting > 0 or (search_left and self._clock_left())

    def _pending(self) -> bool:
        """Anything to run in this session: queued trials, search budget, or the confirmation."""
        study = self._require_study()
        if study.user_attrs.get(FINISHED):
            return False
        return self._has_work() or self._confirmation_due()

    def _others_running(self) -> bool:
        """Trials other campaign workers run on a shared (RDB) study: the search is not over before they end.
        A worker that died leaves its trials RUNNING until its own repo resumes."""
        if self.storage in LOCAL_STORAGES:
            return False
        running = self._require_study().get_trials(deepcopy=False, states=(TrialState.RUNNING,))
        return any(t.number not in self._running for t in running)

    def _confirmation_due(self) -> bool:
        return self.plan.seeds.confirm > 0 and CONFIRM_OF not in self._require_study().user_attrs

    # -- the scheduler -------------------------------------------------------------------------

    def _schedule(self) -> None:
        self._phase = "search"
        asker = Prefetcher(self._ask_if_work, self._changed, name="campaign-ask")
        run: RunningTrial | None = None
        try:
            while True:
                self._raise_crash(asker.error)
                self._poll_stop()
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
                member = self._acquire()
                if member is not None and self._stop == "now":  # came while waiting for a server
                    self._require_pool().release(member)
                elif member is not None:
                    self._launch(run, member)
                    run = None
        finally:
            left = [r for r in (asker.close(), run) if r is not None]  # only after an error
            for unlaunched in left:
                try:
                    self._void_unlaunched(unlaunched, "the session ended before it started")
                except Exception:  # the error in flight matters more; resume voids it anyway
                    log.exception("could not fail trial %d, asked but never launched", unlaunched.trial.number)

    def _ask_if_work(self) -> RunningTrial | None:
        return self._ask() if self._stop is None and self._has_work() else None

    def _void_unlaunched(self, run: RunningTrial, reason: str) -> None:
        frozen = fail_and_requeue(
            self._require_study(), run.trial, reason, repo_id=self.repo_id, max_attempts=self.options.max_attempts,
            base_seed=self.plan.seeds.base, extra_attrs=run.tags,
        )  # fmt: skip
        self.repo.record_trial(frozen, self.plan, self._export)

    def _poll_stop(self) -> None:
        mode = stop_requested(self.repo.runtime_dir)
        if mode is not None and (self._stop is None or (mode == "now" and self._stop != "now")):
            self._say(f"stop requested ({mode})")
            self.stop(now=mode == "now")

    def _wait_for_change(self) -> None:
        with self._changed:
            self._changed.wait(_POLL_S)

    def _raise_crash(self, error: BaseException | None = None) -> None:
        self._crash = self._crash or error
        if self._crash is not None:
            self.stop(now=True)
            self._join_trials()
            raise CampaignError(f"the campaign stopped after an internal error: {self._crash!r}") from self._crash

    def _acquire(self) -> PoolMember | None:
        pool = self._require_pool()
        try:
            return pool.acquire(timeout=_POLL_S)
        except CampaignError:
            if any(m.busy or m.state in (MemberState.UP, MemberState.STARTING) for m in pool.members):
                self._no_server_since = None
                return None
            since = self._no_server_since or time.monotonic()
            self._no_server_since = since
            if time.monotonic() - since > self.options.pool_wait_s:
                raise CampaignError(
                    f"no pool server has been up for {self.options.pool_wait_s:.0f} s: {pool.describe()}"
                ) from None
            return None

    def _ask(self) -> RunningTrial:
        """The next trial: a queued one (a re-run, a confirmation) first, else a fresh sample. Runs in the
        prefetch thread; it claims the trial for this repo (`repo_id`: this repo runs it, whoever queued
        it) and leaves the other attrs to the trial's thread, so the next ask comes sooner."""
        study = self._require_study()
        started = time.perf_counter()
        with self._study_lock:
            trial = study.ask()
            queued = dict(trial.user_attrs)
            trial.set_user_attr(REPO_ID, self.repo_id)
            params = {} if queued.get(KIND) == "baseline" else suggest_all(trial, self._dists)
        tags = {} if KIND in queued else {KIND: "search", SEED: self.plan.seeds.base + trial.number}
        tags[WORKER] = self.lock.worker
        return RunningTrial(
            trial, str({**queued, **tags}[KIND]), params, int({**queued, **tags}[SEED]),
            time.perf_counter() - started, tags=tags, attrs={**queued, **tags, REPO_ID: self.repo_id},
        )  # fmt: skip

    def _launch(self, run: RunningTrial, member: PoolMember) -> None:
        run.member = member
        run.launched_at = time.perf_counter()
        self._launched += 1
        with self._changed:
            self._running[run.trial.number] = run
        thread = threading.Thread(target=self._trial_thread, args=(run,), name=f"trial-{run.trial.number}")
        self._threads = [t for t in self._threads if t.is_alive()] + [thread]
        thread.start()

    def _join_trials(self) -> None:
        for thread in list(self._threads):
            thread.join()

    # -- one trial -----------------------------------------------------------------------------

    def _trial_thread(self, run: RunningTrial) -> None:
        ctx = TrialContext(
            self.plan, self.repo, self._require_study(), self._require_pool(), self.repo_id,
            self.options.max_attempts, self._stop_now, self._export, self._say,
        )  # fmt: skip
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

    def _best_search(self) -> FrozenTrial | None:
        return best_search(self._require_study().get_trials(deepcopy=False), self.plan.objective.direction)

    def _begin_confirmation(self) -> bool:
        """Queue the confirmation runs once the search is over; False when there is none to run."""
        if not self._confirmation_due():
            return False
        n, baseline = self.plan.seeds.confirm, self.options.baseline and bool(self.plan.search_space)
        with self._study_mutex() as study:
            decided = study.user_attrs.get(CONFIRM_OF)
            if decided is not None:  # another worker of the shared study decided a moment ago: follow it
                best = next((t for t in study.get_trials(deepcopy=False) if t.number == decided), None)
                baseline = bool(study.user_attrs.get(BASELINE_RUNS, baseline))
            else:  # queue first, then say so: after a crash in between, queueing again skips what is there
                best = self._best_search()
                if best is not None:
                    queue_confirmations(
                        study, best, runs=n, baseline=baseline, base_seed=self.plan.seeds.base, repo_id=self.repo_id
                    )
                study.set_user_attr(BASELINE_RUNS, baseline)
                study.set_user_attr(CONFIRM_OF, best.number if best is not None else -1)
        if best is None:
            self.repo.add_decision("search finished with no completed trial: nothing to confirm", export=self._export)
            return False
        self._phase = "confirm"
        pairs = ", each paired with a run of the plan's base config on the same seed" if baseline else ""
        self.repo.add_decision(
            f"search finished: confirm trial {best.number} ({best.value:.4f}) with {n} fresh seeds",
            f"params: {describe_params(best.params)}\n{n} re-runs with fresh seeds{pairs}", export=self._export,
        )  # fmt: skip
        self._say(f"confirming trial {best.number} with {n} re-runs{' and baseline runs' if baseline else ''}")
        return True

    def _finish_session(self) -> None:
        study = self._require_study()
        self._join_trials()
        ended_elsewhere = bool(study.user_attrs.get(FINISHED))
        if ended_elsewhere and not self._launched:  # e.g. `resume` of a finished campaign: nothing to say
            return
        if self._stop is not None:
            waiting, counted = self._counts()
            self.repo.add_decision(
                f"stopped by request ({self._stop})",
                f"{counted} search trials counted so far, {waiting} queued; `resume` goes on from here",
                export=self._export,
            )
            return
        study.set_user_attr(FINISHED, True)
        self._phase = "finished"
        summary = finish_summary(study.get_trials(deepcopy=False), self.plan.objective.direction)
        if ended_elsewhere:  # a shared study: the last worker to end set the flag; each repo says so once
            summary = f"- the shared study was ended by another worker as this one finished its trials\n{summary}"
        self.repo.add_decision("campaign finished", summary, export=self._export)

    # -- status ----------------------------------------------------------------------------------

    def _export(self) -> dict[str, Any]:
        study = self._require_study()
        return study_export(
            self.plan.name, self.plan.objective.direction, study.get_trials(deepcopy=False),
            study_attrs=study.user_attrs,
        )  # fmt: skip

    def _heartbeat(self) -> None:
        saved = time.monotonic()
        while self.lock.held and self._phase not in ("stopped",):
            self.lock.beat(self._status())
            self._poll_stop()
            if time.monotonic() - saved >= _ACTIVE_EVERY_S:
                self._save_active()
                saved = time.monotonic()
            time.sleep(self.options.heartbeat_s)

    def _save_active(self) -> None:
        if self.study is None:
            return
        with self._study_lock:
            self.study.set_user_attr(ACTIVE_S, round(self._active_s(), 3))

    def _status(self) -> dict[str, Any]:
        with self._changed:
            running = [r.status() for _, r in sorted(self._running.items())]
        pool = self.pool
        members = [
            {"name": m.name, "url": m.url, "state": m.state.value, "busy": m.busy, "down_reason": m.down_reason}
            for m in (pool.members if pool is not None else [])
        ]
        return {
            "phase": self._phase, "study": self.plan.name, "repo": str(self.repo.path), "stop": self._stop,
            "active_s": round(self._active_s(), 1), "running": running, "pool": members,
        }  # fmt: skip

    def _result(self, wall_s: float) -> CampaignResult:
        export = self._export() if self.study is not None else {"states": {}, "best": None}
        return CampaignResult(
            repo=self.repo.path, study=self.plan.name, stopped=self._stop,
            finished=bool(self.study is not None and self.study.user_attrs.get(FINISHED)),
            states=export["states"], best=export["best"], servers=self._pool_size(), wall_s=wall_s,
            timings=sorted(self._timings, key=lambda t: t.number),
        )  # fmt: skip

    def _require_study(self) -> optuna.Study:
        if self.study is None:
            raise CampaignError("the campaign's study is not open")
        return self.study

    def _require_pool(self) -> ServerPool:
        if self.pool is None:
            raise CampaignError("the campaign's pool is not started")
        return self.pool
