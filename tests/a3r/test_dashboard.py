"""A campaign's study opens in optuna-dashboard: its own storage loader and its WSGI app read what we wrote."""

from __future__ import annotations

from pathlib import Path

import httpx
import optuna
import pytest
from optuna_dashboard import wsgi
from optuna_dashboard._storage_url import get_storage

from agentjet.a3r.report.report_text import _dashboard
from agentjet.a3r.session.study import dashboard_storage, make_storage


@pytest.mark.parametrize("kind", ["sqlite", "journal"])
def test_optuna_dashboard_lists_the_campaign_study_and_its_trials(
    kind: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    runtime = tmp_path / "repo" / "runtime"
    runtime.mkdir(parents=True)
    study = optuna.create_study(study_name="lr-x-rank", storage=make_storage(kind, runtime), direction="maximize")
    for lr in (1e-4, 3e-4, 1e-3):
        study.enqueue_trial({"lr": lr})
        study.optimize(lambda t: -abs(t.suggest_float("lr", 1e-5, 1e-2, log=True) - 3e-4), n_trials=1)
    monkeypatch.chdir(tmp_path / "repo")  # the report's command runs from the campaign repo
    relative = dashboard_storage(kind, runtime, relative_to=tmp_path / "repo")
    assert relative == ("sqlite:///runtime/study.db" if kind == "sqlite" else "runtime/study.journal")
    for argument in (relative, dashboard_storage(kind, runtime)):  # the report's and `campaign report`'s
        with httpx.Client(transport=httpx.WSGITransport(app=wsgi(get_storage(argument))), base_url="http://dash") as c:
            listed = c.get("/api/studies")
            assert listed.status_code == 200, listed.text
            (summary,) = listed.json()["study_summaries"]
            assert summary["study_name"] == "lr-x-rank"
            detail = c.get(f"/api/studies/{summary['study_id']}", params={"after": 0})
            assert detail.status_code == 200, detail.text
            trials = detail.json()["trials"]
            assert [float(t["params"][0]["param_external_value"]) for t in trials] == [1e-4, 3e-4, 1e-3]
            assert max(trials, key=lambda t: t["values"][0])["params"][0]["param_external_value"] == "0.0003"


def test_a_server_url_is_shown_without_its_password() -> None:
    shown = dashboard_storage("postgresql+psycopg://camp:s3cret@db.example:5432/studies", Path("/nowhere"))
    assert "s3cret" not in shown and shown.startswith("postgresql+psycopg://camp:***@db.example")


def test_the_report_says_how_to_open_the_study() -> None:
    text = _dashboard("sqlite:///runtime/study.db")
    assert "optuna-dashboard sqlite:///runtime/study.db" in text and text.startswith("## Browse the study")
    assert _dashboard(None) == ""
