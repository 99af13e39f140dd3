"""The example plans ship in the package and are found by name, so an installed wheel runs them without a checkout."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentjet.a3r.errors import CampaignError
from agentjet.a3r.plan.campaign_plan import load_plan
from agentjet.a3r.plan.examples import EXAMPLES_DIR, example_names, example_summary, resolve_plan
from agentjet.cli.main import app

runner = CliRunner()


def test_every_shipped_example_is_a_valid_plan_named_after_its_file() -> None:
    names = example_names()
    assert {"lr-x-rank", "lr-x-rank-short", "quick-tiny", "synthetic"} <= set(names)
    for name in names:
        assert load_plan(EXAMPLES_DIR / f"{name}.md").name == name
        summary = example_summary(name)
        assert summary and not summary.startswith("#") and "\n" not in summary


@pytest.mark.parametrize("given", ["quick-tiny", "quick-tiny.md", "campaigns/quick-tiny.md"])
def test_a_name_or_the_old_checkout_path_finds_the_shipped_plan(
    given: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert resolve_plan(given) == EXAMPLES_DIR / "quick-tiny.md"


def test_a_local_file_wins_over_an_example_of_the_same_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "quick-tiny.md").write_text("mine", encoding="utf-8")
    assert resolve_plan("quick-tiny.md") == Path("quick-tiny.md")


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ("no-such-plan", "no example plan of that name (examples: lr-x-rank,"),
        ("elsewhere/quick-tiny.md", "no plan file elsewhere/quick-tiny.md"),  # a path is never swapped for an example
        (".", "is not a file"),
    ],
)
def test_a_missing_plan_is_one_sentence_naming_the_examples(
    given: str, message: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(CampaignError) as info:
        resolve_plan(given)
    assert message in str(info.value)
    result = runner.invoke(app, ["campaign", "start", given, "--dry-run"])
    assert result.exit_code == 2
    assert message in result.output and "Traceback" not in result.output


def test_the_cli_lists_the_examples_and_dry_runs_one_by_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    listed = runner.invoke(app, ["campaign", "examples"])
    assert listed.exit_code == 0, listed.output
    for name in example_names():
        assert any(line.startswith(f"{name} ") for line in listed.output.splitlines())
    assert str(EXAMPLES_DIR) in listed.output
    dry = runner.invoke(app, ["campaign", "start", "synthetic", "--dry-run"])
    assert dry.exit_code == 0, dry.output
    assert "plan synthetic" in dry.output and "nothing was started" in dry.output
    assert list(tmp_path.iterdir()) == []
