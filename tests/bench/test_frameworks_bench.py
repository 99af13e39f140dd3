"""`agentjet bench frameworks`: the dispersion measure, and one-step runs of every framework on `tiny`."""

from __future__ import annotations

import pytest

from agentjet.bench.frameworks import dispersion, run_frameworks_bench
from agentjet.tasks.frameworks import FRAMEWORKS, TOOL_FRAMEWORKS


def test_dispersion_is_the_widest_per_step_spread() -> None:
    assert dispersion({"a": [0.1, 0.5, 0.9], "b": [0.1, 0.4, 0.9], "c": [0.2, 0.5, 0.8]}) == pytest.approx(0.1)
    assert dispersion({"a": [0.3, 0.3], "b": [0.3, 0.3]}) == 0.0
    with pytest.raises(ValueError, match="different lengths"):
        dispersion({"a": [0.1], "b": [0.1, 0.2]})


@pytest.mark.parametrize(
    ("task", "frameworks", "params"),
    [("arithmetic", FRAMEWORKS, {"max_tokens": 8}), ("tool_use", TOOL_FRAMEWORKS, {"max_tokens": 8, "max_turns": 2})],
)
def test_every_framework_samples_the_same_tokens_and_trains_the_same(
    task: str, frameworks: tuple[str, ...], params: dict[str, int]
) -> None:
    result = run_frameworks_bench(task=task, model="tiny", steps=1, params=params, progress=lambda _: None)
    assert result["task"] == task and result["frameworks"] == list(frameworks)
    assert set(result["reward_curves"]) == set(frameworks) and all(len(c) == 1 for c in result["loss_curves"].values())
    assert result["tokens_identical"] is True
    assert result["reward_dispersion"] == 0.0 and result["loss_dispersion"] == 0.0


@pytest.mark.parametrize(
    ("task", "params", "message"),
    [
        ("countdown", {}, "runs arithmetic or tool_use; got 'countdown'"),
        ("arithmetic", {"framework": "openai"}, "sets the framework of each run itself"),
    ],
)
def test_a_task_or_parameter_it_cannot_run_is_refused(task: str, params: dict[str, str], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        run_frameworks_bench(task=task, model="tiny", steps=1, params=params, progress=lambda _: None)
