"""Replay a vibe run's first round of games against the serving backend alone, timed (JSON out).

Why: a round's wall time mixes the backend's work with HTTP, the sandboxed clients and the game
logic; replaying its recorded calls straight into a `TransformersBackend` (each episode's calls in
order, every episode at once, each call sampling as many tokens as it did) shows what the backend
alone needs, and lets a prompt layout or a backend setting be compared on the same traffic. The
round is the held-out episodes of the base policy (`launch.json`'s `eval_before`) and step 1's
training episodes (`metrics.jsonl`), as they ran side by side (docs/vibe.md, *Where the first
step's time goes*).

Run from the checkout on a vibe run's folder, with tcmalloc as a server has it, e.g.
`LD_PRELOAD=/lib/x86_64-linux-gnu/libtcmalloc_minimal.so.4 .venv/bin/python scripts/replay_round.py RUN`
(`--prefix-cache-tokens 0` turns the prefix cache off; prints JSON: episodes, calls, tokens, seconds).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run", type=Path, help="a vibe run's folder (it holds state/launch.json)")
    parser.add_argument("--model", default="smollm2-135m", help="the base model (default smollm2-135m)")
    parser.add_argument("--max-batch-size", type=int, default=32, help="the server's running batch (default 32)")
    parser.add_argument("--prefix-cache-tokens", type=int, default=8192, help="0 turns the prefix cache off")
    args = parser.parse_args()

    import torch
    from vibe_run_folder import require, step_episode_seqs

    from agentjet.core.backends.transformers_backend import TransformersBackend
    from agentjet.core.episodes.journal import Journal
    from agentjet.core.models import resolve_model
    from agentjet.core.types import CallRecord, GenerationRequest, SamplingParams

    launch, metrics, journal = require(args.run, "state/launch.json", "state/metrics.jsonl", "state/journal.sqlite")
    held_out = set(json.loads(launch.read_text()).get("eval_before") or [])
    if not held_out:
        sys.exit(f"{launch} names no held-out round of the base policy (eval_before)")
    trained = step_episode_seqs(metrics, 1)
    episodes = [
        sorted(record.calls, key=lambda call: call.started_at)
        for seq, record in Journal(journal).read_from(0)
        if seq in trained or record.episode_id in held_out
    ]

    async def replay() -> float:
        backend = TransformersBackend(
            resolve_model(args.model),
            name="replay",
            max_batch_size=args.max_batch_size,
            dtype=torch.bfloat16,
            prefix_cache_tokens=args.prefix_cache_tokens,
        )
        await backend.start()

        async def play(index: int, calls: list[CallRecord]) -> None:
            for turn, call in enumerate(calls):
                params = SamplingParams(max_tokens=max(1, len(call.completion_ids)), temperature=0.5, seed=turn)
                await backend.generate(GenerationRequest(f"{index}-{turn}", call.prompt_ids, params))

        started = time.monotonic()
        try:
            await asyncio.gather(*(play(i, calls) for i, calls in enumerate(episodes)))
            return time.monotonic() - started
        finally:
            await backend.close()

    seconds = asyncio.run(replay())
    calls = [call for episode in episodes for call in episode]
    out: dict[str, Any] = {
        "episodes": len(episodes),
        "calls": len(calls),
        "prompt_tokens": sum(len(c.prompt_ids) for c in calls),
        "completion_tokens": sum(len(c.completion_ids) for c in calls),
        "prefix_cache_tokens": args.prefix_cache_tokens,
        "seconds": round(seconds, 2),
    }
    print(json.dumps(out))


if __name__ == "__main__":
    main()
