"""What a campaign writes on each Optuna trial (user attrs) and how a trial reads as a JSON record.

Every trial the engine asks carries these user attrs, so the study alone says what each trial
was, and the repo's `study.json` (one `trial_record` per trial) says it without Optuna:

| attr            | meaning                                                                     |
|-----------------|-----------------------------------------------------------------------------|
| `kind`          | `search` (sampled by the study), `confirm` (a re-run of the best params) or |
|                 | `baseline` (a run of the plan's base config, no params, paired by seed)    |
| `seed`          | the training seed (a re-run after a lost server keeps it)                   |
| `attempt`       | 0 for the first run of these params and seed, +1 per re-run                 |
| `retry_of`      | the trial whose params and seed it re-runs (absent on first attempts)       |
| `confirm_of`    | `confirm`/`baseline` trials: the best search trial they confirm             |
| `confirm_index` | `confirm`/`baseline` trials: 0..seeds.confirm-1 (pairs share the seed)      |
| `repo_id`       | the campaign repo that ran it (its first commit)                            |
| `worker`        | `host:pid` of the campaign process                                          |
| `server`        | the pool member it ran on                                                   |
| `steps_done`    | training steps it finished                                                  |
| `fail_reason`   | FAIL trials: why                                                            |
| `retried`       | FAIL trials: true when the failure voids the trial (server lost, campaign  |
|                 | process died, stopped now) and its params were queued to run again          |
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from optuna.trial import FrozenTrial

__all__ = [
    "ATTEMPT",
    "CONFIRM_INDEX",
    "CONFIRM_OF",
    "FAIL_REASON",
    "KIND",
    "REPO_ID",
    "RETRIED",
    "RETRY_OF",
    "SEED",
    "SERVER",
    "STEPS_DONE",
    "WORKER",
    "Kind",
    "describe_params",
    "is_void",
    "study_export",
    "trial_record",
]

Kind = Literal["search", "confirm", "baseline"]
KIND = "kind"
SEED = "seed"
ATTEMPT = "attempt"
RETRY_OF = "retry_of"
CONFIRM_OF = "confirm_of"
CONFIRM_INDEX = "confirm_index"
REPO_ID = "repo_id"
WORKER = "worker"
SERVER = "server"
STEPS_DONE = "steps_done"
FAIL_REASON = "fail_reason"
RETRIED = "retried"


def is_void(trial: FrozenTrial) -> bool:
    """A FAIL trial whose params were queued again: it neither counts against the budget nor as a result."""
    return trial.state.name == "FAIL" and bool(trial.user_attrs.get(RETRIED))


def describe_params(params: Mapping[str, Any]) -> str:
    """`lr=3.1e-04, lora_rank=8`: short, stable, for commit messages and logs."""
    return ", ".join(f"{name}={_short(value)}" for name, value in params.items()) or "(base config)"


def _short(value: Any) -> str:
    if isinstance(value, float) and not isinstance(value, bool):
        return f"{value:.3g}" if 1e-3 <= abs(value) < 1e4 or value == 0 else f"{value:.2e}"
    return str(value)


def _number(value: float | None) -> float | None:
    return None if value is None or math.isnan(value) or math.isinf(value) else value


def trial_record(trial: FrozenTrial) -> dict[str, Any]:
    """One trial as plain JSON data: state, value, params, its attrs and its intermediate curve."""
    started, finished = trial.datetime_start, trial.datetime_complete
    duration = (finished - started).total_seconds() if started and finished else None
    return {
        "number": trial.number,
        "state": trial.state.name,
        "value": _number(trial.value) if trial.values is not None and len(trial.values) == 1 else None,
        "params": dict(trial.params),
        "kind": trial.user_attrs.get(KIND, "search"),
        "seed": trial.user_attrs.get(SEED),
        "attempt": trial.user_attrs.get(ATTEMPT, 0),
        "retry_of": trial.user_attrs.get(RETRY_OF),
        "server": trial.user_attrs.get(SERVER),
        "fail_reason": trial.user_attrs.get(FAIL_REASON),
        "retried": bool(trial.user_attrs.get(RETRIED, False)),
        "intermediate": [[step, _number(v)] for step, v in sorted(trial.intermediate_values.items())],
        "started": started.isoformat() if started else None,
        "finished": finished.isoformat() if finished else None,
        "duration_s": round(duration, 3) if duration is not None else None,
        "user_attrs": dict(trial.user_attrs),
    }


def study_export(
    name: str, direction: str, trials: Iterable[FrozenTrial], *, study_attrs: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """The whole study as JSON data: every trial (any state) and the best search trial."""
    records = [trial_record(t) for t in sorted(trials, key=lambda t: t.number)]
    done = [r for r in records if r["state"] == "COMPLETE" and r["kind"] == "search" and r["value"] is not None]
    best = (max if direction == "maximize" else min)(done, key=lambda r: r["value"]) if done else None
    states: dict[str, int] = {}
    for record in records:
        states[record["state"]] = states.get(record["state"], 0) + 1
    return {
        "study": name,
        "direction": direction,
        "study_attrs": dict(study_attrs or {}),
        "states": states,
        "best": {k: best[k] for k in ("number", "value", "params", "seed")} if best else None,
        "trials": records,
    }
