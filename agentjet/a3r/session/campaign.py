"""A campaign session: an Optuna study whose trials run in parallel on a pool of swarm servers, opened and closed.

`start_campaign(plan, repo_dir)` creates the campaign repo and runs; `resume_campaign(repo_dir)`
runs it again from where the study and the repo say it is. A session takes the repo's lock
(`agentjet.a3r.session.lock`: a second live session is refused), opens the study
(`agentjet.a3r.session.study`), reconciles study and repo (`agentjet.a3r.session.resume`), starts the
pool, hands the trials to the scheduler (`agentjet.a3r.session.scheduler`), and writes the heartbeat
file until it closes: pool stopped (unless given), active time saved, lock released.
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
from optuna.trial import FrozenTrial

from agentjet.a3r.errors import CampaignError
from agentjet.a3r.plan.campaign_plan import CampaignPlan, parse_pool
from agentjet.a3r.pool.servers import ServerPool
from agentjet.a3r.repo import CampaignRepo, CampaignSettings
from agentjet.a3r.session.decisions import start_text
from agentjet.a3r.session.lock import CampaignLock, clear_stop
from agentjet.a3r.session.resume import commit_missing, reconcile_study
from agentjet.a3r.session.scheduler import FINISHED, Scheduler, SessionLink
from agentjet.a3r.session.study import LOCAL_STORAGES, load_campaign_study, make_storage, search_budget, storage_path
from agentjet.a3r.session.study_mutex import study_mutex
from agentjet.a3r.session.timing import CampaignResult
from agentjet.a3r.trial.curve import CurveDrawer
from agentjet.a3r.trial.records import REPO_ID, study_export

__all__ = ["Campaign", "EngineOptions", "resume_campaign", "start_campaign"]

log = logging.getLogger(__name__)
ACTIVE_S = "active_s"  # study user attr: campaign time used so far, summed over sessions
SESSIONS = "sessions"  # study user attr: campaign sessions so far, all workers (1 = the start, then each resume)
REPO_SESSIONS = "sessions:"  # + repo id: that repo's sessions on the study (several repos share an RDB study)
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
    """One session of a campaign: owns the lock, the study, the pool (unless given), the active time and the
    heartbeat; its `scheduler` owns the trials."""

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
        self.repo_id = repo.repo_id
        self.study: optuna.Study | None = None
        self.scheduler: Scheduler | None = None  # made when the study opens
        self._early_stop: bool | None = None  # a stop asked before that (`now`): the scheduler starts stopped
        self._storage: BaseStorage | None = None
        self._study_lock = threading.RLock()
        self._active_before = 0.0
        self._session_start = time.monotonic()
        self._closed = False

    def run(self) -> CampaignResult:
        started = time.perf_counter()
        self.lock.acquire()
        beat: threading.Thread | None = None
        try:
            clear_stop(self.repo.runtime_dir)
            scheduler = self._open()
            self._reconcile()
            if scheduler.pending():
                self.repo.drawer = CurveDrawer(process=True)
                pool = self._start_pool()
                beat = threading.Thread(
                    target=self._heartbeat, args=(scheduler,), name="campaign-heartbeat", daemon=True
                )
                beat.start()
                scheduler.run(pool)
            scheduler.finish()
        except KeyboardInterrupt:
            if self.scheduler is not None:
                self.scheduler.stop(now=True)
                self.scheduler.join_trials()
            raise
        finally:
            self._closed = True
            self._save_active()
            if self.pool is not None and self._given_pool is None:
                self.pool.close()
            self.repo.drawer.close()
            self.repo.drawer = CurveDrawer()
            self.lock.beat(self._status())
            self.lock.release()
            if beat is not None:
                beat.join(timeout=self.options.heartbeat_s + 1)
        return self._result(scheduler, time.perf_counter() - started)

    def stop(self, *, now: bool = False) -> None:
        """Start no new trial; with `now`, also interrupt the running ones at their next report."""
        if self.scheduler is not None:
            self.scheduler.stop(now=now)
        else:
            self._early_stop = bool(now or self._early_stop)

    def _say(self, message: str) -> None:
        log.info("%s", message)
        if self.options.progress is not None:
            self.options.progress(message)

    # -- opening ---------------------------------------------------------------------------------

    def _open(self) -> Scheduler:
        """Open the study and make the session's scheduler over it."""
        storage = make_storage(self.storage, self.repo.runtime_dir)
        self._storage = storage
        study = load_campaign_study(self.plan, storage, parallel=self._pool_size() > 1)
        self.study = study
        self._active_before = float(study.user_attrs.get(ACTIVE_S, 0.0))
        self._session_start = time.monotonic()
        link = SessionLink(
            plan=self.plan, repo=self.repo, study=study, repo_id=self.repo_id, worker=self.lock.worker,
            shared=self.storage not in LOCAL_STORAGES, study_lock=self._study_lock, locked=self._study_mutex,
            export=self._export, say=self._say, active_s=self._active_s,
        )  # fmt: skip
        options = self.options
        self.scheduler = Scheduler(
            link, max_attempts=options.max_attempts, baseline=options.baseline, pool_wait_s=options.pool_wait_s
        )
        if self._early_stop is not None:
            self.scheduler.stop(now=self._early_stop)
        return self.scheduler

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
            setup = start_text(self.plan, storage=self.storage, budget=search_budget(self.plan))
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

    def _start_pool(self) -> ServerPool:
        if self.pool is not None:
            return self.pool
        self._say(f"starting the pool: {self.plan.pool.to_plan_value()}")
        if self.options.synthetic_members:
            self.pool = ServerPool.synthetic(self.plan.pool.size, heartbeat_s=self.options.pool_heartbeat_s)
            return self.pool
        self.pool = ServerPool.from_spec(
            self.plan.pool, self.repo.runtime_dir / "pool", model=self.plan.model, config=self.plan.train,
            start_timeout_s=self.options.server_start_timeout_s, progress=self._say,
            heartbeat_s=self.options.pool_heartbeat_s,
        )  # fmt: skip
        return self.pool

    # -- while it runs -------------------------------------------------------------------------

    def _active_s(self) -> float:
        return self._active_before + time.monotonic() - self._session_start

    def _heartbeat(self, scheduler: Scheduler) -> None:
        saved = time.monotonic()
        while self.lock.held and not self._closed:
            self.lock.beat(self._status())
            scheduler.poll_stop()
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
        """What the heartbeat file says (`agentjet campaign status` shows it live)."""
        scheduler = self.scheduler
        pool = self.pool
        members = [
            {"name": m.name, "url": m.url, "state": m.state.value, "busy": m.busy, "down_reason": m.down_reason}
            for m in (pool.members if pool is not None else [])
        ]
        return {
            "phase": self._phase(), "study": self.plan.name, "repo": str(self.repo.path),
            "stop": scheduler.stopped if scheduler is not None else None, "active_s": round(self._active_s(), 1),
            "running": scheduler.running_status() if scheduler is not None else [], "pool": members,
        }  # fmt: skip

    def _phase(self) -> str:
        if self._closed:
            return "stopped"
        return self.scheduler.phase if self.scheduler is not None else "starting"

    # -- the outcome ---------------------------------------------------------------------------

    def _export(self) -> dict[str, Any]:
        study = self._require_study()
        return study_export(
            self.plan.name, self.plan.objective.direction, study.get_trials(deepcopy=False),
            study_attrs=study.user_attrs,
        )  # fmt: skip

    def _result(self, scheduler: Scheduler, wall_s: float) -> CampaignResult:
        export = self._export()
        return CampaignResult(
            repo=self.repo.path, study=self.plan.name, stopped=scheduler.stopped,
            finished=bool(self._require_study().user_attrs.get(FINISHED)),
            states=export["states"], best=export["best"], servers=self._pool_size(), wall_s=wall_s,
            timings=scheduler.timings,
        )  # fmt: skip

    def _require_study(self) -> optuna.Study:
        if self.study is None:
            raise CampaignError("the campaign's study is not open")
        return self.study
