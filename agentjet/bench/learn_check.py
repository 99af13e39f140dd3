"""`agentjet bench learn-check`: does GRPO through a real swarm server raise the reward within a few steps?

A real server (uvicorn on loopback, the embedded transformers backend, LoRA trainer) starts on a
fresh state dir with a config tuned to learn fast. Each step, concurrent clients run 16 episodes
through the OpenAI SDK against their episode base URLs: two tasks x a GRPO group of 8, played by the
shared round player (`agentjet.tasks.play.rounds.play_round`). The task is `FirstWord`'s, trivially
verifiable and single-turn: "Reply with just the word 'banana' and nothing else.", reward 1 when the
reply's first word is the given word, else 0. The base SmolLM2-135M-Instruct does it now and then (its
replies often open with "Sure!" or "I'm sorry"), so GRPO groups carry signal. Rounds are synchronous:
the next round's episodes start once the server has trained on this one and hot-loaded the adapter, so
every step samples from the newest policy. A failed episode fails the check.

The per-step mean train reward comes from the server's `metrics.jsonl`; the curve is written to
`OUT/learning_curve.png`, and the figures to stdout as JSON: steps, reward_first3_mean,
reward_last3_mean, rise (last3 - first3), seconds, png, plus rewards (per step), model and out.
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path
from typing import Any

import yaml

from agentjet.bench.learn import read_train_rewards
from agentjet.bench.output import print_result, save_chart
from agentjet.core import SwarmClient, TrainConfig
from agentjet.core.access.tokens import new_admin_token
from agentjet.core.config import ServerSettings
from agentjet.core.server.app import create_app
from agentjet.core.testing import serve_in_thread
from agentjet.tasks.base import POLICY, Endpoint, Outcome, Split, TaskItem
from agentjet.tasks.play.rounds import ended_rewards, play_round, policy_player, wait_for_step, wait_until_rolling
from agentjet.tasks.word import WORDS, FirstWord, first_word_reward

__all__ = ["LEARN_CONFIG", "WORDS", "first_word_reward", "main", "plot_curve", "plot_curves", "run_learn_check"]

Progress = Callable[[str], None]

_TOKEN = new_admin_token()  # a fresh secret per run: benches bind loopback, but tokens are never guessable
_TASKS_PER_STEP = 2
_GROUP_SIZE = 8
_STEP_TIMEOUT_S = 900.0
LEARN_CONFIG: dict[str, Any] = {  # LoRA on every projection, a high lr, 2 tasks x 8 per step
    "grpo": {"group_size": _GROUP_SIZE},
    "lora": {
        "rank": 16,
        "alpha": 32,
        "target_modules": ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"],
    },
    "optim": {"lr": 5e-4},
    "collect": {"strategy": "tasks", "tasks": _TASKS_PER_STEP},
}


def _stderr(message: str) -> None:
    sys.stderr.write(f"[bench learn-check] {message}\n")
    sys.stderr.flush()


class _StepWords:
    """The learn-check round as a task family: step `seed`'s words, `FirstWord`'s chat call, the reply as metadata."""

    name = "learn-check"
    servers: Sequence[str] = (POLICY,)

    def __init__(self) -> None:
        self._word = FirstWord(temperature=1.0, timeout_s=_STEP_TIMEOUT_S)

    def items(self, split: Split, *, count: int, seed: int) -> list[TaskItem]:
        """`count` train words of step `seed` (the list in turn); item t's seed is `seed * 1000 + t * 100`."""
        if split != "train":
            raise ValueError("learn-check has train items only")
        words = [WORDS[(seed * count + t) % len(WORDS)] for t in range(count)]
        return [TaskItem(f"word-{word}", seed * 1000 + t * 100, {"word": word}) for t, word in enumerate(words)]

    def run(self, item: TaskItem, llms: Mapping[str, Endpoint]) -> Outcome:
        outcome = self._word.run(item, llms)
        return Outcome.single(outcome.rewards[POLICY], reply=outcome.metadata["reply"])


def plot_curve(rewards: list[float], path: Path, *, title: str) -> Path:
    """Mean train reward per step (and its 3-step running mean) as a PNG (matplotlib, Agg)."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot as plt
    from matplotlib.ticker import MaxNLocator

    steps = list(range(1, len(rewards) + 1))
    smooth = [sum(rewards[max(0, i - 2) : i + 1]) / len(rewards[max(0, i - 2) : i + 1]) for i in range(len(rewards))]
    fig, ax = plt.subplots(figsize=(7, 4), dpi=120)
    ax.plot(steps, rewards, "o-", alpha=0.5, label="mean train reward (16 episodes)")
    ax.plot(steps, smooth, "-", linewidth=2.5, label="3-step running mean")
    ax.set(xlabel="training step", ylabel="mean reward", ylim=(-0.05, 1.05), title=title)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    return save_chart(fig, ax, path)


def _train(client: SwarmClient, steps: int, progress: Progress) -> None:
    family = _StepWords()
    player = policy_player(client, family, broken=())  # no failure is a broken episode: any one fails the check
    with ThreadPoolExecutor(_TASKS_PER_STEP * _GROUP_SIZE) as pool:
        for step in range(steps):
            started = time.perf_counter()
            items = family.items("train", count=_TASKS_PER_STEP, seed=step)
            jobs = [replace(item, seed=item.seed + k) for item in items for k in range(_GROUP_SIZE)]
            rewards = ended_rewards(play_round(pool, player, jobs, "train"))
            wait_for_step(client, step + 1)
            mean, took_s = sum(rewards) / len(rewards), time.perf_counter() - started
            words = ",".join(str(item.data["word"]) for item in items)
            progress(f"step {step + 1}/{steps} words={words} reward={mean:.3f} ({took_s:.1f} s)")


def run_learn_check(
    model: str,
    steps: int,
    out: Path,
    progress: Progress = _stderr,
    *,
    backend: str = "transformers",
    vllm_python: Path | None = None,
) -> dict[str, Any]:
    """Train `steps` GRPO steps on the word task; write the PNG and metrics to `out`; return the figures.

    `backend` is the server's inference backend (`vllm` samples through `vllm serve` from
    `vllm_python`); the trainer, the seeds and the episodes are the same either way.
    """
    if steps < 1:
        raise ValueError("steps must be >= 1")
    started = time.perf_counter()
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="agentjet-learn-check-") as tmp:
        state = Path(tmp) / "state"
        config = TrainConfig.model_validate({**LEARN_CONFIG, "checkpoint_every": steps})
        config_file = Path(tmp) / "train.yaml"
        config_file.write_text(yaml.safe_dump(config.model_dump(mode="json")))
        settings = ServerSettings(
            model=model, state_dir=state, token=_TOKEN, config=config_file,
            max_batch_size=_TASKS_PER_STEP * _GROUP_SIZE, backend=backend,
            vllm_python=vllm_python if backend == "vllm" else None,
        )  # fmt: skip
        progress(
            f"starting a {model} server, backend {backend} (state {state}); "
            f"{steps} steps of {_TASKS_PER_STEP}x{_GROUP_SIZE} episodes"
        )
        with serve_in_thread(create_app(settings)) as server, SwarmClient(server.url, token=_TOKEN) as client:
            wait_until_rolling(client)
            _train(client, steps, progress)
        shutil.copy(state / "metrics.jsonl", out / "metrics.jsonl")
    rewards = read_train_rewards(out / "metrics.jsonl")
    png = plot_curve(rewards, out / "learning_curve.png", title=f"learn-check: {model}, reply starts with the word")
    first3 = sum(rewards[:3]) / len(rewards[:3])
    last3 = sum(rewards[-3:]) / len(rewards[-3:])
    result: dict[str, Any] = {
        "steps": len(rewards),
        "reward_first3_mean": round(first3, 4),
        "reward_last3_mean": round(last3, 4),
        "rise": round(last3 - first3, 4),
        "seconds": round(time.perf_counter() - started, 1),
        "png": str(png),
        "rewards": [round(r, 4) for r in rewards],
        "model": model,
        "backend": backend,
        "out": str(out),
    }
    (out / "learn_check.json").write_text(json.dumps(result, indent=2) + "\n")
    return result


def plot_curves(curves: dict[str, list[float]], path: Path, *, title: str) -> Path:
    """Several backends' per-step mean train rewards in one PNG (same seeds, same steps)."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot as plt
    from matplotlib.ticker import MaxNLocator

    fig, ax = plt.subplots(figsize=(7, 4), dpi=120)
    for name, rewards in curves.items():
        ax.plot(range(1, len(rewards) + 1), rewards, "o-", label=f"{name} backend")
    ax.set(xlabel="training step", ylabel="mean train reward (16 episodes)", ylim=(-0.05, 1.05), title=title)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    return save_chart(fig, ax, path)


def main(
    model: str, steps: int, out: Path, as_json: bool, backends: tuple[str, ...] = ("transformers",),
    vllm_python: Path | None = None,
) -> dict[str, Any]:  # fmt: skip
    """`agentjet bench learn-check`: run once per backend, write the figures to stdout, return them.

    With several backends each run goes to `out/<backend>/` and both curves to `out/learning_curves.png`.
    """
    if len(backends) == 1:
        result = run_learn_check(model, steps, out, backend=backends[0], vllm_python=vllm_python)
    else:
        runs = {b: run_learn_check(model, steps, out / b, backend=b, vllm_python=vllm_python) for b in backends}
        curves = {b: r["rewards"] for b, r in runs.items()}
        png = plot_curves(curves, out / "learning_curves.png", title=f"learn-check: {model}, one run per backend")
        result = {"model": model, "steps": steps, "png": str(png), "runs": runs}
        (out / "learn_check.json").write_text(json.dumps(result, indent=2) + "\n")
    print_result(result, as_json=as_json)
    return result
