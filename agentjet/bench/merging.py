"""`agentjet bench merging`: what timeline merging and group prefix sharing save per update.

One GRPO batch of the synthetic tool-using agent (`agent_workload.py`: a few-hundred-token
system + tools prompt, 8 tool-call turns, groups of 8) is trained four ways with the real
`Trainer` and LoRA: `merge: off` (one sample per call), `token`, `text`, and `token` with
group prefix sharing. Each mode runs the same forward + backward over the same weights
(`Trainer.accumulate_gradients`, the part merging changes; the AdamW step on the adapter is
the same for every mode and not timed), and its loss and gradients are compared with `off`'s.

Behaviour logprobs are the policy's own (one no-grad forward at setup), as for on-policy
samples, so no token is clipped and every sampled token carries gradient.

Keys: update_s_{off,token,text,prefix}; speedup_{token,text,prefix} (off / mode);
tokens_{off,token,prefix} (tokens through the model); ideal_speedup (tokens_off / tokens_token,
the token-count ratio) and ideal_speedup_prefix; fraction_of_ideal (speedup_token /
ideal_speedup); prefix_gain (token / prefix); max_rel_grad_diff (worst over modes and
parameters of max |g - g_off| / max |g_off|) and max_rel_loss_diff; plus the workload shape.
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from agentjet.bench.output import print_result

__all__ = ["episode_samples", "main", "on_policy", "run_merging_bench"]

Progress = Callable[[str], None]
_MODES = ("token", "prefix", "text", "off")  # the long `off` last: early progress lines are informative


def _stderr(message: str) -> None:
    sys.stderr.write(f"[bench merging] {message}\n")
    sys.stderr.flush()


def on_policy(trainer: Any, episodes: Sequence[Any]) -> list[Any]:
    """The episodes with each call's completion logprobs set to the current policy's.

    One forward per episode over its token-merged timeline gives every call's tokens.
    """
    import torch

    from agentjet.core.episodes.merging import merge_timelines
    from agentjet.core.step.trainer import sequence_logprobs

    out = []
    for episode in episodes:
        (timeline,), _ = merge_timelines(episode.calls, match="token")
        ids = torch.tensor([list(timeline.token_ids)])  # (1, T)
        with torch.no_grad():
            lps = sequence_logprobs(trainer.model, ids, torch.ones_like(ids))[0].tolist()  # (T-1,)
        calls = []
        for call in episode.calls:
            start = len(call.prompt_ids)  # token-merged: call k's completion sits right after its prompt
            own = tuple(lps[start - 1 + i] for i in range(len(call.completion_ids)))
            calls.append(replace(call, completion_logprobs=own))
        out.append(replace(episode, calls=calls))
    return out


def episode_samples(episodes: Sequence[Any], match: str) -> tuple[list[Any], list[float]]:
    from agentjet.core.episodes.merging import merge_timelines
    from agentjet.core.training.advantages import group_advantages

    rewards, tasks = [e.reward for e in episodes], [e.task_id for e in episodes]
    advantages = group_advantages(rewards, tasks, scale=True, std_floor=1e-6)
    samples: list[Any] = []
    per_sample: list[float] = []
    for episode, advantage in zip(episodes, advantages, strict=True):
        merged, _ = merge_timelines(episode.calls, match=match)  # type: ignore[arg-type]
        samples.extend(merged)
        per_sample.extend([advantage] * len(merged))
    return samples, per_sample


def _grads(trainer: Any) -> dict[str, Any]:
    return {n: p.grad.detach().clone() for n, p in trainer.model.named_parameters() if p.grad is not None}


def _rel_diff(grads: dict[str, Any], reference: dict[str, Any]) -> float:
    worst = 0.0
    for name, ref in reference.items():
        scale = ref.abs().max().item()
        if scale > 0:
            worst = max(worst, (grads[name] - ref).abs().max().item() / scale)
    return worst


def run_merging_bench(
    *, model: str = "smollm2-135m", groups: int = 1, group_size: int = 8, turns: int = 8, progress: Progress = _stderr
) -> dict[str, Any]:
    import torch
    from transformers import AutoTokenizer

    from agentjet.bench.agent_workload import build_workload
    from agentjet.core.config import OptimConfig, TrainConfig
    from agentjet.core.models import resolve_model
    from agentjet.core.step.prefix_sharing import plan_shared_prefixes
    from agentjet.core.step.trainer import Trainer

    started = time.perf_counter()
    model_path = resolve_model(model)
    tokenizer = AutoTokenizer.from_pretrained(model_path)
    config = TrainConfig(optim=OptimConfig(share_prefix=False))
    trainer = Trainer(model_path, config, seed=0)
    episodes = build_workload(tokenizer, groups=groups, group_size=group_size, turns=turns)
    progress(f"workload: {len(episodes)} episodes x {turns} calls; computing behaviour logprobs")
    episodes = on_policy(trainer, episodes)

    result: dict[str, Any] = {"model": model, "groups": groups, "group_size": group_size, "turns": turns}
    result["torch_threads"] = torch.get_num_threads()
    measured: dict[str, tuple[float, dict[str, Any]]] = {}  # mode -> (loss, grads)
    for mode in _MODES:
        match = "off" if mode == "off" else ("text" if mode == "text" else "token")
        samples, advantages = episode_samples(episodes, match)
        share = mode == "prefix"
        trainer.config = config.model_copy(update={"optim": config.optim.model_copy(update={"share_prefix": share})})
        tokens = sum(len(s.token_ids) for s in samples)
        if share:
            plan = plan_shared_prefixes(samples, min_tokens=config.optim.share_prefix_min_tokens)
            tokens -= sum((len(g.indices) - 1) * g.length for g in plan if g.length)
        progress(f"{mode}: {len(samples)} samples, {tokens} tokens through the model")
        t0 = time.perf_counter()
        totals = trainer.accumulate_gradients(samples, advantages)
        elapsed = time.perf_counter() - t0
        loss, grads = totals.loss.item(), _grads(trainer)
        result[f"update_s_{mode}"] = round(elapsed, 3)
        result[f"samples_{mode}"] = len(samples)
        result[f"tokens_{mode}"] = tokens
        result[f"micro_batches_{mode}"] = totals.micro_batches
        progress(f"{mode}: {elapsed:.1f} s, loss {loss:.6f}")
        measured[mode] = (loss, grads)
    off_loss, off_grads = measured["off"]
    grad_diff = max(_rel_diff(grads, off_grads) for mode, (_, grads) in measured.items() if mode != "off")
    loss_diff = max(abs(loss - off_loss) / max(abs(off_loss), 1e-12) for loss, _ in measured.values())
    off = result["update_s_off"]
    for mode in ("token", "text", "prefix"):
        result[f"speedup_{mode}"] = round(off / result[f"update_s_{mode}"], 3)
    result["ideal_speedup"] = round(result["tokens_off"] / result["tokens_token"], 3)
    result["ideal_speedup_prefix"] = round(result["tokens_off"] / result["tokens_prefix"], 3)
    result["fraction_of_ideal"] = round(result["speedup_token"] / result["ideal_speedup"], 3)
    result["prefix_gain"] = round(result["update_s_token"] / result["update_s_prefix"], 3)
    result["max_rel_grad_diff"] = float(f"{grad_diff:.3g}")
    result["max_rel_loss_diff"] = float(f"{loss_diff:.3g}")
    result["reward_mean"] = statistics.fmean(e.reward for e in episodes)
    result["bench_wall_s"] = round(time.perf_counter() - started, 1)
    return result


def main(*, model: str, groups: int, as_json: bool) -> int:
    result = run_merging_bench(model=model, groups=groups)
    print_result(result, as_json=as_json)
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main(model=sys.argv[1] if len(sys.argv) > 1 else "tiny", groups=1, as_json=True))
