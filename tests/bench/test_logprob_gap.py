"""`agentjet bench logprob-gap` on `tiny`: the same tokens scored by the sampler and the trainer's forward."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentjet.bench.logprob_gap import gap_figures
from agentjet.cli.main import app

PAIR_KEYS = {
    "sampler",
    "sampler_dtype",
    "trainer_dtype",
    "tokens",
    "abs_gap_mean",
    "abs_gap_p50",
    "abs_gap_p99",
    "abs_gap_max",
    "signed_gap_mean",
    "is_weight_mean",
    "above_cap_fraction",
}


def test_gap_figures_by_hand() -> None:
    trainer = [-1.0, -2.0, -0.5, -3.0]
    sampler = [-1.0, -2.5, -0.25, -4.0]  # deltas 0, 0.5, -0.25, 1.0
    figures = gap_figures(trainer, sampler, tis_cap=2.0)
    assert figures["tokens"] == 4
    assert figures["abs_gap_mean"] == pytest.approx(1.75 / 4)
    assert figures["abs_gap_max"] == pytest.approx(1.0)
    assert figures["signed_gap_mean"] == pytest.approx(1.25 / 4)
    assert figures["is_weight_mean"] == pytest.approx((1 + math.exp(0.5) + math.exp(-0.25) + math.e) / 4)
    assert figures["above_cap_fraction"] == pytest.approx(0.25)  # only e > 2
    with pytest.raises(ValueError, match="equally many"):
        gap_figures([-1.0], [], tis_cap=2.0)


def test_fp32_sampler_matches_the_fp32_trainer_and_bf16_is_further(tiny_model: Path, tmp_path: Path) -> None:
    out = tmp_path / "gap.json"
    argv = ["bench", "logprob-gap", "--model", "tiny", "--prompts", "3", "--max-tokens", "8", "--dtype", "float32"]
    reply = CliRunner().invoke(app, [*argv, "--json", "--out", str(out)])
    assert reply.exit_code == 0, reply.output
    result = json.loads(reply.stdout)
    assert json.loads(out.read_text()) == result
    assert {"model", "backend", "device", "prompts", "max_tokens", "temperature", "tis_cap", "sanity", "wall_s"} <= set(
        result
    )
    assert (result["model"], result["backend"], result["prompts"], result["max_tokens"]) == (
        "tiny",
        "transformers",
        3,
        8,
    )
    pairs = {(p["sampler"], p["trainer_dtype"]): p for p in result["pairs"]}
    assert set(pairs) == {("transformers/float32", "float32"), ("transformers/float32", "bfloat16")}
    fp32, bf16 = pairs["transformers/float32", "float32"], pairs["transformers/float32", "bfloat16"]
    for pair in (fp32, bf16):
        assert set(pair) == PAIR_KEYS
        assert 3 <= pair["tokens"] <= 24  # every sampled token compared (a completion may stop early)
        assert pair["abs_gap_p50"] <= pair["abs_gap_p99"] <= pair["abs_gap_max"]
    assert fp32["tokens"] == bf16["tokens"]
    assert fp32["abs_gap_mean"] < 1e-4 and fp32["abs_gap_max"] < 1e-4  # the same weights and kernels
    assert result["sanity"] == fp32["abs_gap_mean"]
    assert fp32["is_weight_mean"] == pytest.approx(1.0, abs=1e-4) and fp32["above_cap_fraction"] == 0.0
    assert bf16["abs_gap_mean"] > fp32["abs_gap_mean"] and bf16["abs_gap_max"] > fp32["abs_gap_max"]
