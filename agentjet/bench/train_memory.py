"""`agentjet bench train-memory`: peak memory and time of one update per micro-batch budget.

`optim.micro_batch_tokens` bounds how many tokens go through one forward + backward; on a CPU
the activations of that many tokens dominate the trainer's memory. Each budget is measured in a
process of its own (a process's peak RSS never goes down, so budgets cannot share one): the
synthetic tool-using agent's batch (`agent_workload.py`, merge off: one sample per call, with
group prefix sharing, as a multi-call game like werewolves trains) gets one full `Trainer.step`.

Keys: model, groups, default_budget, and per budget (`runs["1024"]`, ...): update_s,
peak_rss_gb (the worker's whole peak: model, workload and the update), rss_before_gb (before
the update), samples, tokens, micro_batches.
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

from agentjet.bench.output import print_result

__all__ = ["main", "measure_budget", "run_train_memory_bench"]

Progress = Callable[[str], None]
_MARK = "TRAIN-MEMORY "


def _stderr(message: str) -> None:
    sys.stderr.write(f"[bench train-memory] {message}\n")
    sys.stderr.flush()


def measure_budget(budget: int, *, model: str, groups: int) -> dict[str, Any]:
    """One update of the workload under `budget` tokens per micro-batch, in this process."""
    import psutil
    from transformers import AutoTokenizer

    from agentjet.bench.agent_workload import build_workload
    from agentjet.bench.merging import episode_samples, on_policy
    from agentjet.core.config import OptimConfig, TrainConfig
    from agentjet.core.models import resolve_model
    from agentjet.core.step.trainer import Trainer

    model_path = resolve_model(model)
    trainer = Trainer(model_path, TrainConfig(optim=OptimConfig(micro_batch_tokens=budget)), seed=0)
    episodes = on_policy(trainer, build_workload(AutoTokenizer.from_pretrained(model_path), groups=groups))
    samples, advantages = episode_samples(episodes, "off")
    before = psutil.Process().memory_info().rss
    started = time.perf_counter()
    stats = trainer.step(samples, advantages)
    return {
        "update_s": round(time.perf_counter() - started, 2),
        "peak_rss_gb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024**2, 2),  # KiB -> GiB
        "rss_before_gb": round(before / 1024**3, 2),
        "samples": len(samples),
        "tokens": sum(len(s.token_ids) for s in samples),
        "micro_batches": stats.micro_batches,
    }


def run_train_memory_bench(
    *, model: str, budgets: Sequence[int], groups: int = 1, progress: Progress = _stderr
) -> dict[str, Any]:
    from agentjet.core.config import OptimConfig

    default_budget = OptimConfig().tokens_per_micro_batch("cpu")
    result: dict[str, Any] = {"model": model, "groups": groups, "default_budget": default_budget}
    runs: dict[str, Any] = {}
    for budget in budgets:
        progress(f"micro_batch_tokens={budget}: one update in a fresh process")
        argv = [sys.executable, "-m", "agentjet.bench.train_memory", str(budget), model, str(groups)]
        done = subprocess.run(argv, capture_output=True, text=True, check=False)
        line = next((x for x in reversed(done.stdout.splitlines()) if x.startswith(_MARK)), None)
        if done.returncode != 0 or line is None:
            tail = "\n".join(done.stderr.strip().splitlines()[-10:])
            raise RuntimeError(f"the budget {budget} worker failed (exit {done.returncode}):\n{tail}")
        runs[str(budget)] = json.loads(line.removeprefix(_MARK))
        progress(f"micro_batch_tokens={budget}: {runs[str(budget)]}")
    result["runs"] = runs
    return result


def main(*, model: str, budgets: Sequence[int], groups: int, as_json: bool) -> int:
    print_result(run_train_memory_bench(model=model, budgets=budgets, groups=groups), as_json=as_json)
    return 0


if __name__ == "__main__":  # the worker: BUDGET MODEL GROUPS
    measured = measure_budget(int(sys.argv[1]), model=sys.argv[2], groups=int(sys.argv[3]))
    sys.stdout.write(_MARK + json.dumps(measured) + "\n")
