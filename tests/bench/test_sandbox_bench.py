"""`agentjet bench sandbox` in its quick mode: every key is there, a number per working backend, else null + why."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from agentjet.cli.main import app
from agentjet.sandbox.api import BACKEND_NAMES, Sandbox
from agentjet.sandbox.errors import SandboxUnavailable


def test_bench_sandbox_quick_mode_reports_every_backend() -> None:
    result = CliRunner().invoke(app, ["bench", "sandbox", "--runs", "2", "--concurrency", "2", "--json"])
    assert result.exit_code == 0, result.output
    figures = json.loads(result.stdout)
    for name in BACKEND_NAMES:
        try:
            Sandbox(name)
            works = True
        except SandboxUnavailable:
            works = False
        p50, p95, wall = (
            figures[f"{name}_start_ms_p50"],
            figures[f"{name}_start_ms_p95"],
            figures[f"{name}_concurrent2_s"],
        )
        if works:
            assert 0 < p50 <= p95 < 60_000 and 0 < wall < 120, figures
        else:
            assert p50 is None and wall is None and figures[f"{name}_unavailable"], figures
