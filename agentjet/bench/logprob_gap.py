"""`agentjet bench logprob-gap`: how far the sampler's logprobs are from the trainer's on the same tokens.

A backend built as the server builds it (`backends.factory.build_backend`: `--backend`,
`--device`, one run per sampler `--dtype`) samples completions of chat prompts rendered with the
model's chat template, at `--temperature`, recording each sampled token's logprob. The trainer's
forward (`trainer.Trainer` at step 0: the base model under a fresh LoRA adapter, scored with
`trainer.sequence_logprobs`) then scores those exact token ids in float32 and in bfloat16.
Per (sampler, trainer dtype) pair, with delta = trainer logprob - sampler logprob per sampled
token: abs_gap_mean/p50/p99/max of |delta|, signed_gap_mean, tokens, is_weight_mean (the mean
of exp(delta): the importance weight pi_old / pi_sampler that truncated importance sampling
corrects with, `grpo.tis`) and above_cap_fraction (the share of tokens whose weight exceeds
`grpo.tis_cap`, which TIS truncates).

A transformers sampler in float32 against the float32 trainer is the sanity line: the same
weights in the same precision, so the gap is float rounding: ~3e-7 on `tiny`, ~1e-5 on
smollm2-135m, where the vocabulary projection of one row per decode step (the sampler) and of
many rows at once (the trainer) round differently. Measured on smollm2-135m (CPU, 16 x 64
tokens, docs/bench-gpu-core/logprob-gap-transformers.json): a bf16 sampler against the fp32
trainer has a mean |gap| of 0.036 nat, p99 0.17, max 0.26. Keys: model, backend, device,
prompts, max_tokens, temperature, tis_cap, pairs (a list of the per-pair figures above, each with
sampler, sampler_dtype and trainer_dtype), sanity (that line's abs_gap_mean, or null), wall_s.
"""

from __future__ import annotations

import asyncio
import json
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentjet.bench.output import print_result

__all__ = ["PROMPTS", "SampledSequence", "gap_figures", "main", "run_logprob_gap_bench"]

Progress = Callable[[str], None]
TRAINER_DTYPES = ("float32", "bfloat16")

PROMPTS = (
    "Write a haiku about the sea.",
    "Explain what a hash table is in two sentences.",
    "What is 17 times 23? Show your work.",
    "Give me three tips for a job interview.",
    "Translate 'good morning, how are you?' into French.",
    "Write a short story that begins with a knock at the door.",
    "List the planets of the solar system in order.",
    "Why is the sky blue?",
    "Write a Python function that reverses a string.",
    "Describe the taste of a lemon to someone who has never had one.",
    "What are the rules of tic-tac-toe?",
    "Summarise the plot of Romeo and Juliet.",
    "Suggest a name for a friendly robot and explain it.",
    "How do plants make their food?",
    "Write a limerick about a cat who loves cheese.",
    "Compare cats and dogs as pets.",
)


def _stderr(message: str) -> None:
    sys.stderr.write(f"[bench logprob-gap] {message}\n")
    sys.stderr.flush()


@dataclass(frozen=True)
class SampledSequence:
    """One sampled completion: the exact prompt and completion ids and the sampler's logprobs."""

    prompt_ids: tuple[int, ...]
    completion_ids: tuple[int, ...]
    logprobs: tuple[float, ...]


def gap_figures(trainer: Sequence[float], sampler: Sequence[float], *, tis_cap: float) -> dict[str, Any]:
    """The figures of one pair from per-token logprobs (same tokens, same order)."""
    import torch

    if len(trainer) != len(sampler) or not trainer:
        raise ValueError(f"need equally many tokens, at least one: trainer {len(trainer)}, sampler {len(sampler)}")
    delta = torch.tensor(trainer, dtype=torch.float64) - torch.tensor(sampler, dtype=torch.float64)  # (N,)
    gap = delta.abs()
    weight = delta.exp()  # pi_old / pi_sampler
    return {
        "tokens": len(trainer),
        "abs_gap_mean": gap.mean().item(),
        "abs_gap_p50": gap.quantile(0.5).item(),
        "abs_gap_p99": gap.quantile(0.99).item(),
        "abs_gap_max": gap.max().item(),
        "signed_gap_mean": delta.mean().item(),
        "is_weight_mean": weight.mean().item(),
        "above_cap_fraction": (weight > tis_cap).double().mean().item(),
    }


async def _sample(
    settings: Any, *, prompts: int, max_tokens: int, temperature: float, progress: Progress
) -> list[SampledSequence]:
    """`prompts` completions from the backend `settings` asks for, all requests in flight at once."""
    from agentjet.core.backends.factory import build_backend
    from agentjet.core.chat_format import render_prompt
    from agentjet.core.types import GenerationRequest, SamplingParams

    backend = build_backend(settings)
    await backend.start()
    try:
        requests = []
        for index in range(prompts):
            messages = [{"role": "user", "content": PROMPTS[index % len(PROMPTS)]}]
            ids = render_prompt(backend.tokenizer, messages, None).ids
            params = SamplingParams(max_tokens=max_tokens, temperature=temperature, seed=index)
            requests.append(GenerationRequest(f"gap-{index}", ids, params))
        started = time.perf_counter()
        generations = await asyncio.gather(*(backend.generate(r) for r in requests))
        tokens = sum(len(g.completion_ids) for g in generations)
        progress(f"sampled {tokens} tokens in {time.perf_counter() - started:.1f} s")
    finally:
        await backend.close()
    return [
        SampledSequence(r.prompt_ids, g.completion_ids, g.logprobs)
        for r, g in zip(requests, generations, strict=True)
        if g.completion_ids
    ]


def _score(trainer: Any, sequences: Sequence[SampledSequence], temperature: float) -> list[float]:
    """The trainer's logprob of every sampled token, one sequence per forward (no padding)."""
    import torch

    from agentjet.core.step.trainer import sequence_logprobs

    scored: list[float] = []
    with torch.no_grad():
        for seq in sequences:
            ids = torch.tensor([[*seq.prompt_ids, *seq.completion_ids]], device=trainer.device)  # (1, T)
            start = len(seq.prompt_ids) - 1  # row t predicts token t + 1
            positions = torch.arange(start, start + len(seq.completion_ids), device=trainer.device)  # (n,)
            tempered = None
            if temperature not in (0.0, 1.0):  # greedy is scored on plain logits, like the server records it
                tempered = torch.full((1, len(positions)), temperature, device=trainer.device)
            out = sequence_logprobs(
                trainer.model, ids, torch.ones_like(ids), positions=positions, temperatures=tempered
            )
            scored += out[0].tolist()
    return scored


def run_logprob_gap_bench(
    *,
    model: str = "smollm2-135m",
    backend: str = "transformers",
    device: str = "auto",
    sampler_dtypes: Sequence[str] = ("float32", "bfloat16"),
    prompts: int = 16,
    max_tokens: int = 64,
    temperature: float = 1.0,
    settings_overrides: dict[str, Any] | None = None,
    progress: Progress = _stderr,
) -> dict[str, Any]:
    """Sample with each sampler dtype, score with the trainer in each of TRAINER_DTYPES; the figures."""
    import torch

    from agentjet.core.config import GrpoConfig, ServerSettings, TrainConfig
    from agentjet.core.models import resolve_model
    from agentjet.core.placement import resolve_placement
    from agentjet.core.step.trainer import Trainer

    started = time.perf_counter()
    tis_cap = GrpoConfig().tis_cap
    where = resolve_placement(device, "float32")
    sampled: dict[str, tuple[str, list[SampledSequence]]] = {}  # label -> (sampler dtype, sequences)
    with tempfile.TemporaryDirectory(prefix="logprob-gap-") as state_dir:
        for dtype in sampler_dtypes:
            placement = resolve_placement(device, dtype)
            settings = ServerSettings(
                model=model,
                backend=backend,  # checked by ServerSettings
                device=placement.device,
                dtype=placement.dtype,
                max_batch_size=max(1, prompts),
                state_dir=Path(state_dir),
                **(settings_overrides or {}),
            )
            label = f"{backend}/{placement.dtype}"
            progress(f"sampler {label} on {placement.device}: {prompts} prompts x {max_tokens} tokens, T={temperature}")
            sequences = asyncio.run(
                _sample(settings, prompts=prompts, max_tokens=max_tokens, temperature=temperature, progress=progress)
            )
            sampled[label] = (placement.dtype, sequences)
    model_path = resolve_model(model)
    pairs: list[dict[str, Any]] = []
    for trainer_dtype in TRAINER_DTYPES:
        torch_dtype = {"float32": torch.float32, "bfloat16": torch.bfloat16}[trainer_dtype]
        trainer = Trainer(model_path, TrainConfig(), device=where.device, dtype=torch_dtype)
        for label, (sampler_dtype, sequences) in sampled.items():
            trainer_lps = _score(trainer, sequences, temperature)
            sampler_lps = [lp for seq in sequences for lp in seq.logprobs]
            figures = gap_figures(trainer_lps, sampler_lps, tis_cap=tis_cap)
            pairs.append({"sampler": label, "sampler_dtype": sampler_dtype, "trainer_dtype": trainer_dtype, **figures})
            progress(
                f"{label} vs trainer {trainer_dtype}: mean |gap| {figures['abs_gap_mean']:.3g}, "
                f"p99 {figures['abs_gap_p99']:.3g}, max {figures['abs_gap_max']:.3g} over {figures['tokens']} tokens"
            )
        del trainer
    sanity = next(
        (
            p["abs_gap_mean"]
            for p in pairs
            if p["sampler"] == "transformers/float32" and p["trainer_dtype"] == "float32"
        ),
        None,
    )
    return {
        "model": model,
        "backend": backend,
        "device": where.device,
        "prompts": prompts,
        "max_tokens": max_tokens,
        "temperature": temperature,
        "tis_cap": tis_cap,
        "pairs": pairs,
        "sanity": sanity,
        "wall_s": round(time.perf_counter() - started, 1),
    }


def _table(result: dict[str, Any]) -> dict[str, Any]:
    """The result as `key value` lines: one per pair."""
    lines = {k: v for k, v in result.items() if k != "pairs"}
    for pair in result["pairs"]:
        lines[f"{pair['sampler']} vs trainer {pair['trainer_dtype']}"] = (
            f"|gap| mean {pair['abs_gap_mean']:.3g} p50 {pair['abs_gap_p50']:.3g} p99 {pair['abs_gap_p99']:.3g} "
            f"max {pair['abs_gap_max']:.3g}  IS weight mean {pair['is_weight_mean']:.4f}  "
            f"above cap {pair['above_cap_fraction']:.2%}  ({pair['tokens']} tokens)"
        )
    return lines


def main(*, as_json: bool, out: Path | None = None, **options: Any) -> int:
    result = run_logprob_gap_bench(**options)
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(result, indent=2) + "\n")
    print_result(result if as_json else _table(result), as_json=as_json)
    return 0
