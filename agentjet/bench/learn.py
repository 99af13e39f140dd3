"""`agentjet bench learn TASK`: does training through a real swarm server make the agent better?

A real server (uvicorn on loopback, the embedded transformers backend, the LoRA trainer) starts
on a fresh state dir. First the held-out eval split is played with the base policy (kind
`eval`: never trained, greedy unless `--eval-temperature`), giving `base_accuracy` (share of
episodes with reward 1: exact answers, won games). Then rounds: `tasks_per_step` fresh train
items x a GRPO group of `group_size` episodes (at the family's own temperature), after which the server trains
one step and hot-loads the adapter; every `eval_every` steps, and once more at the end, the
same eval split is played again. Rounds stop when `minutes` of wall time are spent (or
`steps` steps). The JSON says where the policy started and ended, with a 95% interval for the
change (Newcombe), and a PNG shows the train reward per step and the eval accuracy. The rounds
and evals themselves are `agentjet.tasks.play.rounds`; this module is the benchmark around them.

Keys: task, params, model, base_accuracy, final_accuracy, accuracy_change, ci95_low, ci95_high
(of final - base), eval_episodes, steps, minutes, train_rewards, evals ([step, accuracy, reward
mean]), errors, png; for werewolves also win_rate_before and win_rate_after (= the accuracies).
Families that count their answers (werewolves: `invalid` and `actions` per server in the
outcome's metadata) also get eval_invalid_share ([step, share of answers that were invalid]).
"""

from __future__ import annotations

import inspect
import json
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from agentjet.bench.output import print_result, save_chart
from agentjet.core import ServerSettings, SwarmClient, TrainConfig
from agentjet.core.access.tokens import new_admin_token
from agentjet.tasks.base import POLICY, TaskFamily
from agentjet.tasks.play.proportions import Rate, difference_ci, wilson
from agentjet.tasks.play.rounds import (
    EvalResult,
    RoundSettings,
    evaluate,
    play_train_round,
    wait_for_step,
    wait_until_rolling,
)
from agentjet.tasks.registry import load_family

__all__ = [
    "LearnSettings",
    "describe_eval",
    "main",
    "read_train_rewards",
    "run_learn_bench",
    "train_step",
    "training_server",
]

Progress = Callable[[str], None]
_TOKEN = new_admin_token()  # a fresh secret per run: benches bind loopback, but tokens are never guessable


@dataclass(frozen=True)
class LearnSettings:
    task: str = "arithmetic"
    params: Mapping[str, Any] | None = None
    model: str = "smollm2-135m"
    minutes: float = 60.0
    steps: int | None = None  # stop after this many steps even if time is left
    eval_items: int = 64
    eval_every: int = 10
    eval_temperature: float = 0.0
    tasks_per_step: int = 2
    group_size: int = 8
    lr: float = 2e-4
    seed: int = 0

    @property
    def rounds(self) -> RoundSettings:
        """What each train round plays (`agentjet.tasks.play.rounds.play_train_round`)."""
        return RoundSettings(tasks_per_step=self.tasks_per_step, group_size=self.group_size, seed=self.seed)


def _parameters(family: TaskFamily) -> set[str]:
    """The family's constructor parameters: eval plays greedily only where `temperature` is one."""
    return set(inspect.signature(type(family)).parameters)


def _stderr(message: str) -> None:
    sys.stderr.write(f"[bench learn] {message}\n")
    sys.stderr.flush()


def _train_config(settings: LearnSettings) -> TrainConfig:
    """LoRA on every projection, GRPO groups of `group_size`, `tasks_per_step` groups per step."""
    return TrainConfig.model_validate(
        {
            "grpo": {"group_size": settings.group_size},
            "lora": {
                "rank": 16,
                "alpha": 32,
                "target_modules": ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"],
            },
            "optim": {"lr": settings.lr},
            "collect": {"strategy": "tasks", "tasks": settings.tasks_per_step},
            "checkpoint_every": 1000,
        }
    )


def describe_eval(result: EvalResult) -> str:
    """One progress line: solved count, mean reward and, where counted, the invalid-answer share."""
    line = f"{result.solved}/{result.episodes} solved, mean reward {result.reward_mean:.3f}"
    share = result.invalid_share
    return line if share is None else f"{line}, {share:.0%} of {result.actions} answers invalid"


def plot_learning(train: Sequence[float], evals: Sequence[EvalResult], path: Path, *, title: str) -> Path:
    """Train reward per step and eval accuracy (with Wilson 95% bars) on one chart (matplotlib, Agg)."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4), dpi=120)
    ax.plot(range(1, len(train) + 1), train, "-", alpha=0.6, label="mean train reward per step")
    steps = [e.step for e in evals]
    accuracy = [e.solved / e.episodes for e in evals]
    bounds = [wilson(Rate(e.solved, e.episodes)) for e in evals]
    errors = [
        [a - lo for a, (lo, _) in zip(accuracy, bounds, strict=True)],
        [hi - a for a, (_, hi) in zip(accuracy, bounds, strict=True)],
    ]
    ax.errorbar(steps, accuracy, yerr=errors, fmt="o-", linewidth=2, capsize=3, label="held-out eval accuracy (95% CI)")
    low = min([-0.05, *(r - 0.05 for r in train)])  # a penalised reward goes below 0: keep it in view
    ax.set(xlabel="training step", ylabel="reward / accuracy", ylim=(low, 1.05))
    ax.set_title(title, fontsize=9, wrap=True)
    return save_chart(fig, ax, path)


def read_train_rewards(metrics_path: Path) -> list[float]:
    """Mean train reward per step, in step order, from a server's metrics.jsonl (empty if none)."""
    if not metrics_path.exists():
        return []
    lines = [json.loads(line) for line in metrics_path.read_text().splitlines() if line.strip()]
    return [float(m["reward_mean"]) for m in sorted(lines, key=lambda m: m["step"])]


@contextmanager
def training_server(settings: LearnSettings, max_batch: int) -> Iterator[tuple[SwarmClient, Path]]:
    """A fresh in-process training server (own state dir) with `_train_config`, rolling; (client, state dir)."""
    from agentjet.core.server.app import create_app  # here, not at import: the module (LearnSettings,
    from agentjet.core.testing import serve_in_thread  # the chart) loads without torch

    with tempfile.TemporaryDirectory(prefix="agentjet-bench-learn-") as tmp:
        state = Path(tmp) / "state"
        config_file = Path(tmp) / "train.yaml"
        config_file.write_text(yaml.safe_dump(_train_config(settings).model_dump(mode="json")))
        server_settings = ServerSettings(
            model=settings.model, state_dir=state, token=_TOKEN, config=config_file, max_batch_size=max_batch
        )
        with serve_in_thread(create_app(server_settings)) as server, SwarmClient(server.url, token=_TOKEN) as client:
            wait_until_rolling(client)
            yield client, state


def train_step(
    pool: ThreadPoolExecutor, client: SwarmClient, family: TaskFamily, settings: LearnSettings, step: int
) -> tuple[list[float], int]:
    """Play step `step`'s GRPO groups (seeded by the step) and wait until the server trained on them.

    Returns the train rewards and how many episodes had to be replayed.
    """
    rewards, replayed = play_train_round(pool, client, family, settings.rounds, step)
    wait_for_step(client, step + 1)
    return rewards, replayed


def run_learn_bench(settings: LearnSettings, out: Path, progress: Progress = _stderr) -> dict[str, Any]:
    """Evaluate, train for the budget with periodic evals, evaluate again; write PNG + JSON to `out`."""
    started = time.perf_counter()
    params = dict(settings.params or {})
    train_family = load_family(settings.task, params)
    eval_family = (
        load_family(settings.task, {**params, "temperature": settings.eval_temperature})
        if ("temperature" in _parameters(train_family))
        else train_family
    )
    if tuple(train_family.servers) != (POLICY,):
        raise ValueError(f"bench learn trains one policy server; {settings.task!r} needs {list(train_family.servers)}")
    eval_items = eval_family.items("eval", count=settings.eval_items, seed=settings.seed)
    out.mkdir(parents=True, exist_ok=True)
    concurrency = settings.tasks_per_step * settings.group_size
    progress(f"starting a {settings.model} server; task {settings.task} {params}; budget {settings.minutes} min")
    with training_server(settings, concurrency) as (client, state), ThreadPoolExecutor(concurrency) as pool:
        evals = [evaluate(pool, client, eval_family, eval_items, 0)]
        progress(f"base: {describe_eval(evals[0])}")
        errors, step = 0, 0
        deadline = started + settings.minutes * 60
        while time.perf_counter() < deadline and (settings.steps is None or step < settings.steps):
            rewards, failed = train_step(pool, client, train_family, settings, step)
            errors += failed
            step += 1
            minutes = (time.perf_counter() - started) / 60
            progress(f"step {step}: train reward {sum(rewards) / len(rewards):.3f} ({minutes:.1f} min)")
            if step % settings.eval_every == 0:
                evals.append(evaluate(pool, client, eval_family, eval_items, step))
                progress(f"eval at step {step}: {describe_eval(evals[-1])}")
        if evals[-1].step != step:
            evals.append(evaluate(pool, client, eval_family, eval_items, step))
        if (state / "metrics.jsonl").exists():
            shutil.copy(state / "metrics.jsonl", out / "metrics.jsonl")
    train_rewards = read_train_rewards(out / "metrics.jsonl")
    base, final = evals[0], evals[-1]
    low, high = difference_ci(Rate(final.solved, final.episodes), Rate(base.solved, base.episodes))
    png = plot_learning(
        train_rewards, evals, out / "learning_curve.png", title=f"{settings.task} {params}: {settings.model}"
    )
    result: dict[str, Any] = {
        "task": settings.task,
        "params": params,
        "model": settings.model,
        "base_accuracy": round(base.solved / base.episodes, 4),
        "final_accuracy": round(final.solved / final.episodes, 4),
        "accuracy_change": round(final.solved / final.episodes - base.solved / base.episodes, 4),
        "ci95_low": round(low, 4),
        "ci95_high": round(high, 4),
        "eval_episodes": final.episodes,
        "steps": step,
        "minutes": round((time.perf_counter() - started) / 60, 2),
        "train_rewards": [round(r, 4) for r in train_rewards],
        "evals": [[e.step, round(e.solved / e.episodes, 4), round(e.reward_mean, 4)] for e in evals],
        "errors": errors,
        "png": str(png),
    }
    if any(e.invalid_share is not None for e in evals):
        result["eval_invalid_share"] = [[e.step, round(e.invalid_share or 0.0, 4)] for e in evals]
    if settings.task == "werewolves":
        result["win_rate_before"], result["win_rate_after"] = result["base_accuracy"], result["final_accuracy"]
    (out / "learn.json").write_text(json.dumps(result, indent=2) + "\n")
    return result


def main(settings: LearnSettings, out: Path, *, as_json: bool) -> dict[str, Any]:
    result = run_learn_bench(settings, out)
    print_result(result, as_json=as_json)
    return result
