"""How faithful a bf16 base model is to fp32 for training: the policy gradient and the change a step makes.

Why: since `--dtype auto` picks bf16 on a CPU with native bf16, countdown's default run stopped
improving (docs/vibe.md, *The default run of each family*). This checks whether the numbers are to
blame, on a vibe run's own samples and adapters: the LoRA gradient of the GRPO policy-gradient term
(advantage x logprob of each sampled token, summed) under a bf16 base against an fp32 one (cosine),
and the change in the sampled tokens' logprobs between two saved adapters in each precision
(correlation). A cosine near 1 and a correlation near 1 say bf16 sees the same updates.

Run from the checkout on a vibe run's folder, e.g.
`.venv/bin/python scripts/bf16_fidelity.py RUN --seqs 400 520 --adapters step-28 step-30` (prints JSON).
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def _samples(run: Path, first: int, end: int) -> tuple[Any, list[Any], list[float]]:
    from agentjet.core.config import load_train_config
    from agentjet.core.training.batches import build_samples
    from agentjet.core.types import EpisodeRecord

    with sqlite3.connect(run / "state" / "journal.sqlite") as db:
        rows = db.execute(
            "select record from episodes where kind = 'train' and seq >= ? and seq < ? order by seq", (first, end)
        )
        records = [EpisodeRecord.from_dict(json.loads(text)) for (text,) in rows]
    config = load_train_config(run / "train.yaml")
    batch = build_samples(records, config)
    return config, batch.samples, batch.advantages


def _logprobs(model: Any, sample: Any) -> Any:
    import torch

    from agentjet.core.step.losses import sequence_logprobs

    ids = torch.tensor([sample.token_ids])
    positions = torch.nonzero(torch.tensor(sample.loss_mask[1:])).squeeze(-1)
    temps = [sample.temperatures[p + 1] if sample.temperatures else 1.0 for p in positions.tolist()]
    return sequence_logprobs(model, ids, torch.ones_like(ids), positions=positions, temperatures=torch.tensor([temps]))[0]


def _model(config: Any, model: str, adapter: Path, dtype: Any) -> Any:
    import torch

    from agentjet.core.models import resolve_model
    from agentjet.core.step.policy_model import build_model, load_policy_weights

    policy = build_model(resolve_model(model), config.lora, torch.device("cpu"), dtype)
    load_policy_weights(policy, adapter, torch.device("cpu"))
    return policy


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("run", type=Path, help="a vibe run's folder (train.yaml, state/journal.sqlite, state/adapters)")
    parser.add_argument("--seqs", type=int, nargs=2, required=True, metavar=("FIRST", "END"), help="journal seq range")
    parser.add_argument("--adapters", nargs=2, required=True, metavar=("BEFORE", "AFTER"), help="saved adapters")
    parser.add_argument("--model", default="smollm2-135m", help="the model the run trained")
    parser.add_argument("--samples", type=int, default=40, help="samples for the step-change comparison")
    args = parser.parse_args()

    import torch

    torch.manual_seed(0)
    config, samples, advantages = _samples(args.run, *args.seqs)
    signal = [(s, a) for s, a in zip(samples, advantages, strict=True) if a != 0.0]
    before, after = (args.run / "state" / "adapters" / name for name in args.adapters)

    def gradient(dtype: Any) -> Any:
        policy = _model(config, args.model, after, dtype)
        for sample, advantage in signal:
            (-(advantage * _logprobs(policy, sample)).sum()).backward()
        return torch.cat([p.grad.flatten() for p in policy.parameters() if p.grad is not None]).float()

    def logprobs(dtype: Any, adapter: Path) -> Any:
        policy = _model(config, args.model, adapter, dtype).eval()
        with torch.no_grad():
            return torch.cat([_logprobs(policy, s).float() for s in samples[: args.samples]])

    g32, g16 = gradient(torch.float32), gradient(torch.bfloat16)
    d32 = logprobs(torch.float32, after) - logprobs(torch.float32, before)
    d16 = logprobs(torch.bfloat16, after) - logprobs(torch.bfloat16, before)
    out = {
        "samples_with_signal": len(signal),
        "gradient_cosine_bf16_fp32": round(torch.nn.functional.cosine_similarity(g16, g32, dim=0).item(), 4),
        "gradient_norm_ratio_bf16_fp32": round((g16.norm() / g32.norm()).item(), 4),
        "step_change_tokens": len(d32),
        "step_change_mean_abs_fp32": round(d32.abs().mean().item(), 4),
        "step_change_mean_abs_bf16": round(d16.abs().mean().item(), 4),
        "step_change_correlation": round(torch.corrcoef(torch.stack([d32, d16]))[0, 1].item(), 4),
    }
    print(json.dumps(out))


if __name__ == "__main__":
    main()
