"""Policies the chat serves itself: the base model and a checkpoint step of a trained `tiny`, side by side."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from agentjet.chat.launched import LaunchedPolicy, copy_checkpoint, launch_policy, parse_checkpoint
from agentjet.core import ConfigError
from tests.chat.test_chat_browser import log_in, reply_text, send
from tests.trained_tiny import tiny_after_one_step


@pytest.fixture(scope="module")
def trained_state(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A `tiny` server's state dir after one real GRPO step (one group: rewards 1 and 0)."""
    root = tmp_path_factory.mktemp("trained")
    with tiny_after_one_step(root):
        pass
    return root / "state"


@pytest.fixture(scope="module")
def side_by_side(trained_state: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[LaunchedPolicy]]:
    workdir = tmp_path_factory.mktemp("chat-policies")
    launched = [
        launch_policy("base", "tiny", workdir),
        launch_policy("step1", "tiny", workdir, checkpoint=(trained_state, 1)),
    ]
    yield launched
    for policy in launched:
        policy.stop()


def test_a_checkpoint_is_served_at_its_step_and_the_run_is_untouched(
    trained_state: Path, side_by_side: list[LaunchedPolicy]
) -> None:
    base, step1 = side_by_side
    assert httpx.get(f"{base.target.url}/health").json()["policy_version"] == 0
    assert httpx.get(f"{step1.target.url}/health").json()["policy_version"] >= 1
    assert step1.process.state_dir.parent != trained_state.parent  # served from a copy, in its own state dir
    assert sorted(p.name for p in (trained_state / "checkpoints").glob("step-*")) == ["step-1"]  # nothing added


def test_base_and_checkpoint_side_by_side_in_the_page(
    page: Any, side_by_side: list[LaunchedPolicy], chat_app: Any
) -> None:
    url = chat_app([p.target for p in side_by_side])
    log_in(page, url)
    page.locator("#use-step1").wait_for()
    page.fill("#temperature", "0")
    page.fill("#max_tokens", "8")
    send(page, "hi")
    for name in ("base", "step1"):
        page.locator(f'.column[data-target="{name}"] .turn.assistant[data-finish]').wait_for(timeout=60_000)
    logprobs = {
        name: page.locator(f'.column[data-target="{name}"] .tok').evaluate_all("(s) => s.map((e) => e.dataset.logprob)")
        for name in ("base", "step1")
    }
    assert logprobs["base"] and logprobs["step1"]
    assert logprobs["base"] != logprobs["step1"]  # one update at lr 0.05 moved the policy
    assert reply_text(page, "base").text_content() is not None


@pytest.mark.parametrize(
    ("spec", "parsed"),
    [
        ("run=state", ("run", Path("state"), None)),
        ("run=/tmp/a@b/state@12", ("run", Path("/tmp/a@b/state"), 12)),
        ("step6 = runs/x/state @6", ("step6", Path("runs/x/state"), 6)),
    ],
)
def test_checkpoint_specs(spec: str, parsed: tuple[str, Path, int | None]) -> None:
    assert parse_checkpoint(spec) == parsed


@pytest.mark.parametrize("spec", ["state", "=state", "run=", "run=state@", "run=state@six"])
def test_bad_checkpoint_specs_are_one_sentence(spec: str) -> None:
    with pytest.raises(ValueError, match="--checkpoint"):
        parse_checkpoint(spec)


def test_a_missing_checkpoint_names_what_there_is(trained_state: Path, tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no checkpoint step-9; it has: step-1"):
        copy_checkpoint(trained_state, 9, tmp_path / "a")
    with pytest.raises(ConfigError, match="has no checkpoint"):
        copy_checkpoint(tmp_path, None, tmp_path / "b")
    config = copy_checkpoint(trained_state, None, tmp_path / "c")
    assert json.loads(config.read_text())["optim"]["lr"] == 0.05
    assert (tmp_path / "c" / "checkpoints" / "LATEST").read_text() == "step-1"
