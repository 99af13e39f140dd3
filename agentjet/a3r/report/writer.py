"""The campaign report: analyse the study, draw `figures/`, write `report.md`, commit them to the repo.

`write_report(repo)` reads the trials from the live study (`runtime/`, or the RDB URL) when it can
be opened, else from the committed `study.json` (a cloned repo has no runtime dir), so the report
covers every trial the study holds, void and unfinished ones included. It commits only when the
report or a figure changed, through `CampaignRepo.commit_files`; report.md links only the figures
drawn this time (one with no data is not drawn).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentjet.a3r.analysis.findings import CampaignAnalysis, analyze
from agentjet.a3r.errors import CampaignError
from agentjet.a3r.repo import EXPORT, CampaignRepo
from agentjet.a3r.report.figures import FIGURES, save_figures
from agentjet.a3r.report.report_text import render_report
from agentjet.a3r.session.study import dashboard_storage, make_storage, storage_path

__all__ = ["REPORT", "FIGURES_DIR", "ReportResult", "load_records", "write_report"]

log = logging.getLogger(__name__)
REPORT = "report.md"
FIGURES_DIR = "figures"


@dataclass(frozen=True)
class ReportResult:
    path: Path
    analysis: CampaignAnalysis
    figures: dict[str, Path]
    commit: str | None  # None when nothing changed since the last report
    source: str  # where the trials were read: "study" or "study.json"


def load_records(repo: CampaignRepo) -> tuple[list[dict[str, Any]], str]:
    """The study's trials as records (`records.trial_record`), and where they came from."""
    from agentjet.a3r.trial.records import trial_record

    settings = repo.settings
    local = storage_path(settings.storage, repo.runtime_dir)
    if local is None or local.exists():
        try:
            import optuna

            storage = make_storage(settings.storage, repo.runtime_dir)
            study = optuna.load_study(study_name=settings.study, storage=storage)
            return [trial_record(t) for t in study.get_trials(deepcopy=False)], "study"
        except (CampaignError, KeyError) as exc:
            log.warning("cannot read the study (%s); reporting from %s", exc, EXPORT)
    export = repo.path / EXPORT
    if not export.is_file():
        return [], EXPORT
    try:
        data = json.loads(export.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise CampaignError(f"{export} is not valid JSON ({exc}); run the campaign again to rewrite it") from exc
    return list(data.get("trials", [])), EXPORT


def write_report(repo: CampaignRepo, *, records: Sequence[dict[str, Any]] | None = None) -> ReportResult:
    """Analyse, draw, write report.md and commit it with the figures (see the module docstring)."""
    plan = repo.load_plan()
    source = "given"
    if records is None:
        records, source = load_records(repo)
    analysis = analyze(plan, records)
    folder = repo.path / FIGURES_DIR
    before = _snapshot(repo.path, folder)
    figures = save_figures(analysis, folder)
    path = repo.path / REPORT
    dashboard = dashboard_storage(repo.settings.storage, repo.runtime_dir, relative_to=repo.path)
    text = render_report(analysis, figures, figures_dir=FIGURES_DIR, dashboard=dashboard)
    path.write_text(text, encoding="utf-8")
    changed = _snapshot(repo.path, folder) != before
    commit = None
    if changed:
        commit = repo.commit_files([path, *figures.values()], _message(analysis))
    return ReportResult(path, analysis, figures, commit, source)


def _snapshot(root: Path, folder: Path) -> dict[Path, bytes]:
    files = [root / REPORT, *(folder / name for name in FIGURES.values())]
    return {p: p.read_bytes() for p in files if p.is_file()}


def _message(analysis: CampaignAnalysis) -> str:
    counted = sum(1 for r in analysis.rows if not r.void)
    best = analysis.best
    head = f"report: {len(analysis.rows)} trials ({counted} counted)"
    if best is not None:
        head += f", best trial {best.number} -> {best.value:.4f}, {analysis.confirmation.verdict}"
    return f"{head}\n\n{analysis.confirmation.reason}\n"
