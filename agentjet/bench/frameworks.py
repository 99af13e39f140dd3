"""`agentjet bench frameworks`: the same task written in several agent frameworks trains the same way.

The arithmetic family's one chat call is written with the openai SDK, LangChain, LangGraph, raw
httpx, AgentScope and AutoGen; the tool-use family's multi-turn tool loop with the openai SDK,
AgentScope and AutoGen (`agentjet/tasks/frameworks/`). For each framework a fresh training
server (same model, same LoRA seed) runs the same seeded GRPO steps; the per-step mean train
reward and loss curves are compared. Episodes run one at a time, so the journal order, the
batches and the sampling seeds are the same in every run: any difference comes from the
framework layer.

Keys: task, frameworks, model, steps, reward_curves and loss_curves (framework -> per-step values),
reward_dispersion and loss_dispersion (max over steps of max - min across frameworks; the
reference system reports < 0.025 for rewards, we aim for 0), tokens_identical (every step's
sampled token ids equal across frameworks), seconds.
"""

from __future__ import annotations

import hashlib
import json
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from agentjet.bench.learn import LearnSettings, train_step, training_server
from agentjet.bench.output import print_result
from agentjet.core.episodes.journal import Journal
from agentjet.core.types import EpisodeStatus
from agentjet.tasks.frameworks import FRAMEWORKS, TOOL_FRAMEWORKS, Framework
from agentjet.tasks.registry import load_family

__all__ = ["TASK_FRAMEWORKS", "dispersion", "main", "run_frameworks_bench"]

TASK_FRAMEWORKS: Mapping[str, tuple[Framework, ...]] = {"arithmetic": FRAMEWORKS, "tool_use": TOOL_FRAMEWORKS}
Progress = Callable[[str], None]


def _stderr(message: str) -> None:
    sys.stderr.write(f"[bench frameworks] {message}\n")
    sys.stderr.flush()


def dispersion(curves: Mapping[str, Sequence[float]]) -> float:
    """Max over steps of the spread (max - min) of the curves; curves must have equal length."""
    lengths = {len(c) for c in curves.values()}
    if len(lengths) != 1:
        raise ValueError(f"curves of different lengths: {sorted(lengths)}")
    return max((max(values) - min(values) for values in zip(*curves.values(), strict=True)), default=0.0)


def _run_one(settings: LearnSettings, framework: str) -> tuple[list[float], list[float], str]:
    """(reward per step, loss per step, digest of every sampled token id in journal order)."""
    family = load_family(settings.task, {**(settings.params or {}), "framework": framework})
    rewards: list[float] = []
    with training_server(settings, 1) as (client, state), ThreadPoolExecutor(1) as pool:
        for step in range(settings.steps or 1):
            played, _ = train_step(pool, client, family, settings, step)
            rewards.append(sum(played) / len(played))
        lines = [json.loads(line) for line in (state / "metrics.jsonl").read_text().splitlines() if line.strip()]
        digest = hashlib.sha256()
        journal = Journal(state / "journal.sqlite")
        for _seq, record in journal.read_from(0, status=EpisodeStatus.ENDED):
            for call in record.calls:
                digest.update(json.dumps([record.task_id, call.prompt_ids, call.completion_ids]).encode())
        journal.close()
    losses = [float(line["loss"]) for line in sorted(lines, key=lambda m: m["step"])]
    return rewards, losses, digest.hexdigest()


def run_frameworks_bench(
    *,
    task: str = "arithmetic",
    model: str = "tiny",
    steps: int = 3,
    params: Mapping[str, Any] | None = None,
    progress: Progress = _stderr,
) -> dict[str, Any]:
    if task not in TASK_FRAMEWORKS:
        raise ValueError(f"bench frameworks runs {' or '.join(TASK_FRAMEWORKS)}; got {task!r}")
    if "framework" in (params or {}):
        raise ValueError("bench frameworks sets the framework of each run itself; drop --param framework=...")
    frameworks = TASK_FRAMEWORKS[task]
    started = time.perf_counter()
    settings = LearnSettings(
        task=task, params=dict(params or {}), model=model, steps=steps, tasks_per_step=1, group_size=4
    )
    rewards: dict[str, list[float]] = {}
    losses: dict[str, list[float]] = {}
    digests: dict[str, str] = {}
    for framework in frameworks:
        progress(f"{framework}: {steps} steps on a fresh {model} server")
        rewards[framework], losses[framework], digests[framework] = _run_one(settings, framework)
        progress(f"{framework}: rewards {rewards[framework]} losses {[round(x, 6) for x in losses[framework]]}")
    return {
        "task": task,
        "frameworks": list(frameworks),
        "model": model,
        "steps": steps,
        "reward_curves": rewards,
        "loss_curves": losses,
        "reward_dispersion": dispersion(rewards),
        "loss_dispersion": dispersion(losses),
        "tokens_identical": len(set(digests.values())) == 1,
        "seconds": round(time.perf_counter() - started, 1),
    }


def main(*, task: str, model: str, steps: int, params: Mapping[str, Any], as_json: bool) -> dict[str, Any]:
    result = run_frameworks_bench(task=task, model=model, steps=steps, params=params)
    print_result(result, as_json=as_json)
    return result
