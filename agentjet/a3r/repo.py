"""The campaign repo: a git repository (GitPython) that tells the campaign's story commit by commit.

Layout:
    plan.md            the plan as started (re-rendered with absolute paths when it needs them)
    campaign.yaml      how the campaign runs: repo id, study name, storage, pool override
    decisions.md       the decision log, one dated entry per decision, each committed as it happens
    study.json         every trial of the study (`records.study_export`), committed with each trial
    trials/<n>/        config.yaml (params, seed, model, full TrainConfig), metrics.jsonl (one line
                       per step, from the trial), curve.png, result.json; committed when trial n ends
    report.md figures/ the analysis (agentjet.a3r.report.writer)
    runtime/           git-ignored: the SQLite/journal study, pool servers' state, lock, heartbeat
Each trial commit carries a `A3R-Trial: <n>` trailer; `committed_trials()` reads them back, so a
trial is committed once even across crashes and resumes. Thread-safe: one lock around git.
"""

from __future__ import annotations

import json
import re
import threading
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import git
import yaml
from optuna.trial import FrozenTrial
from pydantic import BaseModel, ConfigDict, Field

from agentjet.a3r.errors import CampaignError
from agentjet.a3r.plan.campaign_plan import CampaignPlan, parse_plan, render_plan, trial_setup
from agentjet.a3r.trial.curve import CurveDrawer
from agentjet.a3r.trial.records import (
    ATTEMPT,
    CONFIRM_INDEX,
    CONFIRM_OF,
    FAIL_REASON,
    KIND,
    RETRIED,
    RETRY_OF,
    SEED,
    describe_params,
    trial_record,
)

__all__ = ["CampaignRepo", "CampaignSettings", "Export", "trial_commit_message"]

PLAN, SETTINGS, DECISIONS, EXPORT, TRIALS, RUNTIME = (
    "plan.md", "campaign.yaml", "decisions.md", "study.json", "trials", "runtime",
)  # fmt: skip
Export = Mapping[str, Any] | Callable[[], Mapping[str, Any]]  # study.json's content, or how to get it now
_TRAILER = re.compile(r"^A3R-Trial: (\d+)\s*$", re.MULTILINE)
_GITIGNORE = "# runtime state of the campaign process: the study DB, servers, lock, heartbeat\nruntime/\n*.tmp\n"


class CampaignSettings(BaseModel):
    """campaign.yaml: what `resume` needs besides the plan."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(default_factory=lambda: uuid.uuid4().hex, description="this repo's identity in a shared study")
    study: str = Field(description="the Optuna study name (the plan's name)")
    storage: str = Field("sqlite", description="sqlite | journal | an RDB URL")
    pool: str | list[Any] | None = Field(None, description="a --pool override of the plan's pool")
    created_at: str = Field(default_factory=lambda: time.strftime("%Y-%m-%d %H:%M:%S %Z"))


class CampaignRepo:
    """An existing campaign repo (`create` makes a new one)."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path).resolve()
        if not (self.path / PLAN).is_file() or not (self.path / SETTINGS).is_file():
            raise CampaignError(f"{self.path} is not a campaign repo (no {PLAN} and {SETTINGS})")
        try:
            self._git = git.Repo(self.path)
        except (git.InvalidGitRepositoryError, git.NoSuchPathError) as exc:
            raise CampaignError(f"{self.path} is not a git repository: {exc}") from exc
        self._lock = threading.RLock()
        self._committed: set[int] | None = None
        self.drawer = CurveDrawer()  # a campaign session swaps in a helper-process drawer
        self.settings = CampaignSettings.model_validate(yaml.safe_load((self.path / SETTINGS).read_text()))

    @classmethod
    def create(
        cls, path: Path, plan: CampaignPlan, settings: CampaignSettings, plan_text: str | None = None
    ) -> CampaignRepo:
        """A new repo with plan.md, campaign.yaml, .gitignore and decisions.md, in a first commit."""
        path = Path(path).resolve()
        if (path / PLAN).exists() or (path / ".git").exists():
            raise CampaignError(f"{path} holds a campaign or git repo already: resume it, or pick another --repo")
        if path.exists() and any(p.name != RUNTIME for p in path.iterdir()):
            raise CampaignError(f"{path} exists and is not empty: pick a new folder for the campaign repo")
        path.mkdir(parents=True, exist_ok=True)
        repo = git.Repo.init(path)
        _ensure_identity(repo)
        (path / PLAN).write_text(_plan_text(plan, plan_text, path))
        (path / SETTINGS).write_text(yaml.safe_dump(settings.model_dump(mode="json"), sort_keys=False))
        (path / ".gitignore").write_text(_GITIGNORE)
        (path / DECISIONS).write_text(f"# Decisions: {plan.name}\n\nWhat the campaign decided, as it happened.\n")
        created = cls(path)
        created._commit(
            [path / n for n in (PLAN, SETTINGS, ".gitignore", DECISIONS)],
            f"campaign {plan.name}: plan\n\n{_first_line(plan.body) or 'no research questions given'}",
        )
        return created

    @property
    def runtime_dir(self) -> Path:
        return self.path / RUNTIME

    @property
    def repo_id(self) -> str:
        """The campaign repo's identity (campaign.yaml `id`): which trials of a shared study are its own."""
        return self.settings.id

    def load_plan(self) -> CampaignPlan:
        text = (self.path / PLAN).read_text(encoding="utf-8")
        return parse_plan(text, path=self.path / PLAN, base_dir=self.path, default_name=self.settings.study)

    def trial_dir(self, number: int) -> Path:
        return self.path / TRIALS / str(number)

    def committed_trials(self) -> set[int]:
        """Trial numbers with a commit (read from the git log once, then kept up to date)."""
        with self._lock:
            if self._committed is None:
                log = self._git.git.log("--format=%B") if self._git.head.is_valid() else ""
                self._committed = {int(n) for n in _TRAILER.findall(log)}
            return set(self._committed)

    def write_config(
        self, number: int, plan: CampaignPlan, params: Mapping[str, Any], attrs: Mapping[str, Any]
    ) -> Path:
        """trials/<n>/config.yaml: what the trial runs with (written when it starts, committed when it ends)."""
        setup = trial_setup(plan, params)
        data = {
            "trial": number,
            "kind": attrs.get(KIND, "search"),
            "params": dict(params),
            "seed": attrs.get(SEED),
            **{k: attrs[k] for k in (ATTEMPT, RETRY_OF, CONFIRM_OF, CONFIRM_INDEX) if k in attrs},
            "model": setup.model,
            "task": {**plan.task.model_dump(mode="json", exclude_none=True), "params": setup.task_params},
            "objective": plan.objective.model_dump(mode="json"),
            "budget": plan.budget.model_dump(mode="json", include={"steps_per_trial", "eval_every", "eval_items"}),
            "train": setup.config.model_dump(mode="json"),
        }
        path = self.trial_dir(number) / "config.yaml"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(yaml.safe_dump(data, sort_keys=False))
        return path

    def record_trial(
        self, trial: FrozenTrial, plan: CampaignPlan, export: Export, *, decision: str | None = None
    ) -> str | None:
        """Commit a finished trial's files (config, metrics, curve, result), study.json and an optional
        decision entry. None (and nothing written) when the trial has a commit already. The trial's
        own files are written before taking the repo lock (trial threads draw side by side); the
        export, when a callable, is taken under the lock, so each commit's study.json is current."""
        if trial.number in self.committed_trials():
            return None
        folder = self.trial_dir(trial.number)
        if not (folder / "config.yaml").is_file():
            self.write_config(trial.number, plan, trial.params, trial.user_attrs)
        (folder / "result.json").write_text(json.dumps(trial_record(trial), indent=1) + "\n")
        _draw_curve(self.drawer, folder, trial, plan.objective.metric)
        names = ("config.yaml", "metrics.jsonl", "curve.png", "result.json")
        files = [folder / name for name in names if (folder / name).is_file()]
        with self._lock:
            if trial.number in self.committed_trials():
                return None
            if decision:
                files.append(self._append_decision(decision))
            files.append(self._write_export(export))
            sha = self._commit(files, trial_commit_message(trial))
            assert self._committed is not None
            self._committed.add(trial.number)
            return sha

    def add_decision(self, title: str, text: str = "", *, export: Export | None = None) -> str:
        """Append an entry to decisions.md and commit it (with study.json when given)."""
        with self._lock:
            body = f"{title}\n\n{text.strip()}" if text.strip() else title
            files = [self._append_decision(body)]
            if export is not None:
                files.append(self._write_export(export))
            return self._commit(files, f"decision: {title}\n\n{text.strip()}".strip())

    def commit_files(self, paths: Sequence[Path], message: str) -> str:
        """Commit files the campaign wrote (report.md, figures/*.png): for the analysis."""
        with self._lock:
            return self._commit(list(paths), message)

    def decisions(self) -> str:
        return (self.path / DECISIONS).read_text(encoding="utf-8")

    def _append_decision(self, text: str) -> Path:
        title, _, rest = text.partition("\n")
        stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime())
        path = self.path / DECISIONS
        with path.open("a", encoding="utf-8") as handle:
            handle.write(f"\n## {stamp} UTC: {title}\n" + (f"\n{rest.strip()}\n" if rest.strip() else ""))
        return path

    def _write_export(self, export: Export) -> Path:
        export = export() if callable(export) else export
        path = self.path / EXPORT
        tmp = path.with_name(f".{EXPORT}.tmp")
        tmp.write_text(json.dumps(export, indent=1, default=str) + "\n")
        tmp.replace(path)
        return path

    def _commit(self, paths: Sequence[Path], message: str) -> str:
        """`git add` + `git commit` through the git CLI: its hashing and zlib run outside our GIL."""
        names = [str(Path(p).resolve().relative_to(self.path)) for p in paths]
        self._git.git.add("--", *names)
        self._git.git.commit("--quiet", "--no-verify", "--allow-empty", "-m", message, "--", *names)
        return self._git.head.commit.hexsha


def trial_commit_message(trial: FrozenTrial) -> str:
    """`trial 7: lr=3.1e-04, lora_rank=8 -> 0.6100` (or pruned / FAIL), and the trial trailer."""
    attrs = trial.user_attrs
    tags = []
    if attrs.get(KIND) in ("confirm", "baseline"):
        tags.append(f"{attrs[KIND]} {int(attrs.get(CONFIRM_INDEX, 0)) + 1} for trial {attrs.get(CONFIRM_OF)}")
    if attrs.get(RETRY_OF) is not None:
        tags.append(f"re-run of trial {attrs[RETRY_OF]}")
    head = f"trial {trial.number}" + (f" ({', '.join(tags)})" if tags else "")
    state = trial.state.name
    if state == "COMPLETE":
        outcome = f"{trial.value:.4f}"
    elif state == "PRUNED":
        step = max(trial.intermediate_values, default=0)
        outcome = f"pruned at step {step}" + (f" ({trial.value:.4f})" if trial.value is not None else "")
    else:
        reason = _first_line(str(attrs.get(FAIL_REASON, "")))[:160]
        outcome = f"{state}: {reason}" + (" (params queued to run again)" if attrs.get(RETRIED) else "")
    return f"{head}: {describe_params(trial.params)} -> {outcome}\n\nA3R-Trial: {trial.number}\nA3R-State: {state}\n"


def _draw_curve(drawer: CurveDrawer, folder: Path, trial: FrozenTrial, objective: str) -> None:
    curve = sorted(trial.intermediate_values.items())
    train: list[tuple[int, float]] = []
    metrics = folder / "metrics.jsonl"
    if metrics.is_file():
        for line in metrics.read_text().splitlines():
            row = json.loads(line) if line.strip() else {}
            if isinstance(row.get("train_reward"), int | float) and isinstance(row.get("step"), int):
                train.append((row["step"], float(row["train_reward"])))
    title = f"trial {trial.number} ({trial.state.name.lower()}): {describe_params(trial.params)}"
    drawer.draw(folder / "curve.png", title=title[:90], objective=objective, curve=curve, train=train)


def _ensure_identity(repo: git.Repo) -> None:
    """A committer name and email for this repo when git has none configured (CI machines)."""
    try:  # ask git itself: it honours GIT_CONFIG_GLOBAL and the like, GitPython's reader does not
        repo.git.config("--get", "user.name")
        repo.git.config("--get", "user.email")
        return
    except git.GitCommandError:
        pass
    with repo.config_writer() as writer:
        writer.set_value("user", "name", "AgentJet campaign")
        writer.set_value("user", "email", "campaign@agentjet.invalid")


def _first_line(text: str) -> str:
    return next((line.strip() for line in text.splitlines() if line.strip()), "")


def _plan_text(plan: CampaignPlan, plan_text: str | None, repo: Path) -> str:
    """The text as given when it reads back as the same plan from the repo; else the plan rendered."""
    if plan_text is not None:
        try:
            if parse_plan(plan_text, base_dir=repo, default_name=plan.name) == plan:
                return plan_text
        except CampaignError:
            pass
    return render_plan(plan)
