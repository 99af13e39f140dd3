"""Replay one training step's update of a vibe run: the same samples, the same config, timed (JSON out).

Why: an update's speed is measured best on real samples, apart from the server's rounds; a run's
journal holds every episode and `metrics.jsonl` says which ones each step trained. This reads step
N's episodes back, builds their samples as the training loop does, and runs one `Trainer.step` on a
fresh adapter with the run's own `train.yaml` (docs/vibe.md, *Faster updates*). `--profile` prints
torch.profiler's table of the step's ops as well.

Run from the checkout on a vibe run's folder, with tcmalloc as a server has it, e.g.
`LD_PRELOAD=/lib/x86_64-linux-gnu/libtcmalloc_minimal.so.4 .venv/bin/python scripts/replay_update.py RUN
--step 1` (prints JSON: samples, tokens, seconds, seconds a sample, the step's statistics).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run", type=Path, help="a vibe run's folder (it holds train.yaml and state/)")
    parser.add_argument("--step", type=int, default=1, help="the step whose episodes to replay (default 1)")
    parser.add_argument("--limit", type=int, default=None, help="only the first LIMIT samples")
    parser.add_argument("--model", default="smollm2-135m", help="the base model (default smollm2-135m)")
    parser.add_argument("--profile", action="store_true", help="print torch.profiler's table too")
    args = parser.parse_args()

    from vibe_run_folder import require, step_episode_seqs

    from agentjet.core.config import load_train_config
    from agentjet.core.episodes.journal import Journal
    from agentjet.core.models import resolve_model
    from agentjet.core.step.step_trainer import default_trainer
    from agentjet.core.training.batches import build_samples

    train_yaml, metrics, journal = require(args.run, "train.yaml", "state/metrics.jsonl", "state/journal.sqlite")
    seqs = step_episode_seqs(metrics, args.step)
    records = [record for seq, record in Journal(journal).read_from(0) if seq in seqs]
    config = load_train_config(train_yaml)
    batch = build_samples(records, config)
    samples, advantages = batch.samples[: args.limit], batch.advantages[: args.limit]
    if not samples:
        sys.exit(f"step {args.step} left no samples to replay (--limit {args.limit})")
    trainer = default_trainer(resolve_model(args.model), config)
    started = time.monotonic()
    if args.profile:
        from torch.profiler import ProfilerActivity, profile

        with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as trace:
            stats = trainer.step(samples, advantages)
        print(trace.key_averages().table(sort_by="self_cpu_time_total", row_limit=25), file=sys.stderr)
    else:
        stats = trainer.step(samples, advantages)
    seconds = time.monotonic() - started
    out: dict[str, Any] = {
        "episodes": len(records),
        "samples": len(samples),
        "tokens": sum(len(s.token_ids) for s in samples),
        "seconds": round(seconds, 2),
        "seconds_per_sample": round(seconds / len(samples), 4),
        **{k: v for k, v in vars(stats).items() if isinstance(v, (int, float))},
    }
    print(json.dumps(out))


if __name__ == "__main__":
    main()
