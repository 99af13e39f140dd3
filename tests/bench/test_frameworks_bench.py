"""`agentjet bench frameworks`: the dispersion measure, and a one-step run of all four on `tiny`."""

from __future__ import annotations

import pytest

from agentjet.bench.frameworks import FRAMEWORKS, dispersion, run_frameworks_bench


def test_dispersion_is_the_widest_per_step_spread() -> None:
    assert dispersion({"a": [0.1, 0.5, 0.9], "b": [0.1, 0.4, 0.9], "c": [0.2, 0.5, 0.8]}) == pytest.approx(0.1)
    assert dispersion({"a": [0.3, 0.3], "b": [0.3, 0.3]}) == 0.0
    with pytest.raises(ValueError, match="different lengths"):
        dispersion({"a": [0.1], "b": [0.1, 0.2]})


def test_four_frameworks_sample_the_same_tokens_and_train_the_same() -> None:
    result = run_frameworks_bench(model="tiny", steps=1, params={"max_tokens": 8}, progress=lambda _: None)
    assert result["frameworks"] == list(FRAMEWORKS)
    assert set(result["reward_curves"]) == set(FRAMEWORKS) and all(len(c) == 1 for c in result["loss_curves"].values())
    assert result["tokens_identical"] is True
    assert result["reward_dispersion"] == 0.0 and result["loss_dispersion"] == 0.0
