"""Resume: make the study and the repo agree again after a campaign process died, whatever the moment.

Run by every campaign session before it schedules anything (a fresh campaign has nothing to fix),
while it holds the repo's lock, so no other process of this repo is alive:
1. a trial left RUNNING is void: its process is gone. It is told FAIL with the reason, and its
   params and seed are queued (`enqueue_trial`, `retry_of` = its number) to run again, unless
   they have run `max_attempts` times. With a local study (sqlite/journal) every RUNNING trial is
   this repo's; with a shared RDB study, only those whose `repo_id` is this repo's.
2. a void trial whose re-run was never queued (the process died between `tell` and
   `enqueue_trial`) gets it now; one already queued or run is not queued twice.
3. confirmation runs (and their baseline pairs) that were decided but not all queued are queued.
4. a finished trial without its commit (died between `tell` and the commit) is committed; one with
   a commit is never committed again (`CampaignRepo.committed_trials`).
COMPLETE and PRUNED trials are never touched, so never run twice.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import optuna
from optuna.trial import FrozenTrial, TrialState

from agentjet.a3r.plan.campaign_plan import CampaignPlan
from agentjet.a3r.repo import CampaignRepo, Export
from agentjet.a3r.trial.records import (
    ATTEMPT,
    CONFIRM_INDEX,
    CONFIRM_OF,
    FAIL_REASON,
    KIND,
    REPO_ID,
    RETRIED,
    RETRY_OF,
    SEED,
    Kind,
    is_void,
)

__all__ = [
    "BASELINE_RUNS",
    "CONFIRM_SEED_OFFSET",
    "commit_missing",
    "confirm_attrs",
    "fail_and_requeue",
    "queue_confirmations",
    "reconcile_study",
    "retry_attrs",
]

log = logging.getLogger(__name__)
CONFIRM_SEED_OFFSET = 100_000  # confirmation seeds: seeds.base + this + index, never a search trial's seed
BASELINE_RUNS = "baseline_runs"  # study user attr: the confirmation pairs each re-run with a base-config run
_RETRY_KEYS = (KIND, SEED, CONFIRM_OF, CONFIRM_INDEX, REPO_ID)


def retry_attrs(trial: FrozenTrial | Mapping[str, Any], number: int, repo_id: str, base_seed: int) -> dict[str, Any]:
    """User attrs of the re-run of trial `number`: same kind and seed, one more attempt. A trial that
    died before its attrs were written was a fresh search trial with seed `base_seed + number`."""
    attrs = trial.user_attrs if isinstance(trial, FrozenTrial) else trial
    out: dict[str, Any] = {KIND: "search", SEED: base_seed + number}
    out.update({k: attrs[k] for k in _RETRY_KEYS if k in attrs})
    out.update({ATTEMPT: int(attrs.get(ATTEMPT, 0)) + 1, RETRY_OF: number, REPO_ID: repo_id})
    return out


def confirm_attrs(kind: Kind, best: int, index: int, base_seed: int, repo_id: str) -> dict[str, Any]:
    """A confirmation re-run (`confirm`: the best params) or its pair (`baseline`: the plan's base
    config); pair `index` shares a fresh seed, so the two differ only in the params."""
    return {
        KIND: kind,
        SEED: base_seed + CONFIRM_SEED_OFFSET + index,
        ATTEMPT: 0,
        CONFIRM_OF: best,
        CONFIRM_INDEX: index,
        REPO_ID: repo_id,
    }


def queue_confirmations(
    study: optuna.Study,
    best: FrozenTrial,
    *,
    runs: int,
    baseline: bool,
    base_seed: int,
    repo_id: str,
) -> list[tuple[str, int]]:
    """Queue `runs` confirm re-runs of `best` (each followed by its baseline pair when `baseline`),
    skipping the (kind, index) pairs the study already holds (queued, run, or retried); what was
    queued. Across workers, call it under `study_mutex`."""
    have = {
        (str(t.user_attrs.get(KIND)), int(t.user_attrs.get(CONFIRM_INDEX, -1)))
        for t in study.get_trials(deepcopy=False) if t.user_attrs.get(KIND) in ("confirm", "baseline")
    }  # fmt: skip
    queued: list[tuple[str, int]] = []
    kinds: tuple[Kind, ...] = ("confirm", "baseline") if baseline else ("confirm",)
    for index in range(runs):
        for kind in kinds:
            if (kind, index) in have:
                continue
            params = dict(best.params) if kind == "confirm" else {}
            study.enqueue_trial(params, user_attrs=confirm_attrs(kind, best.number, index, base_seed, repo_id))
            queued.append((kind, index))
    return queued


def fail_and_requeue(
    study: optuna.Study,
    trial: FrozenTrial | optuna.Trial,
    reason: str,
    *,
    repo_id: str,
    max_attempts: int,
    base_seed: int,
    extra_attrs: Mapping[str, Any] | None = None,
) -> FrozenTrial:
    """Tell a void trial FAIL (with `fail_reason`, `retried`) and queue its params again, unless it has
    run `max_attempts` times (then the failure stands). The attrs go first, so a crash between the
    steps leaves a state `reconcile_study` completes."""
    live = trial if isinstance(trial, optuna.Trial) else optuna.Trial(study, trial._trial_id)
    attrs = dict(live.user_attrs)
    retry = int(attrs.get(ATTEMPT, 0)) + 1 < max_attempts
    for key, value in {**(extra_attrs or {}), FAIL_REASON: reason, RETRIED: retry}.items():
        live.set_user_attr(key, value)
    frozen = study.tell(live.number, state=TrialState.FAIL, skip_if_finished=True)
    if retry:
        study.enqueue_trial(dict(live.params), user_attrs=retry_attrs(attrs, live.number, repo_id, base_seed))
    else:
        log.error("trial %d failed %d times, not run again: %s", live.number, max_attempts, reason)
    return frozen


def reconcile_study(
    study: optuna.Study, *, repo_id: str, local_storage: bool, max_attempts: int, confirm: int, base_seed: int
) -> list[str]:
    """Steps 1-3 of the module docstring; what was done, one line each (for the decision log)."""
    notes: list[str] = []
    trials = study.get_trials(deepcopy=False)
    for trial in trials:
        if trial.state is TrialState.RUNNING and (local_storage or trial.user_attrs.get(REPO_ID) == repo_id):
            missing = {KIND: "search", SEED: base_seed + trial.number}  # asked, died before its attrs
            fail_and_requeue(
                study, trial, "the campaign process died while the trial ran or was about to; it is void",
                repo_id=repo_id, max_attempts=max_attempts, base_seed=base_seed,
                extra_attrs={k: v for k, v in missing.items() if k not in trial.user_attrs},
            )  # fmt: skip
            notes.append(f"trial {trial.number} was running when the campaign process died: failed, params queued")
    trials = study.get_trials(deepcopy=False)
    retried = {t.user_attrs.get(RETRY_OF) for t in trials}
    for trial in trials:
        if is_void(trial) and trial.number not in retried and _ours(trial, repo_id, local_storage):
            attrs = retry_attrs(trial, trial.number, repo_id, base_seed)
            study.enqueue_trial(dict(trial.params), user_attrs=attrs)
            notes.append(f"trial {trial.number} was void but its re-run was never queued: queued now")
    notes += _requeue_confirmations(study, trials, repo_id=repo_id, confirm=confirm, base_seed=base_seed)
    return notes


def commit_missing(
    study: optuna.Study, repo: CampaignRepo, plan: CampaignPlan, export: Export, *, ours: Callable[[FrozenTrial], bool]
) -> list[str]:
    """Step 4: commit each finished trial of this repo that has no commit yet."""
    committed = repo.committed_trials()
    missing = [
        t for t in study.get_trials(deepcopy=False) if t.state.is_finished() and t.number not in committed and ours(t)
    ]
    for trial in missing:
        repo.record_trial(trial, plan, export)
    return [f"trials {[t.number for t in missing]} had ended without a commit: committed now"] if missing else []


def _ours(trial: FrozenTrial, repo_id: str, local_storage: bool) -> bool:
    return local_storage or trial.user_attrs.get(REPO_ID) == repo_id


def _requeue_confirmations(
    study: optuna.Study, trials: Sequence[FrozenTrial], *, repo_id: str, confirm: int, base_seed: int
) -> list[str]:
    best = study.user_attrs.get(CONFIRM_OF)
    if not isinstance(best, int) or best < 0:
        return []
    source = next((t for t in trials if t.number == best), None)
    if source is None:
        return []
    baseline = bool(study.user_attrs.get(BASELINE_RUNS, False))
    queued = queue_confirmations(study, source, runs=confirm, baseline=baseline, base_seed=base_seed, repo_id=repo_id)
    if not queued:
        return []
    return [f"confirmation runs {queued} of trial {best} were decided but never queued: queued now"]
