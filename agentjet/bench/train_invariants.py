"""Seeded training curves that must not depend on how a batch is cut: the nightly invariants' source.

The trainer promises (`core/step/trainer.py`) that timeline merging, group prefix sharing and
micro-batching change the cost of an update, never its loss or its gradients: the loss is a
token mean over the whole batch, each micro-batch's sum divided by the batch total. This module
trains the same seeded GRPO batch of the synthetic tool-using agent (`agent_workload.py`) for a
few steps in each of those ways and returns the per-step loss, gradient norm and KL. Variants of
one equivalence class must give the same curve up to float rounding; a commit that moves the
curve of a class changed what training computes (`agentjet/nightly/invariants.py` checks the
curves against committed references).

The batch: one GRPO group of 8 episodes of 2 tool calls each (about 965 tokens per episode, 70 of
them sampled), with behaviour logprobs from the freshly built policy (as `merging.on_policy`),
trained for `steps` AdamW steps on that same batch with a KL term to the base model. From the
second step on the policy has moved away from its behaviour logprobs, so the importance ratio,
the KL and (from the third step on) the clip all take part; a learning rate far above the default
makes that happen within a few steps on `tiny`.

Variants (each changes one knob; LoRA, lr and the rest as `_SHAPE`):
  merge-off, merge-token, merge-text  the timeline merging level: one sample per call, per episode
  prefix-off, prefix-on               token merge, group prefix sharing off / on
  micro-1x8, micro-8x1                token merge, no prefix sharing: one micro-batch of all 8 samples
                                      (a budget no batch reaches) / 8 micro-batches of one (the
                                      smallest budget, below every sample's length)
Every pair is truly equivalent, the gradient norm included: each micro-batch is divided by the
whole batch's trainable tokens, not its own, so cutting the batch differently changes nothing.

Deterministic: seeded workload, `Trainer(seed=...)`, `torch.use_deterministic_algorithms(True)`
and a fixed intra-op thread count, each restored on return. In-process, CPU, float32. The
tokenizer, workload and behaviour logprobs (the same for every variant) are cached per process.
"""

from __future__ import annotations

import functools
import math
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import replace
from typing import Any

__all__ = ["QUANTITIES", "VARIANTS", "main", "natural_spread", "train_curve"]

QUANTITIES = ("loss", "grad_norm", "kl")  # what a curve records per step, in StepStats' names

_ONE_PACK = 1_000_000  # a micro-batch token budget no batch of 8 reaches: one micro-batch
_ALONE = 64  # OptimConfig's smallest budget: below every sample's length, so each sample travels alone
VARIANTS: dict[str, tuple[str, dict[str, Any]]] = {  # variant -> (merge level, OptimConfig overrides)
    "merge-off": ("off", {"share_prefix": False}),
    "merge-token": ("token", {"share_prefix": False}),
    "merge-text": ("text", {"share_prefix": False}),
    "prefix-off": ("token", {"share_prefix": False}),
    "prefix-on": ("token", {"share_prefix": True}),
    "micro-1x8": ("token", {"share_prefix": False, "micro_batch_tokens": _ONE_PACK}),
    "micro-8x1": ("token", {"share_prefix": False, "micro_batch_tokens": _ALONE}),
}
_SHAPE = {"groups": 1, "group_size": 8, "turns": 2}
_LR = 2e-3  # 200x the default: the curve moves (ratio, KL, clip) within 4 steps


@contextmanager
def _deterministic(threads: int) -> Iterator[None]:
    """Deterministic kernels and `threads` intra-op threads inside; the caller's settings back after."""
    import torch

    old_threads = torch.get_num_threads()
    old_deterministic = torch.are_deterministic_algorithms_enabled()
    old_warn_only = torch.is_deterministic_algorithms_warn_only_enabled()
    torch.set_num_threads(threads)
    torch.use_deterministic_algorithms(True)
    try:
        yield
    finally:
        torch.use_deterministic_algorithms(old_deterministic, warn_only=old_warn_only)
        torch.set_num_threads(old_threads)


def _on_policy(model: Any, episodes: Sequence[Any]) -> list[Any]:
    """`merging.on_policy`, with the vocabulary projection only where a completion token is predicted.

    One no-grad forward per episode over its token-merged timeline: completion k sits right after
    prompt k, so its tokens are predicted from positions len(prompt k) - 1 on.
    """
    import torch

    from agentjet.core.episodes.merging import merge_timelines
    from agentjet.core.step.trainer import sequence_logprobs

    out = []
    for episode in episodes:
        (timeline,), _ = merge_timelines(episode.calls, match="token")
        ids = torch.tensor([list(timeline.token_ids)])  # (1, T)
        positions = [len(c.prompt_ids) - 1 + i for c in episode.calls for i in range(len(c.completion_ids))]
        with torch.no_grad():
            lps = sequence_logprobs(model, ids, torch.ones_like(ids), positions=torch.tensor(positions))  # (1, K)
        values = iter(lps[0].tolist())  # in call order
        calls = [replace(c, completion_logprobs=tuple(next(values) for _ in c.completion_ids)) for c in episode.calls]
        out.append(replace(episode, calls=calls))
    return out


@functools.lru_cache(maxsize=4)
def _batch(model: str, seed: int, threads: int) -> tuple[Any, ...]:
    """The workload's episodes with on-policy behaviour logprobs under the seed's initial weights.

    Called inside `_deterministic(threads)`; the same for every variant, so computed once per process.
    """
    from transformers import AutoTokenizer

    from agentjet.bench.agent_workload import build_workload
    from agentjet.core.config import TrainConfig
    from agentjet.core.models import resolve_model
    from agentjet.core.step.trainer import Trainer

    model_path = resolve_model(model)
    episodes = build_workload(AutoTokenizer.from_pretrained(model_path), seed=seed, **_SHAPE)
    trainer = Trainer(model_path, TrainConfig(), seed=seed)  # the LoRA init every variant starts from
    return tuple(_on_policy(trainer.model, episodes))


def train_curve(
    variant: str, *, steps: int = 4, model: str = "tiny", seed: int = 0, kl_coef: float = 0.05, threads: int = 1
) -> dict[str, list[float]]:
    """Per-step `loss`, `grad_norm` (before clipping) and `kl` of `steps` seeded GRPO updates in `variant`.

    A step the trainer refuses as non-finite (`NonFiniteStep`) and every step after it read NaN.
    `threads`: torch's intra-op threads while training (1 for the nightly; other counts show how
    far float reduction order alone moves a curve).
    """
    if variant not in VARIANTS:
        raise ValueError(f"unknown variant {variant!r}; known: {', '.join(VARIANTS)}")
    if steps < 1:
        raise ValueError(f"steps must be >= 1, got {steps}")
    import torch

    from agentjet.bench.merging import episode_samples
    from agentjet.core.config import GrpoConfig, OptimConfig, TrainConfig
    from agentjet.core.errors import NonFiniteStep
    from agentjet.core.models import resolve_model
    from agentjet.core.step.trainer import Trainer

    match, optim = VARIANTS[variant]
    config = TrainConfig(
        merge=match,  # a VARIANTS level: off, token or text
        grpo=GrpoConfig(group_size=_SHAPE["group_size"], kl_coef=kl_coef),
        optim=OptimConfig(lr=_LR, **optim),
    )
    curve: dict[str, list[float]] = {name: [] for name in QUANTITIES}
    with _deterministic(threads):
        episodes = _batch(model, seed, threads)
        samples, advantages = episode_samples(episodes, match)
        torch.manual_seed(seed)
        trainer = Trainer(resolve_model(model), config, seed=seed)
        for _ in range(steps):
            try:
                stats = trainer.step(samples, advantages)
            except NonFiniteStep:
                break
            for name in QUANTITIES:
                curve[name].append(float(getattr(stats, name)))
    for values in curve.values():
        values.extend([math.nan] * (steps - len(values)))
    return curve


def natural_spread(
    variants: Sequence[str], *, steps: int = 4, threads: Sequence[int] = (1, 2), repeats: int = 2
) -> dict[str, Any]:
    """How far float rounding alone moves the curves of `variants` (one equivalence class).

    Each variant is trained `repeats` times under each thread count (the behaviour logprobs are
    recomputed per thread count, the cache cleared first); every curve is compared with the first.
    Returns the largest |x - ref| / |ref| (`rel`, over entries with ref != 0) and |x - ref| (`abs`)
    per quantity, their maxima over quantities, and whether the repeats at one thread count were
    bit-identical (`repeatable`).
    """
    _batch.cache_clear()
    curves: list[tuple[int, dict[str, list[float]]]] = []
    for count in threads:
        for variant in variants:
            curves.extend((count, train_curve(variant, steps=steps, threads=count)) for _ in range(repeats))
    _batch.cache_clear()
    _, first = curves[0]
    rel = {name: 0.0 for name in QUANTITIES}
    absolute = {name: 0.0 for name in QUANTITIES}
    for _, curve in curves[1:]:
        for name in QUANTITIES:
            for x, ref in zip(curve[name], first[name], strict=True):
                absolute[name] = max(absolute[name], abs(x - ref))
                if ref:
                    rel[name] = max(rel[name], abs(x - ref) / abs(ref))
    same_threads: dict[tuple[int, int], dict[str, list[float]]] = {}
    repeatable = True
    for index, (count, curve) in enumerate(curves):
        key = (count, index // repeats)  # one variant at one thread count
        repeatable = repeatable and same_threads.setdefault(key, curve) == curve
    return {
        "rel": rel,
        "abs": absolute,
        "max_rel": max(rel.values()),
        "max_abs": max(absolute.values()),
        "repeatable": repeatable,
        "curves": len(curves),
    }


def main(variant: str = "merge-token", steps: str = "4") -> int:
    import json

    sys.stdout.write(json.dumps(train_curve(variant, steps=int(steps))) + "\n")
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main(*sys.argv[1:3]))
