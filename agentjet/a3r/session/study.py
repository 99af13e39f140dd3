"""The campaign's Optuna study: where it is stored, and the plan's sampler and pruner.

Storage (the plan's `storage:`, or `--storage`):
- `sqlite` (default): `<repo>/runtime/study.db`, in WAL mode with `synchronous=NORMAL` (each
  ask/report/tell is a few small transactions; full fsyncs made the scheduler the bottleneck);
- `journal`: an Optuna journal file, `<repo>/runtime/study.journal` (cheaper writes, one file);
- any SQLAlchemy URL (`postgresql+psycopg://user@host/db`, `sqlite:////abs/path.db`), for campaign
  workers on several machines sharing one study (the driver, e.g. `psycopg[binary]`, must be installed).
`runtime/` is git-ignored; the repo carries `study.json`, an export committed after every trial.
"""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path
from typing import Any

import optuna
from optuna.distributions import BaseDistribution, CategoricalDistribution, FloatDistribution, IntDistribution
from optuna.pruners import BasePruner
from optuna.samplers import BaseSampler
from optuna.storages import BaseStorage
from optuna.trial import FrozenTrial, TrialState
from sqlalchemy.exc import SQLAlchemyError

from agentjet.a3r.errors import CampaignError
from agentjet.a3r.plan.campaign_plan import CampaignPlan, grid_search_space

__all__ = [
    "LOCAL_STORAGES",
    "dashboard_storage",
    "grid_size",
    "suggest_all",
    "load_campaign_study",
    "make_pruner",
    "make_sampler",
    "make_storage",
    "search_budget",
    "storage_path",
]

LOCAL_STORAGES = ("sqlite", "journal")  # the study lives in the repo: one campaign process owns it
_SQLITE_TIMEOUT_S = 60.0


def storage_path(storage: str, runtime_dir: Path) -> Path | None:
    """The file a local storage keeps the study in (None for a URL)."""
    return {"sqlite": runtime_dir / "study.db", "journal": runtime_dir / "study.journal"}.get(storage)


def dashboard_storage(storage: str, runtime_dir: Path, *, relative_to: Path | None = None) -> str:
    """What `optuna-dashboard STORAGE` opens this study with: a SQLite URL, the journal file, or the URL with its
    password hidden. `relative_to` gives local paths relative to that folder (for a report kept in the repo)."""
    local = storage_path(storage, runtime_dir)
    if local is None:
        from sqlalchemy.engine import make_url

        try:
            return make_url(storage).render_as_string(hide_password=True)
        except ValueError:
            return storage
    shown = local.relative_to(relative_to) if relative_to is not None else local.resolve()
    return f"sqlite:///{shown}" if storage == "sqlite" else str(shown)


def _sqlite_connection(path: str) -> sqlite3.Connection:
    connection = sqlite3.connect(path, timeout=_SQLITE_TIMEOUT_S, check_same_thread=False)
    connection.execute("PRAGMA journal_mode=WAL")
    connection.execute("PRAGMA synchronous=NORMAL")
    return connection


def make_storage(storage: str, runtime_dir: Path) -> BaseStorage:
    """`sqlite` | `journal` | a URL -> an Optuna storage (CampaignError when it cannot be opened)."""
    from optuna.storages.journal import JournalFileBackend, JournalStorage

    runtime_dir.mkdir(parents=True, exist_ok=True)
    path = storage_path(storage, runtime_dir)
    if storage == "journal" and path is not None:
        return JournalStorage(JournalFileBackend(str(path)))
    url = f"sqlite:///{path}" if path is not None else storage
    kwargs: dict[str, Any] = {}
    if url.startswith("sqlite:///"):
        file = url.removeprefix("sqlite:///")
        kwargs = {"creator": lambda: _sqlite_connection(file)}
    for attempt in range(3):
        try:
            return optuna.storages.RDBStorage(url, engine_kwargs=kwargs)
        except SQLAlchemyError as exc:  # a bad URL, a server down, a missing driver
            if attempt < 2:  # or another worker is creating the tables this very moment: try again
                time.sleep(0.5)
                continue
            raise CampaignError(f"cannot open the study storage {storage!r}: {exc}") from exc
        except (ImportError, OSError, ValueError) as exc:
            raise CampaignError(f"cannot open the study storage {storage!r}: {exc}") from exc
    raise AssertionError("unreachable")


def make_sampler(plan: CampaignPlan, *, seed_offset: int = 0, parallel: bool = True) -> BaseSampler:
    """The plan's sampler. `seed_offset` (trials already in the study) keeps a resumed session from
    replaying the first session's random draws; `parallel` makes TPE treat running trials as liars."""
    seed = plan.sampler_seed + seed_offset
    spec = plan.sampler
    if spec.name == "random":
        return optuna.samplers.RandomSampler(seed=seed)
    if spec.name == "grid":
        return _AskTellGridSampler(grid_search_space(plan), seed=seed)
    startup = spec.startup_trials if spec.startup_trials is not None else 10
    return optuna.samplers.TPESampler(seed=seed, n_startup_trials=startup, constant_liar=parallel)


def make_pruner(plan: CampaignPlan) -> BasePruner:
    if plan.pruner.name == "none":
        return optuna.pruners.NopPruner()
    return optuna.pruners.MedianPruner(
        n_startup_trials=plan.pruner.startup_trials, n_warmup_steps=plan.pruner.warmup_steps
    )


def suggest_all(trial: optuna.Trial, distributions: dict[str, BaseDistribution]) -> dict[str, Any]:
    """Every param of the search space for this trial (what `study.ask(distributions)` does, kept
    separate so a queued baseline run, whose params are the plan's base config, suggests none)."""
    for name, dist in distributions.items():
        if isinstance(dist, FloatDistribution):
            trial.suggest_float(name, dist.low, dist.high, step=dist.step, log=dist.log)
        elif isinstance(dist, IntDistribution):
            trial.suggest_int(name, dist.low, dist.high, step=dist.step, log=dist.log)
        elif isinstance(dist, CategoricalDistribution):
            trial.suggest_categorical(name, dist.choices)
        else:
            raise CampaignError(f"search_space.{name}: unsupported distribution {dist!r}")
    return dict(trial.params)


def grid_size(plan: CampaignPlan) -> int | None:
    """Points in the grid (None unless the sampler is grid): a grid campaign runs at most this many."""
    if plan.sampler.name != "grid":
        return None
    size = 1
    for values in grid_search_space(plan).values():
        size *= len(values)
    return size


def search_budget(plan: CampaignPlan) -> int | None:
    """Search trials the campaign runs: `budget.trials`, at most the grid's size for a grid (None: until
    the wall clock)."""
    size = grid_size(plan)
    if size is None:
        return plan.budget.trials
    return size if plan.budget.trials is None else min(size, plan.budget.trials)


def load_campaign_study(
    plan: CampaignPlan, storage: BaseStorage, *, seed_offset: int | None = None, parallel: bool = True
) -> optuna.Study:
    """Create the plan's study, or load it with the plan's sampler and pruner when it exists."""
    if seed_offset is None:
        seed_offset = _trial_count(storage, plan.name)
    return optuna.create_study(
        storage=storage,
        study_name=plan.name,
        direction=plan.objective.direction,
        sampler=make_sampler(plan, seed_offset=seed_offset, parallel=parallel),
        pruner=make_pruner(plan),
        load_if_exists=True,
    )


def _trial_count(storage: BaseStorage, name: str) -> int:
    try:
        study_id = storage.get_study_id_from_name(name)
    except KeyError:
        return 0
    return len(storage.get_all_trials(study_id, deepcopy=False))


class _AskTellGridSampler(optuna.samplers.GridSampler):
    """GridSampler without `study.stop()` once the grid is covered (in ask/tell that raises inside
    `tell`); the engine caps a grid campaign's trials at the grid's size instead."""

    def after_trial(self, study: optuna.Study, trial: FrozenTrial, state: TrialState, values: Any) -> None:
        return None
