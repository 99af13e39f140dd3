"""`agentjet bench vibe-hotswap` end to end on `tiny` (two swaps, clients on the host): the figures."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from agentjet.cli.main import app


def test_vibe_hotswap_bench_reports_swap_latency_and_cold_start() -> None:
    result = CliRunner().invoke(app, ["bench", "vibe-hotswap", "--swaps", "2", "--sandbox", "none", "--json"])
    assert result.exit_code == 0, result.output
    figures = json.loads(result.stdout)
    assert len(figures["hotswap_s"]) == 2 and figures["hotswap_s_p50"] > 0
    assert figures["hotswap_s_p50"] == pytest.approx(sum(figures["hotswap_s"]) / 2, abs=2e-3)  # median of two
    assert figures["server_cold_start_s"] > 0 and figures["server_pid_unchanged"] is True
    assert figures["steps"]["after"] >= figures["steps"]["before"] >= 1
    assert figures["sandbox"] == "none" and figures["model"] == "tiny"
