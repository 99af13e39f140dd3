"""`agentjet bench train-memory` with `tiny`: one worker process per budget, figures that agree."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from agentjet.cli.main import app
from agentjet.core.config import OptimConfig


@pytest.mark.heavy  # about 45 s: CI runs it in make test-heavy
def test_each_budget_is_measured_in_its_own_process_with_more_micro_batches_when_smaller() -> None:
    argv = ["bench", "train-memory", "--model", "tiny", "--budget", "2048", "--budget", "256", "--json"]
    reply = CliRunner().invoke(app, argv)
    assert reply.exit_code == 0, reply.output
    result = json.loads(reply.stdout)
    assert result["default_budget"] == OptimConfig().tokens_per_micro_batch("cpu") == 512
    big, small = result["runs"]["2048"], result["runs"]["256"]
    assert big["samples"] == small["samples"] == 64 and big["tokens"] == small["tokens"]  # the same batch
    assert small["micro_batches"] > big["micro_batches"] >= 1
    for run in (big, small):
        assert run["update_s"] > 0 and run["peak_rss_gb"] >= run["rss_before_gb"] > 0


def test_a_failing_worker_is_a_clear_error() -> None:
    reply = CliRunner().invoke(app, ["bench", "train-memory", "--model", "no-such-model", "--budget", "512"])
    assert reply.exit_code == 2 and "the budget 512 worker failed" in reply.output
