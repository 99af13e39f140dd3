"""`agentjet bench vibe-hotswap`: how fast a vibe run swaps its client, against restarting the server.

A run is launched the way `agentjet vibe` launches one (a server subprocess on a fresh state dir,
`tiny` by default; the client in the sandbox `auto` picks) and trains on the one-word task from a
workspace client file. The file is then edited `swaps` times, and each edit is hot-swapped:
the old client process stops, the new one starts, and the latency runs from the edit to the first
episode the new client began on the server (its `created_at`). The server is never restarted:
its pid and step count are checked after every swap. The figure to beat is the server's own cold
start (process start -> `/health` rolling), which a restart-based repair would pay each time.

JSON: hotswap_s_p50, hotswap_s (each swap), hotswap_s_max, server_cold_start_s, cold_over_hot
(how many hot-swaps fit in one cold start), time_to_first_step_s, steps (before the first swap,
after the last), server_pid_unchanged, sandbox, model, swaps, seconds.
"""

from __future__ import annotations

import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from agentjet.bench.output import print_result
from agentjet.core import TrainConfig
from agentjet.vibe.errors import VibeError
from agentjet.vibe.run.hot_swap import hot_swap
from agentjet.vibe.run.launch import TrainingRun, launch, stop
from agentjet.vibe.run.launch_options import LaunchOptions
from agentjet.vibe.workspace import Workspace

__all__ = ["CLIENT", "main", "run_hotswap_bench"]

CLIENT = '''"""The one-word task as a workspace client file (edit {edit})."""
from agentjet.tasks.word import FirstWord


def make_task(**params):
    return FirstWord(**params)
'''
_CONFIG = {"grpo": {"group_size": 2}, "collect": {"tasks": 2}, "optim": {"lr": 1e-4}}


def _stderr(line: str) -> None:
    sys.stderr.write(f"[vibe-hotswap] {line}\n")


def _step(run: TrainingRun) -> int:
    with run.swarm() as swarm:
        return int(swarm.status()["step"])


def _swap_all(run: TrainingRun, workspace: Workspace, swaps: int) -> tuple[list[float], list[int]]:
    latencies, steps = [], [_step(run)]
    for edit in range(1, swaps + 1):
        if run.standby is not None:  # a regeneration takes longer than warming the next process: let it warm
            run.standby.wait_ready(120.0)
        path = workspace.write("client.py", CLIENT.format(edit=edit))
        edited = time.time()
        latencies.append(hot_swap(run, path, edited_at=edited))
        steps.append(_step(run))
        if steps[-1] < steps[-2] or not run.server.is_alive():
            raise VibeError(f"the server restarted or lost steps during swap {edit}: steps {steps}")
        _stderr(f"swap {edit}: {latencies[-1]:.2f} s (server step {steps[-1]})")
    return latencies, steps


def run_hotswap_bench(*, model: str = "tiny", swaps: int = 5, sandbox: str = "auto") -> dict[str, Any]:
    """Launch, wait for the first step, hot-swap `swaps` times, stop; returns the figures."""
    if swaps < 1:
        raise VibeError(f"swaps must be >= 1, got {swaps}")
    root = Path(tempfile.mkdtemp(prefix="agentjet-bench-hotswap-"))
    started = time.time()
    try:
        workspace = Workspace(root / "run").init()
        workspace.write("client.py", CLIENT.format(edit=0))
        workspace.commit("bench: the one-word client", ["client.py"])
        options = LaunchOptions(
            model=model,
            steps=10_000,
            sandbox=sandbox,
            allow_unsandboxed=sandbox == "none",
            concurrency=2,
            train_config=TrainConfig.model_validate(_CONFIG),
            eval_rounds=0,
        )
        run = launch(workspace, options=options, started_at=started, progress=_stderr)
        try:
            _wait_first_step(run)
            pid = run.server.pid
            latencies, steps = _swap_all(run, workspace, swaps)
            unchanged = run.server.pid == pid and run.server.is_alive()
        finally:
            stop(run)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    cold = run.server.cold_start_s or 0.0
    p50 = statistics.median(latencies)
    return {
        "hotswap_s_p50": round(p50, 3),
        "hotswap_s": [round(x, 3) for x in latencies],
        "hotswap_s_max": round(max(latencies), 3),
        "server_cold_start_s": round(cold, 3),
        "cold_over_hot": round(cold / p50, 1) if p50 > 0 else None,
        "time_to_first_step_s": round(run.time_to_first_step_s or 0.0, 3),
        "steps": {"before": steps[0], "after": steps[-1]},
        "server_pid_unchanged": unchanged,
        "sandbox": run.sandbox,
        "model": model,
        "swaps": swaps,
        "seconds": round(time.time() - started, 1),
    }


def _wait_first_step(run: TrainingRun, timeout_s: float = 600.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        run.note_step(_step(run))
        if run.first_step_at is not None:
            return
        if run.client.exit_code not in (None, 0):
            raise VibeError(f"the client exited ({run.client.exit_code}):\n{run.client.log_tail()}")
        time.sleep(0.2)
    raise VibeError(f"no training step within {timeout_s:.0f} s")


def main(*, model: str, swaps: int, sandbox: str, as_json: bool) -> dict[str, Any]:
    result = run_hotswap_bench(model=model, swaps=swaps, sandbox=sandbox)
    print_result(result, as_json=as_json)
    return result
