"""Trials: tiny through real pool servers (fresh adapter, curve, pruning, a server killed mid-trial) and synthetic."""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path
from typing import Any

import httpx
import pytest

from agentjet.a3r.errors import CampaignError, PlanError, PoolError, ServerLost
from agentjet.a3r.plan.campaign_plan import CampaignPlan, parse_plan, trial_setup
from agentjet.a3r.pool.local_server import LocalMember
from agentjet.a3r.pool.members import PoolMember
from agentjet.a3r.pool.servers import ServerPool
from agentjet.a3r.trial.runner import TrialResult, eval_steps, run_trial
from agentjet.a3r.trial.synthetic import quality

TINY_PLAN = """---
name: trial-test
task: {family: arithmetic, params: {difficulty: 1, max_tokens: 8}}
model: tiny
train: {grpo: {group_size: 2}, collect: {strategy: tasks, tasks: 1}, checkpoint_every: 1000}
search_space: {lr: {low: 1.0e-4, high: 1.0e-2, log: true}, lora_rank: {choices: [2, 4]}}
---
"""
SYNTHETIC_PLAN = """---
name: synthetic-test
task: {family: synthetic, params: {step_s: 0.01, noise: 0.05}}
search_space: {lr: {low: 1.0e-5, high: 1.0e-2, log: true}, lora_rank: {choices: [4, 16, 64]}}
---
"""


class Reports:
    """Records report(step, value) calls; prunes at `prune_at`; runs `at_step` hooks (a kill)."""

    def __init__(self, prune_at: int | None = None, at_step: dict[int, Any] | None = None) -> None:
        self.calls: list[tuple[int, float]] = []
        self.prune_at = prune_at
        self.at_step = at_step or {}

    def __call__(self, step: int, value: float) -> bool:
        self.calls.append((step, value))
        if step in self.at_step:
            self.at_step[step]()
        return step == self.prune_at


def _run(member: PoolMember, plan: CampaignPlan, params: dict[str, Any], **kw: Any) -> TrialResult:
    options: dict[str, Any] = {"steps": 2, "eval_every": 1, "eval_items": 2, "seed": 0, **kw}
    return run_trial(member, trial_setup(plan, params), task=plan.task, **options)


def _server_config(member: PoolMember) -> dict[str, Any]:
    reply = httpx.get(f"{member.url}/swarm/config", headers={"Authorization": f"Bearer {member.token}"})
    config: dict[str, Any] = reply.json()["config"]
    return config


def test_eval_steps_are_every_k_and_the_last() -> None:
    assert eval_steps(10, 5) == {5, 10} and eval_steps(7, 3) == {3, 6, 7} and eval_steps(2, 5) == {2}


def test_a_trial_on_tiny_trains_a_fresh_adapter_and_reports_a_curve(tiny_pool: ServerPool, tmp_path: Path) -> None:
    plan = parse_plan(TINY_PLAN)
    with tiny_pool.lease(timeout=5) as member:
        assert member.fresh
        pid = member.pid
        reports = Reports()
        result = _run(member, plan, {"lr": 3e-3, "lora_rank": 2}, report=reports, out_dir=tmp_path)
        config = _server_config(member)
    assert config["optim"]["lr"] == 3e-3 and config["lora"]["rank"] == 2  # the trial's params, rank before any step
    assert member.pid == pid and not member.fresh  # a fresh server is configured, not restarted
    assert [s for s, _ in result.curve] == [1, 2] and reports.calls == list(result.curve)
    assert result.value == result.curve[-1][1] and 0.0 <= result.value <= 1.0
    assert result.steps_done == 2 and len(result.train_rewards) == 2 and not result.pruned
    assert result.server == member.name and result.minutes > 0
    lines = [json.loads(line) for line in (tmp_path / "metrics.jsonl").read_text().splitlines()]
    assert result.metrics_path == tmp_path / "metrics.jsonl"
    assert [line["step"] for line in lines] == [1, 2] and [line["server"]["step"] for line in lines] == [1, 2]
    assert all(line["eval_episodes"] == 2 and line["train_episodes"] == 2 for line in lines)


def test_a_pruned_trial_stops_at_the_report_that_prunes_it(tiny_pool: ServerPool, tmp_path: Path) -> None:
    plan = parse_plan(TINY_PLAN)
    with tiny_pool.lease(timeout=5) as member:
        result = _run(member, plan, {"lr": 1e-3, "lora_rank": 4}, steps=4, report=Reports(prune_at=1), out_dir=tmp_path)
        status = member.client().status()
    assert result.pruned and result.steps_done == 1 and [s for s, _ in result.curve] == [1]
    assert status["step"] == 1  # nothing trained after the pruning report
    assert len((tmp_path / "metrics.jsonl").read_text().splitlines()) == 1


def test_a_trial_on_a_down_member_is_lost_before_it_starts(tmp_path: Path) -> None:
    plan = parse_plan(SYNTHETIC_PLAN)
    with ServerPool.synthetic(1) as pool:
        member = pool.member("synthetic-0")
        pool.mark_down(member, "gone")
        with pytest.raises(ServerLost, match="gone"):
            _run(member, plan, {"lr": 1e-3, "lora_rank": 16})


def test_a_task_that_cannot_be_built_fails_the_trial_before_the_server_is_touched() -> None:
    with pytest.raises(PlanError, match="task.params.*difficulty"):  # a fixed bad param is refused with the plan
        parse_plan(TINY_PLAN.replace("difficulty: 1", "difficulty: 99"))
    plan = parse_plan(TINY_PLAN)
    with ServerPool.synthetic(1) as pool:  # a trial's own params (an enqueued trial) are checked again
        with pytest.raises(CampaignError, match="cannot build the trial's task.*difficulty"):
            _run(pool.members[0], plan, {"lr": 1e-3, "task.difficulty": 99})
        with pytest.raises(CampaignError, match="only synthetic trials"):  # a model trial needs a real server
            _run(pool.members[0], parse_plan(TINY_PLAN), {"lr": 1e-3})


def test_synthetic_trials_are_deterministic_for_a_seed_and_peak_where_documented() -> None:
    plan = parse_plan(SYNTHETIC_PLAN)
    with ServerPool.synthetic(1) as pool, pool.lease(timeout=1) as member:
        first = _run(member, plan, {"lr": 1e-3, "lora_rank": 16}, steps=6, eval_every=2, seed=3)
        again = _run(member, plan, {"lr": 1e-3, "lora_rank": 16}, steps=6, eval_every=2, seed=3)
        other_seed = _run(member, plan, {"lr": 1e-3, "lora_rank": 16}, steps=6, eval_every=2, seed=4)
        far = _run(member, plan, {"lr": 1e-5, "lora_rank": 64}, steps=6, eval_every=2, seed=3)
    assert first.curve == again.curve and [s for s, _ in first.curve] == [2, 4, 6]
    assert other_seed.curve != first.curve
    assert first.value > 0.8 > 0.2 > far.value  # peak at lr 1e-3, rank 16; far away it is near 0
    assert first.minutes * 60 >= 6 * 0.01  # step_s is slept every step
    assert quality(trial_setup(plan, {"lr": 1e-3, "lora_rank": 16}).config) == pytest.approx(1.0, abs=0.03)


def test_synthetic_trials_prune_and_lose_their_member_like_model_trials() -> None:
    plan = parse_plan(SYNTHETIC_PLAN)
    with ServerPool.synthetic(2) as pool:
        member = pool.member("synthetic-0")
        pruned = _run(member, plan, {"lr": 1e-3, "lora_rank": 4}, steps=5, report=Reports(prune_at=2))
        assert pruned.pruned and pruned.steps_done == 2 and [s for s, _ in pruned.curve] == [1, 2]
        victim = pool.member("synthetic-1")
        with pytest.raises(ServerLost, match="killed"):
            _run(victim, plan, {"lr": 1e-3, "lora_rank": 4}, steps=5, report=Reports(at_step={2: victim.kill}))
    bad = parse_plan(SYNTHETIC_PLAN.replace("noise: 0.05", "wobble: 1"))
    with ServerPool.synthetic(1) as pool, pytest.raises(CampaignError, match="step_s .* noise"):
        _run(pool.members[0], bad, {"lr": 1e-3, "lora_rank": 4})


def test_a_synthetic_trial_runs_on_a_real_pool_member_without_touching_it(tiny_pool: ServerPool) -> None:
    with tiny_pool.lease(timeout=60) as member:
        pid, fresh = member.pid, member.fresh
        result = _run(member, parse_plan(SYNTHETIC_PLAN), {"lr": 1e-3, "lora_rank": 16}, steps=3)
    assert result.steps_done == 3 and member.pid == pid and member.fresh == fresh


def test_a_url_member_runs_one_trial_then_asks_for_a_fresh_server(
    tiny_pool: ServerPool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    plan = parse_plan(TINY_PLAN)
    server = tiny_pool.acquire(timeout=60)
    try:
        if not server.fresh:
            tiny_pool.restart(server)
        monkeypatch.setenv("AGENTJET_TOKEN", str(server.token))
        with ServerPool.from_spec(server.url, tmp_path, heartbeat_s=0.2, progress=lambda _: None) as remote_pool:
            remote = remote_pool.acquire(timeout=5)
            assert remote.fresh and remote.pid is None
            result = _run(remote, plan, {"lr": 1e-3, "lora_rank": 4}, steps=1)
            assert result.steps_done == 1 and not remote.fresh
            with pytest.raises(CampaignError, match="fresh --state-dir"):
                _run(remote, plan, {"lr": 1e-3, "lora_rank": 4}, steps=1)
            remote_pool.release(remote)
            with pytest.raises(PoolError):  # a used URL member is not handed out again
                remote_pool.acquire(timeout=0.5)
    finally:
        server.fresh = False
        tiny_pool.release(server)


def test_a_server_killed_mid_trial_raises_server_lost_and_writes_nothing(tiny_pool: ServerPool, tmp_path: Path) -> None:
    plan = parse_plan(TINY_PLAN)
    for member in tiny_pool.members:  # both have trained above (or in another order): no fresh one is left
        member.fresh = False
    with tiny_pool.lease(timeout=5) as member:
        assert isinstance(member, LocalMember)
        old_pid = member.pid

        def kill() -> None:
            assert member.pid != old_pid  # the trial restarted it to get a fresh adapter and optimiser
            assert member.pid is not None
            os.kill(member.pid, signal.SIGKILL)

        with pytest.raises(ServerLost) as lost:
            _run(member, plan, {"lr": 1e-3}, steps=3, report=Reports(at_step={1: kill}), out_dir=tmp_path / "t")
    assert lost.value.server == member.name and "signal 9" in lost.value.reason
    assert not member.healthy and not (tmp_path / "t" / "metrics.jsonl").exists()
