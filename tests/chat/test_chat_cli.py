"""`agentjet chat`'s mistakes: one sentence and exit 2, before anything starts."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentjet.cli.main import app

runner = CliRunner()


@pytest.mark.parametrize(
    ("args", "says"),
    [
        ([], "name at least one policy"),
        (["--server", "a=http://127.0.0.1:1", "--server", "a=http://127.0.0.1:2"], "same name: a"),
        (["--server", "a=http://127.0.0.1:1", "--base", "a"], "same name: a"),
        (["--server", "nourl"], "expected NAME=URL"),
        (["--server", "a=http://127.0.0.1:1", "--token-file", "b=/nonexistent"], "cannot read the token file"),
        (["--server", "a=http://127.0.0.1:1", "--token-file", "a"], "expected NAME=FILE"),
        (["--checkpoint", "run=state@x"], "must be a number"),
    ],
)
def test_chat_mistakes_are_one_line(args: list[str], says: str, tmp_path: Path) -> None:
    result = runner.invoke(app, ["chat", *args, "--login-token-file", str(tmp_path / "login")])
    assert result.exit_code == 2, result.output
    assert says in result.output and "Traceback" not in result.output
    assert len(result.output.strip().splitlines()) == 1


def test_a_missing_checkpoint_is_one_line_and_starts_nothing(tmp_path: Path) -> None:
    args = ["chat", "--checkpoint", f"run={tmp_path}", "--login-token-file", str(tmp_path / "login")]
    result = runner.invoke(app, args)
    assert result.exit_code == 2 and "has no checkpoint" in result.output, result.output
