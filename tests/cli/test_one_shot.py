"""`run_one_shot`: the bench and demo commands' runner (logs, tokenizers, errors -> one line and exit 2)."""

from __future__ import annotations

import os
from collections.abc import Callable

import pytest
import typer

from agentjet.cli.one_shot import run_one_shot
from agentjet.core import AgentJetError, ConfigError


def _raising(exc: Exception) -> Callable[[], None]:
    def run() -> None:
        raise exc

    return run


def test_returns_what_the_run_returns() -> None:
    assert run_one_shot(lambda: {"figure": 1.5}) == {"figure": 1.5}


def test_an_expected_error_is_one_error_line_and_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(typer.Exit) as exited:
        run_one_shot(_raising(ConfigError("groups=0 must be at least 1")))
    assert exited.value.exit_code == 2
    captured = capsys.readouterr()
    assert captured.err.strip() == "error: groups=0 must be at least 1" and captured.out == ""


def test_only_the_errors_it_is_told_to_catch_become_a_line() -> None:
    with pytest.raises(ValueError, match="a bug"):
        run_one_shot(_raising(ValueError("a bug, not a refusal")))
    with pytest.raises(AgentJetError, match="uncaught"):
        run_one_shot(_raising(AgentJetError("uncaught")), catch=())
    with pytest.raises(typer.Exit):
        run_one_shot(_raising(ValueError("now expected")), catch=(AgentJetError, ValueError))


def test_quiet_tokenizers_sets_the_default_but_keeps_a_given_value(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TOKENIZERS_PARALLELISM", raising=False)
    run_one_shot(lambda: None)
    assert "TOKENIZERS_PARALLELISM" not in os.environ
    run_one_shot(lambda: None, quiet_tokenizers=True)
    assert os.environ["TOKENIZERS_PARALLELISM"] == "false"
    monkeypatch.setenv("TOKENIZERS_PARALLELISM", "true")
    run_one_shot(lambda: None, quiet_tokenizers=True)
    assert os.environ["TOKENIZERS_PARALLELISM"] == "true"


@pytest.mark.parametrize("command", [["learn", "arithmetic"], ["frameworks"]])
def test_a_bad_param_of_a_bench_is_one_line_and_exit_2(command: list[str]) -> None:
    from typer.testing import CliRunner

    from agentjet.cli.main import app

    result = CliRunner().invoke(app, ["bench", *command, "--param", "bad"])
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output and "--param must look like key=value" in result.output
