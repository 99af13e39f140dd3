"""Shared by the engine, repo and resume tests: synthetic plans, the study and git log of a repo."""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import git
import optuna
from optuna.trial import FrozenTrial

from agentjet.a3r.plan.campaign_plan import CampaignPlan, parse_plan
from agentjet.a3r.repo import CampaignRepo
from agentjet.a3r.session.study import make_storage

SYNTHETIC = """---
name: {name}
task: {{family: synthetic, params: {{step_s: {step_s}, noise: 0.02}}}}
search_space:
  lr: {{low: 1.0e-5, high: 1.0e-2, log: true}}
  lora_rank: {{choices: [4, 8, 16, 32]}}
sampler: {{name: {sampler}, seed: 0}}
pruner: {pruner}
budget: {{trials: {trials}, steps_per_trial: {steps}, eval_every: 1, eval_items: 1{clock}}}
pool: local:{servers}
seeds: {{base: 0, confirm: {confirm}}}
storage: {storage}
---

# Synthetic test campaign

Does the sampler find lr = 1e-3, rank 16?
"""


def synthetic_text(
    *,
    name: str = "synth",
    trials: int | None = 6,
    steps: int = 3,
    step_s: float = 0.01,
    servers: int = 2,
    confirm: int = 2,
    sampler: str = "tpe",
    pruner: str = "none",
    storage: str = "sqlite",
    wall_clock: str | None = None,
) -> str:
    clock = f", wall_clock: {wall_clock}" if wall_clock else ""
    return SYNTHETIC.format(
        name=name, trials="null" if trials is None else trials, steps=steps, step_s=step_s, servers=servers,
        confirm=confirm, sampler=sampler, pruner=pruner, storage=storage, clock=clock,
    )  # fmt: skip


def synthetic_plan(**kwargs: Any) -> CampaignPlan:
    return parse_plan(synthetic_text(**kwargs))


def load_study(repo_dir: Path) -> optuna.Study:
    repo = CampaignRepo(repo_dir)
    storage = make_storage(repo.settings.storage, repo.runtime_dir)
    return optuna.load_study(study_name=repo.settings.study, storage=storage)


def trial_commits(repo_dir: Path) -> list[int]:
    """The trial number of every trial commit, in log order (duplicates kept, to be asserted on)."""
    log = git.Repo(repo_dir).git.log("--format=%B%x00")
    return [int(n) for n in re.findall(r"^A3R-Trial: (\d+)$", log, re.MULTILINE)]


def commit_subjects(repo_dir: Path) -> list[str]:
    return git.Repo(repo_dir).git.log("--format=%s").splitlines()


def attrs(trial: FrozenTrial) -> dict[str, Any]:
    return dict(trial.user_attrs)


def wait_until(condition: Callable[[], bool], timeout_s: float = 30.0, every_s: float = 0.02) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(every_s)
    return condition()
