"""`agentjet bench chaos`: its cases run against real servers and report their invariants.

The fast abuse cases run in the default suite; the kill -9 rounds and the research-layer kills
run behind `-m slow` (and in `agentjet bench chaos --full`)."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from agentjet.bench.chaos.runner import run_chaos
from agentjet.cli.main import app


def test_the_fast_abuse_cases_hold_their_invariants() -> None:
    result = run_chaos(["scopes", "huge_request", "long_prompt", "huge_reward", "end_during_call"])
    assert result["ok"], json.dumps(result, indent=2, default=str)
    cases = result["cases"]
    assert cases["huge_request"]["with_key"]["status"] == 413
    assert cases["huge_request"]["with_key"]["body_bytes_sent"] < 8 * 2**20  # refused long before 50 MB arrived
    assert cases["huge_reward"]["end_status_codes"] == {"both-huge": [422, 422], "plus-minus": [422, 422]}
    assert cases["huge_reward"]["adapter_finite"] is True and cases["huge_reward"]["steps_trained"] >= 3


def test_an_unknown_case_is_one_clear_line() -> None:
    result = CliRunner().invoke(app, ["bench", "chaos", "--case", "meteor"])
    assert result.exit_code == 2 and "unknown chaos case(s) meteor" in result.output


@pytest.mark.slow
def test_kill_9_rounds_lose_nothing_and_train_nothing_twice() -> None:
    result = run_chaos(["kill9_server", "kill9_client", "corrupt_journal", "kill9_campaign", "kill9_vibe"])
    assert result["ok"], json.dumps(result, indent=2, default=str)
    assert result["cases"]["kill9_server"]["acknowledged_episodes"] > 0
