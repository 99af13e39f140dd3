"""`agentjet bench chat`: a short real run (tiny model, real page in chromium), the target's arithmetic, the
one-line refusal without a browser."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from fastapi import FastAPI
from typer.testing import CliRunner

from agentjet.bench.chat_latency import CHROMIUM, TARGET, figures, run_chat_bench
from agentjet.chat.security import Sessions
from agentjet.chat.targets import ChatTarget
from agentjet.chat.web import create_chat_app
from agentjet.cli.main import app


def _chat_app(url: str, token: str, login: str) -> FastAPI:
    return create_chat_app([ChatTarget("policy", url, token)], Sessions(login))


@pytest.fixture
def chromium() -> Path:
    """Debian's chromium, as tests/chat's browser fixture finds it: skip without it, unless it is required."""
    if not CHROMIUM.exists():
        message = f"no browser: {CHROMIUM} is missing (apt-get install chromium)"
        if os.environ.get("AGENTJET_REQUIRE_BROWSER") == "1":
            pytest.fail(message + " (AGENTJET_REQUIRE_BROWSER=1)")
        pytest.skip(message)
    return CHROMIUM


def test_a_short_run_times_every_message_both_ways(chromium: Path) -> None:
    result = run_chat_bench(
        _chat_app, model="tiny", messages=3, max_tokens=8, chromium=chromium, progress=lambda _: None
    )
    assert set(result) == {
        "model", "messages", "max_tokens", "direct_first_token_ms", "page_first_token_ms",
        "ratio_p50", "overhead_p50_ms", "target", "met",
    }  # fmt: skip
    assert (result["model"], result["messages"], result["max_tokens"], result["target"]) == ("tiny", 3, 8, TARGET)
    for side in ("direct_first_token_ms", "page_first_token_ms"):
        stats = result[side]
        assert set(stats) == {"p50", "p90", "samples"}
        assert len(stats["samples"]) == 3 and all(0 < s < 60_000 for s in stats["samples"]), stats
        assert min(stats["samples"]) <= stats["p50"] <= stats["p90"] <= max(stats["samples"])
    direct, page = result["direct_first_token_ms"]["p50"], result["page_first_token_ms"]["p50"]
    assert result["ratio_p50"] == pytest.approx(page / direct, abs=1e-3)
    assert result["overhead_p50_ms"] == pytest.approx(page - direct, abs=0.01)
    assert isinstance(result["met"], bool) and result["met"] == (page <= 1.2 * direct + 20)


def test_the_target_is_1_2_times_direct_plus_20_ms() -> None:
    assert figures("m", 4, [100.0, 90.0, 110.0], [139.0, 141.0, 140.0])["met"] is True  # 140 = 1.2 x 100 + 20
    missed = figures("m", 4, [100.0, 90.0, 110.0], [141.0, 150.0, 141.0])
    assert missed["met"] is False and missed["overhead_p50_ms"] == 41.0 and missed["ratio_p50"] == 1.41
    assert missed["direct_first_token_ms"] == {"p50": 100.0, "p90": 110.0, "samples": [100.0, 90.0, 110.0]}


def test_without_the_browser_it_is_one_error_line(tmp_path: Path) -> None:
    missing = tmp_path / "no-chromium"
    result = CliRunner().invoke(app, ["bench", "chat", "--model", "tiny", "--chromium", str(missing), "--json"])
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and f"{missing} is missing" in lines[0], lines
    assert result.stdout == ""
