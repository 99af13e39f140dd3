"""`agentjet bench serve --quick` runs end to end against its real worker processes (it broke once unnoticed)."""

from __future__ import annotations

from typer.testing import CliRunner

from agentjet.bench.serving.serve import run_serve_bench
from agentjet.cli.main import app


def test_the_quick_serve_bench_measures_our_server_against_the_bare_route() -> None:
    result = run_serve_bench(quick=True, requests_per_level=48, progress=lambda _line: None)
    for concurrency in (1, 16, 64):
        assert result[f"overhead_p50_ms_c{concurrency}"] > 0
        assert result[f"calls_per_s_c{concurrency}"] > 0
        assert result[f"bare_ratio_p50_c{concurrency}"] > 0
        assert result[f"server_cpu_ms_per_call_c{concurrency}"] > 0
    assert result["quick"] is True and "tokens_per_s_c1" not in result  # quick skips the model part


def test_an_unknown_backend_is_one_sentence() -> None:
    outcome = CliRunner().invoke(app, ["bench", "serve", "--backend", "tgi"])
    assert outcome.exit_code != 0
    assert "the backends are transformers, vllm" in outcome.output
    assert "Traceback" not in outcome.output
