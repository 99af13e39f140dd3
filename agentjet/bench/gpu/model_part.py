"""Part b of the GPU check: rollouts and training updates on a random model of a real shape, through the real code.

The model (`shapes.py`) is served by `TransformersBackend` (bf16 base, a fresh fp32 LoRA adapter
hot-loaded as version 1) and trained by `Trainer` (bf16 base, fp32 adapter and AdamW state):
- `rollout`: tokens/s with 1, 32 and 128 requests in flight (`asyncio.gather` of
  `GenerationRequest`s; short random prompts, a fixed number of new tokens each);
- `train`: one update over the largest level's rollouts (prompt + completion, ~18k tokens at
  7b), its time and peak memory with the backend still resident, as in a server;
- `train_gradient_checkpointing`: the same update with `optim.gradient_checkpointing`;
- `hot_load`: the trained adapter saved and loaded into the backend as version 2, then served.
Each stage asks the budget first and is recorded as skipped rather than started too late.
"""

from __future__ import annotations

import asyncio
import gc
import shutil
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass
from functools import partial
from pathlib import Path
from typing import Any

from agentjet.bench.gpu.budget import SKIPPED_BUDGET, Budget
from agentjet.bench.gpu.memory import MemoryProbe
from agentjet.bench.gpu.shapes import SHAPES, BuiltModel, Shape, ShapeName, build_random_model

__all__ = ["STAGE_NEEDS_S", "StageNeeds", "run_model_part"]

Progress = Callable[[str], None]


@dataclass(frozen=True)
class StageNeeds:
    """Seconds each stage is expected to take at a shape: a stage starts only if they are left."""

    build_s: float
    level_s: float
    train_s: float
    hot_load_s: float


STAGE_NEEDS_S: dict[ShapeName, StageNeeds] = {
    "7b": StageNeeds(build_s=90, level_s=30, train_s=60, hot_load_s=15),
    "135m": StageNeeds(build_s=10, level_s=10, train_s=20, hot_load_s=3),
    "small": StageNeeds(build_s=3, level_s=2, train_s=3, hot_load_s=1),
}


def _free(device: str) -> None:
    gc.collect()
    if device.startswith("cuda"):
        import torch

        torch.cuda.empty_cache()


class _ModelRun:
    """State shared by the stages of one part-b run: the backend, the trainer, the rollouts."""

    def __init__(self, shape: Shape, device: str, built: BuiltModel, folder: Path) -> None:
        self.shape, self.device, self.built, self.folder = shape, device, built, folder
        self.memory = MemoryProbe(device)
        self.backend: Any = None
        self.trainer: Any = None
        self.rollouts: list[tuple[tuple[int, ...], Any]] = []  # (prompt ids, Generation) of the largest level

    def _request(self, key: str, seed: int, max_tokens: int) -> Any:
        import random

        from agentjet.core.types import GenerationRequest, SamplingParams

        rng = random.Random(seed)
        prompt = tuple(rng.randrange(self.built.tokenizer_vocab) for _ in range(self.shape.prompt_tokens))
        return GenerationRequest(key, prompt, SamplingParams(max_tokens=max_tokens, temperature=1.0, seed=seed))

    async def start_backend(self) -> dict[str, Any]:
        import torch

        from agentjet.core.backends.transformers_backend import TransformersBackend

        self.memory.reset()
        started = time.perf_counter()
        self.backend = TransformersBackend(
            self.built.path,
            name="gpu-check",
            max_batch_size=max(self.shape.concurrency),
            device=self.device,
            dtype=torch.bfloat16,
        )
        await self.backend.start()
        load_s = time.perf_counter() - started
        started = time.perf_counter()
        await self.backend.load_adapter(self.built.adapter, 1)
        adapter_s = time.perf_counter() - started
        await self.backend.generate(self._request("warm-up", 0, 4))  # first kernels, not measured
        return {"load_s": round(load_s, 2), "adapter_load_s": round(adapter_s, 2), **self.memory.read()}

    async def rollout(self, level: int) -> dict[str, Any]:
        self.memory.reset()
        requests = [self._request(f"c{level}-{i}", level * 1000 + i, self.shape.new_tokens) for i in range(level)]
        started = time.perf_counter()
        generations = await asyncio.gather(*(self.backend.generate(r) for r in requests))
        seconds = time.perf_counter() - started
        tokens = sum(len(g.completion_ids) for g in generations)
        if level == max(self.shape.concurrency):
            self.rollouts = [(r.prompt_ids, g) for r, g in zip(requests, generations, strict=True)]
        return {
            "requests": level,
            "new_tokens": tokens,
            "seconds": round(seconds, 3),
            "tokens_per_s": round(tokens / seconds, 1),
            "tokens_per_s_per_request": round(tokens / seconds / level, 2),
            **self.memory.read(),
        }

    def _batch(self) -> tuple[list[Any], list[float]]:
        from agentjet.core.episodes.merging import Sample

        samples = [
            Sample(
                episode_id=f"e{i}",
                token_ids=prompt + gen.completion_ids,
                loss_mask=(False,) * len(prompt) + (True,) * len(gen.completion_ids),
                behaviour_logprobs=(0.0,) * len(prompt) + gen.logprobs,
                policy_versions=(-1,) * len(prompt) + (gen.policy_version,) * len(gen.completion_ids),
                calls=((0, 0),),
            )
            for i, (prompt, gen) in enumerate(self.rollouts)
        ]
        return samples, [1.0 if i % 2 == 0 else -1.0 for i in range(len(samples))]  # GRPO-like: mean 0

    async def build_trainer(self) -> dict[str, Any]:
        import torch

        from agentjet.core.config import OptimConfig, TrainConfig
        from agentjet.core.step.trainer import Trainer

        self.memory.reset()
        config = TrainConfig(optim=OptimConfig(micro_batch_tokens=self.shape.micro_batch_tokens))
        started = time.perf_counter()
        self.trainer = await asyncio.to_thread(
            Trainer, self.built.path, config, device=self.device, dtype=torch.bfloat16
        )
        frozen = next(p for p in self.trainer.model.parameters() if not p.requires_grad)
        trained = next(p for p in self.trainer.model.parameters() if p.requires_grad)
        return {
            "load_s": round(time.perf_counter() - started, 2),
            "base_dtype": str(frozen.dtype).removeprefix("torch."),
            "adapter_dtype": str(trained.dtype).removeprefix("torch."),
            "micro_batch_tokens": config.optim.tokens_per_micro_batch(self.device),
        }

    async def train(self, *, gradient_checkpointing: bool) -> dict[str, Any]:
        import torch

        if gradient_checkpointing:
            optim = self.trainer.config.optim.model_copy(update={"gradient_checkpointing": True})
            self.trainer.reconfigure(self.trainer.config.model_copy(update={"optim": optim}))
        samples, advantages = self._batch()
        self.memory.reset()
        started = time.perf_counter()
        stats = await asyncio.to_thread(self.trainer.step, samples, advantages)
        seconds = time.perf_counter() - started
        tokens = sum(len(s.token_ids) for s in samples)
        lora_b = [p for n, p in self.trainer.model.named_parameters() if "lora_B" in n]
        with torch.no_grad():
            b_norm = float(torch.stack([p.float().norm() for p in lora_b]).norm())
        return {
            "update_s": round(seconds, 2),
            "samples": len(samples),
            "tokens": tokens,
            "tokens_trained": stats.tokens_trained,
            "tokens_per_s": round(tokens / seconds, 1),
            "micro_batches": stats.micro_batches,
            "loss": round(stats.loss, 6),
            "grad_norm": round(stats.grad_norm, 6),
            "lora_b_norm": round(b_norm, 6),  # LoRA B starts at 0: > 0 once an update changed the adapter
            "trainer_steps": self.trainer.steps,
            "gradient_checkpointing": gradient_checkpointing,
            **self.memory.read(),
        }

    async def hot_load(self) -> dict[str, Any]:
        path = self.folder / "adapters" / f"step-{self.trainer.steps}"
        started = time.perf_counter()
        await asyncio.to_thread(self.trainer.save_adapter, path)
        save_s = time.perf_counter() - started
        started = time.perf_counter()
        await self.backend.load_adapter(path, 2)
        load_s = time.perf_counter() - started
        served = await self.backend.generate(self._request("after-update", 7, 4))
        return {"save_s": round(save_s, 2), "load_s": round(load_s, 2), "served_policy_version": served.policy_version}

    async def close(self) -> None:
        if self.backend is not None:
            await self.backend.close()
        self.backend = self.trainer = None
        self.rollouts = []
        _free(self.device)


async def _stage(
    result: dict[str, Any], key: str, budget: Budget, need_s: float, run: Callable[[], Awaitable[dict[str, Any]]]
) -> bool:
    """Run one stage into `result[key]` if the budget allows; False when it was skipped or failed."""
    if not budget.allows(need_s):
        result[key] = {"status": SKIPPED_BUDGET}
        return False
    started = time.perf_counter()
    try:
        figures = await run()
    except Exception as exc:  # a CUDA OOM or a backend error: recorded, the later stages skip
        result[key] = {"status": f"error: {type(exc).__name__}: {exc}"[:2000]}
        return False
    result[key] = {"status": "ok", **figures, "seconds": round(time.perf_counter() - started, 2)}
    return True


def _disk_problem(folder: Path, shape: Shape) -> str | None:
    params = (
        shape.layers * (4 * shape.hidden**2 + 3 * shape.hidden * shape.intermediate) + 2 * shape.vocab * shape.hidden
    )
    need = params * 2 * 1.1  # bf16 weights + headroom
    free = shutil.disk_usage(folder).free
    if free < need:
        return f"skipped: disk ({need / 1e9:.1f} GB needed in {folder}, {free / 1e9:.1f} GB free; set TMPDIR)"
    return None


async def run_model_part(shape_name: ShapeName, device: str, budget: Budget, progress: Progress) -> dict[str, Any]:
    """Build, serve and train the random model; one result dict with a block per stage."""
    shape, needs = SHAPES[shape_name], STAGE_NEEDS_S[shape_name]
    result: dict[str, Any] = {"shape": shape_name, **asdict(shape)}
    with tempfile.TemporaryDirectory(prefix="agentjet-gpu-check-") as tmp:
        folder = Path(tmp)
        if problem := _disk_problem(folder, shape):
            return {**result, "status": problem}
        if not budget.allows(needs.build_s):
            return {**result, "status": SKIPPED_BUDGET}
        progress(f"building a random {shape_name} model on {device} (bf16) in {folder}")
        built = build_random_model(shape, folder, device=device)
        _free(device)
        result["build"] = {
            "parameters": built.parameters,
            "build_s": round(built.build_s, 2),
            "save_s": round(built.save_s, 2),
        }
        run = _ModelRun(shape, device, built, folder)
        try:
            await _run_stages(run, result, budget, needs, progress)
        finally:
            await run.close()
    failed = _failed_stages(result)
    return {**result, "status": f"error in {', '.join(failed)}" if failed else "ok"}


def _failed_stages(block: dict[str, Any], prefix: str = "") -> list[str]:
    """Dotted names of the stages whose status is an error (`rollout.128`)."""
    failed: list[str] = []
    for key, value in block.items():
        if isinstance(value, dict):
            if str(value.get("status", "")).startswith("error"):
                failed.append(prefix + key)
            failed += _failed_stages(value, f"{prefix}{key}.")
    return failed


async def _run_stages(
    run: _ModelRun, result: dict[str, Any], budget: Budget, needs: StageNeeds, progress: Progress
) -> None:
    progress("starting the transformers backend with a fresh LoRA adapter")
    if not await _stage(result, "backend", budget, needs.level_s, run.start_backend):
        return
    levels: dict[str, Any] = {}
    for level in run.shape.concurrency:
        progress(f"rollouts: {level} concurrent request(s) x {run.shape.new_tokens} new tokens")
        await _stage(levels, str(level), budget, needs.level_s, partial(run.rollout, level))
    result["rollout"] = levels
    if not run.rollouts:
        result["train"] = {"status": "skipped: no rollouts of the largest level to train on"}
        return
    progress("loading the trainer (a second bf16 copy) and running one update")
    if not await _stage(result, "trainer", budget, needs.train_s, run.build_trainer):
        return
    if not await _stage(result, "train", budget, needs.train_s, partial(run.train, gradient_checkpointing=False)):
        return
    from agentjet.core.config import OptimConfig

    if "gradient_checkpointing" in OptimConfig.model_fields:
        progress("the same update with gradient checkpointing")
        with_gc = partial(run.train, gradient_checkpointing=True)
        await _stage(result, "train_gradient_checkpointing", budget, needs.train_s, with_gc)
    else:
        result["train_gradient_checkpointing"] = {"status": "skipped: OptimConfig has no gradient_checkpointing"}
    progress("hot-loading the trained adapter into the backend")
    await _stage(result, "hot_load", budget, needs.hot_load_s, run.hot_load)
