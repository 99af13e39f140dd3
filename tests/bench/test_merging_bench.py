"""`agentjet bench merging` on a small slice of its workload with `tiny`: the figures exist and agree."""

from __future__ import annotations

from typing import Any

import pytest

from agentjet.bench.agent_workload import build_workload
from agentjet.bench.merging import run_merging_bench
from agentjet.core.episodes.merging import merge_timelines
from agentjet.core.models import resolve_model


def test_workload_turns_merge_into_one_timeline_per_episode(tiny_tokenizer: Any) -> None:
    episodes = build_workload(tiny_tokenizer, groups=2, group_size=3, turns=4)
    assert len(episodes) == 6 and {e.task_id for e in episodes} == {"task-0", "task-1"}
    for episode in episodes:
        assert len(episode.calls) == 4
        assert all(c.tool_calls for c in episode.calls)  # every turn is a tool call
        for match in ("token", "text"):
            samples, drifts = merge_timelines(episode.calls, match=match)
            assert len(samples) == 1 and drifts == []
    first = episodes[0].calls[0]
    assert len(first.prompt_ids) > 300  # the system + tools prompt is a few hundred tokens
    again = build_workload(tiny_tokenizer, groups=2, group_size=3, turns=4)
    assert [c.prompt_ids for c in again[5].calls] == [c.prompt_ids for c in episodes[5].calls]  # seeded


def test_bench_reports_speedups_and_equal_gradients(tiny_model: Any) -> None:
    assert resolve_model("tiny") == tiny_model
    result = run_merging_bench(model="tiny", groups=1, group_size=3, turns=3, progress=lambda _: None)
    for key in ("speedup_token", "speedup_text", "speedup_prefix", "ideal_speedup", "max_rel_grad_diff"):
        assert key in result
    assert result["samples_off"] == 9 and result["samples_token"] == result["samples_text"] == 3
    assert result["tokens_off"] > result["tokens_token"] > result["tokens_prefix"]
    assert result["ideal_speedup"] == pytest.approx(result["tokens_off"] / result["tokens_token"], rel=1e-3)
    assert result["max_rel_grad_diff"] <= 1e-4 and result["max_rel_loss_diff"] <= 1e-4
