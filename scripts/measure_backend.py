"""Measure TransformersBackend throughput (generated tokens/s) at several concurrency levels.

Usage: python scripts/measure_backend.py [--model smollm2-135m] [--concurrency 1 8 16] [--max-tokens 64] [--repeats 3]
Prints one JSON object: tokens/s per concurrency (best and median of the repeats, since a shared
machine adds noise) and the speed-up of the best over the first concurrency's best.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time

import torch

from agentjet.core.backends.transformers_backend import TransformersBackend
from agentjet.core.models import resolve_model
from agentjet.core.types import GenerationRequest, SamplingParams

_TOPICS = ["the sea", "a cat", "rain", "mountains", "coffee", "trains", "the moon", "a garden",
           "winter", "music", "bread", "a city", "rivers", "books", "wind", "stars"]  # fmt: skip


def _requests(backend: TransformersBackend, n: int, max_tokens: int) -> list[GenerationRequest]:
    requests = []
    for i in range(n):
        messages = [{"role": "user", "content": f"Write a short story about {_TOPICS[i % len(_TOPICS)]}."}]
        ids = backend.tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=True)
        ids = ids["input_ids"] if hasattr(ids, "keys") else ids
        params = SamplingParams(max_tokens=max_tokens, temperature=1.0, seed=i)
        requests.append(GenerationRequest(f"bench-{n}-{i}", tuple(ids), params))
    return requests


async def _tokens_per_s(backend: TransformersBackend, n: int, max_tokens: int) -> float:
    requests = _requests(backend, n, max_tokens)
    start = time.perf_counter()
    generations = await asyncio.gather(*(backend.generate(r) for r in requests))
    elapsed_s = time.perf_counter() - start
    return round(sum(len(g.completion_ids) for g in generations) / elapsed_s, 2)


async def _repeat(backend: TransformersBackend, n: int, max_tokens: int, repeats: int) -> dict[str, float]:
    rates = sorted([await _tokens_per_s(backend, n, max_tokens) for _ in range(repeats)])
    return {"concurrency": n, "best_tokens_per_s": rates[-1], "median_tokens_per_s": rates[len(rates) // 2]}


async def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--model", default="smollm2-135m")
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 8, 16])
    parser.add_argument("--max-tokens", type=int, default=64)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--num-threads", type=int, default=None, help="torch threads (default: all usable cores)")
    args = parser.parse_args(argv)
    backend = TransformersBackend(
        resolve_model(args.model), name=args.model, device=args.device, num_threads=args.num_threads
    )
    await backend.start()
    try:
        await _tokens_per_s(backend, 2, 8)  # warm-up: first forward passes allocate and pick kernels
        runs = [await _repeat(backend, n, args.max_tokens, args.repeats) for n in args.concurrency]
    finally:
        await backend.close()
    base = runs[0]["best_tokens_per_s"]
    for run in runs:
        run["speedup_vs_first"] = round(run["best_tokens_per_s"] / base, 2)
    sys.stdout.write(
        json.dumps(
            {"model": args.model, "max_tokens": args.max_tokens, "threads": torch.get_num_threads(), "runs": runs},
            indent=2,
        )
        + "\n"
    )


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1:]))
