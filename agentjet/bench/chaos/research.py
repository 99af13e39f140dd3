"""kill -9 of the research layer's drivers: a campaign worker mid-trial and a vibe run mid-training.

Both go through the real CLI in subprocesses, exactly as a user runs them, then resume. The
campaign's invariant: every re-run of a killed trial trains the plan's steps from server step 1
(never a killed trial's adapter). The vibe run's: it finishes, and its server trained no journal
seq twice with steps that only go up.
"""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import IO, Any

import optuna
from optuna.trial import TrialState

from agentjet.a3r.repo import CampaignRepo
from agentjet.a3r.session.lock import read_heartbeat
from agentjet.a3r.session.study import make_storage

__all__ = ["kill9_campaign", "kill9_vibe"]

_STEPS = 4
_PLAN = f"""---
name: chaos-resume
task: {{family: arithmetic, params: {{difficulty: 1, max_tokens: 8}}}}
model: tiny
train: {{grpo: {{group_size: 2}}, collect: {{strategy: tasks, tasks: 1}}, checkpoint_every: 1}}
search_space: {{lr: {{low: 1.0e-4, high: 1.0e-2, log: true}}}}
budget: {{trials: 1, steps_per_trial: {_STEPS}, eval_every: 1, eval_items: 1}}
pool: local:1
seeds: {{base: 0, confirm: 0}}
---
"""


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "agentjet", *args]


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()] if path.is_file() else []


def _wait(predicate: Any, timeout_s: float) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.2)
    return False


def kill9_campaign(scratch: Path) -> dict[str, Any]:
    """`agentjet campaign start` killed -9 after its trial's first step, then `campaign resume`."""
    plan, repo_dir = scratch / "plan.md", scratch / "campaign"
    plan.write_text(_PLAN)
    proc = subprocess.Popen(_cli("campaign", "start", str(plan), "--repo", str(repo_dir)),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip

    def stepped() -> bool:
        beat = read_heartbeat(repo_dir / "runtime") or {}
        return any(r.get("step", 0) >= 1 for r in beat.get("running", []))

    reached = _wait(stepped, 600)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=60)
    resumed = subprocess.run(_cli("campaign", "resume", "--repo", str(repo_dir)), capture_output=True, text=True,
                             timeout=1800)  # fmt: skip
    repo = CampaignRepo(repo_dir)
    study = optuna.load_study(
        study_name=repo.settings.study, storage=make_storage(repo.settings.storage, repo.runtime_dir)
    )
    killed = {t.user_attrs.get("retry_of") for t in study.trials if t.user_attrs.get("retry_of") is not None}
    reruns = [t for t in study.trials if t.user_attrs.get("retry_of") in killed]
    runs = []
    for rerun in reruns:
        lines = _lines(repo_dir / "trials" / str(rerun.number) / "metrics.jsonl")
        runs.append({"trial": rerun.number, "state": rerun.state.name, "steps_done": rerun.user_attrs.get("steps_done"),
                     "server_steps": [line["server"]["step"] for line in lines]})  # fmt: skip
    fresh = all(
        r["state"] == TrialState.COMPLETE.name and r["server_steps"] == list(range(1, _STEPS + 1)) for r in runs
    )
    ok = reached and resumed.returncode == 0 and bool(runs) and fresh
    return {"ok": ok, "tried": "kill -9 of a campaign worker after its trial's first step, then resume",
            "killed_mid_trial": reached, "resume_exit": resumed.returncode, "reruns": runs}  # fmt: skip


def _pump(stream: IO[str]) -> queue.Queue[str]:
    lines: queue.Queue[str] = queue.Queue()

    def pump() -> None:
        for line in stream:
            lines.put(line.rstrip("\n"))

    threading.Thread(target=pump, daemon=True).start()
    return lines


def kill9_vibe(scratch: Path) -> dict[str, Any]:
    """`agentjet vibe` on tiny killed -9 once it reports a training step, then `vibe --resume`."""
    workdir = scratch / "runs"
    sentence = "train a model to reply with one word answers"
    proc = subprocess.Popen(_cli("vibe", sentence, "--model", "tiny", "--steps", "4", "--workdir", str(workdir)),
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)  # fmt: skip
    assert proc.stdout is not None
    lines, seen, run_id = _pump(proc.stdout), [], None
    deadline = time.monotonic() + 1200
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            line = lines.get(timeout=1)
        except queue.Empty:
            continue
        seen.append(line)
        run_id = run_id or (line.split("] run ", 1)[1].split()[0] if "] run " in line else None)
        if "step 1:" in line:
            break
    stepped = any("step 1:" in line for line in seen)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=60)
    if run_id is None:
        return {"ok": False, "tried": "kill -9 of a vibe run", "error": "no run id seen", "tail": seen[-10:]}
    resumed = subprocess.run(_cli("vibe", "--resume", run_id, "--workdir", str(workdir)), capture_output=True,
                             text=True, timeout=1800)  # fmt: skip
    metrics = _lines(workdir / run_id / "state" / "metrics.jsonl")
    steps = [m["step"] for m in metrics]
    seqs = [s for m in metrics for s in (*m["episode_seqs"], *m["skipped_seqs"])]
    ok = stepped and resumed.returncode == 0 and steps == sorted(set(steps)) and len(seqs) == len(set(seqs))
    return {"ok": ok, "tried": "kill -9 of a vibe run after its first training step, then --resume",
            "killed_after_step_1": stepped, "resume_exit": resumed.returncode, "server_steps": steps,
            "trained_twice": len(seqs) - len(set(seqs)), "resume_tail": resumed.stdout.splitlines()[-3:]}  # fmt: skip
