"""A resumed campaign's re-runs train fresh adapters: after `kill -9` of a campaign on real `tiny` servers
mid-trial, each re-run starts at server step 0 and trains exactly the plan's steps, 1 to N."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

from optuna.trial import TrialState

from agentjet.a3r.session.campaign import EngineOptions, resume_campaign
from agentjet.a3r.session.lock import is_alive, read_heartbeat
from tests.a3r.campaign_helpers import load_study, wait_until

PROCESS = Path(__file__).with_name("campaign_process.py")
STEPS = 4
# checkpoint_every 1: the killed trial's server leaves a checkpoint of each step in its state dir
PLAN = f"""---
name: fresh-resume
task: {{family: arithmetic, params: {{difficulty: 1, max_tokens: 8}}}}
model: tiny
train: {{grpo: {{group_size: 2}}, collect: {{strategy: tasks, tasks: 1}}, checkpoint_every: 1}}
search_space: {{lr: {{low: 1.0e-4, high: 1.0e-2, log: true}}}}
budget: {{trials: 1, steps_per_trial: {STEPS}, eval_every: 1, eval_items: 1}}
pool: local:1
seeds: {{base: 0, confirm: 0}}
---
"""


def _trained_a_step(repo_dir: Path) -> bool:
    beat = read_heartbeat(repo_dir / "runtime") or {}
    return any(r.get("step", 0) >= 1 for r in beat.get("running", []))


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def test_re_runs_after_kill_9_and_resume_train_from_server_step_0(tmp_path: Path) -> None:
    plan_file = tmp_path / "plan.md"
    plan_file.write_text(PLAN)
    repo_dir = tmp_path / "campaign"
    process = subprocess.Popen(
        [sys.executable, str(PROCESS), "--local", "start", str(plan_file), str(repo_dir)],
        cwd=Path(__file__).resolve().parents[2], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip
    try:
        assert wait_until(lambda: _trained_a_step(repo_dir), timeout_s=300, every_s=0.1), process.stderr
        os.kill(process.pid, signal.SIGKILL)
        process.wait(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
    assert not is_alive(repo_dir / "runtime")
    killed = [t.number for t in load_study(repo_dir).trials if t.state is TrialState.RUNNING]
    server_state = repo_dir / "runtime" / "pool" / "local-0" / "state"
    assert killed and _lines(server_state / "metrics.jsonl")  # the killed trial's server trained a step

    result = resume_campaign(repo_dir, options=EngineOptions(heartbeat_s=0.1, pool_heartbeat_s=0.2))

    assert result.finished
    trials = load_study(repo_dir).trials
    reruns = [t for t in trials if t.user_attrs.get("retry_of") in killed]
    assert len(reruns) == len(killed)
    for rerun in reruns:
        assert rerun.state is TrialState.COMPLETE, rerun.user_attrs.get("fail_reason")
        assert rerun.user_attrs["steps_done"] == STEPS
        lines = _lines(repo_dir / "trials" / str(rerun.number) / "metrics.jsonl")
        assert [line["step"] for line in lines] == list(range(1, STEPS + 1))
        assert [line["server"]["step"] for line in lines] == list(range(1, STEPS + 1))  # the server's own steps
    # the resumed session's server logged exactly the re-run's steps: it started at step 0, trained 1..N
    assert [line["step"] for line in _lines(server_state / "metrics.jsonl")] == list(range(1, STEPS + 1))
