"""`agentjet client run`: its flags reach the task runner as RunSettings, and its refusals are one line."""

from __future__ import annotations

from typing import Any

import pytest
from typer.testing import CliRunner

from agentjet.cli.main import app
from agentjet.core import ConfigError
from agentjet.tasks.play import client_run, run_report
from agentjet.tasks.play.runner import RunSettings

runner = CliRunner()
NO_TOKEN: dict[str, str | None] = {"AGENTJET_TOKEN": None}  # none from the environment either


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """What `client run` hands the task runner (nothing is run); the summary shown is empty."""
    seen: list[dict[str, Any]] = []

    def fake_run(task: str, **options: Any) -> dict[str, Any]:
        seen.append({"task": task, **options})
        return {}

    monkeypatch.setattr(client_run, "client_run", fake_run)
    monkeypatch.setattr(run_report, "show_summary", lambda summary, as_json: 0)
    return seen


def test_the_flags_become_the_run_settings(calls: list[dict[str, Any]]) -> None:
    argv = ["client", "run", "word", "--server", "http://127.0.0.1:9", "--param", "n=3", "--episodes", "3"]
    argv += ["--concurrency", "2", "--eval-every", "2", "--eval-episodes", "5", "--group-size", "4"]
    argv += ["--update-every", "6", "--seed", "7"]
    result = runner.invoke(app, argv, env=NO_TOKEN)
    assert result.exit_code == 0, result.output
    assert calls == [
        {
            "task": "word",
            "servers": ["http://127.0.0.1:9"],
            "token": None,
            "params": ["n=3"],
            "settings": RunSettings(
                episodes=3, concurrency=2, eval_every=2, eval_episodes=5, group_size=4, update_every=6, seed=7
            ),
        }
    ]


def test_the_defaults_are_the_run_settings_defaults(calls: list[dict[str, Any]]) -> None:
    result = runner.invoke(app, ["client", "run", "word", "--server", "http://127.0.0.1:9"], env=NO_TOKEN)
    assert result.exit_code == 0, result.output
    assert calls[0]["settings"] == RunSettings()


def test_a_refusal_of_the_runner_is_one_error_line(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(task: str, **options: Any) -> dict[str, Any]:
        raise ConfigError(f"no task family {task!r}")

    monkeypatch.setattr(client_run, "client_run", refuse)
    result = runner.invoke(app, ["client", "run", "nope", "--server", "http://127.0.0.1:9"], env=NO_TOKEN)
    assert result.exit_code == 2
    assert "error: no task family 'nope'" in result.output
