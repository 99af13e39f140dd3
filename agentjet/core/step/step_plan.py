"""What one training step runs: its indivisible work units, in the order one process runs them.

A unit is a micro-batch of samples that share nothing, or a whole shared-prefix group. The
single-process trainer runs them all; the distributed trainer splits them across ranks by
`tokens` (`distributed_trainer.py`). Pure.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from agentjet.core.config import OptimConfig
from agentjet.core.episodes.merging import Sample
from agentjet.core.step.packing import plan_micro_batches
from agentjet.core.step.prefix_sharing import plan_shared_prefixes

__all__ = ["WorkUnit", "kept_indices", "plan_work"]


@dataclass(frozen=True)
class WorkUnit:
    """An indivisible piece of one step's work: a micro-batch of samples that share nothing (`prefix`
    0), or a whole shared-prefix group (its prefix forward once, then its suffixes' micro-batches).
    `tokens` is what it runs through the model: the weight that balances units across ranks."""

    indices: tuple[int, ...]  # into the step's samples
    prefix: int  # the shared prefix's length; 0: no prefix
    tokens: int


def kept_indices(count: int, skip_zero: Sequence[float] | None) -> list[int]:
    """The samples a step runs: all `count`, or with `skip_zero` (their advantages) the nonzero ones. Pure."""
    if skip_zero is None:
        return list(range(count))
    return [i for i, advantage in enumerate(skip_zero) if advantage != 0.0]


def plan_work(
    samples: Sequence[Sample], optim: OptimConfig, skip_zero: Sequence[float] | None = None, *, device: str = "cpu"
) -> list[WorkUnit]:
    """The step's units in the order one process runs them: the micro-batches of the samples that
    share no prefix, then each shared-prefix group (under `optim.share_prefix`). Pure.

    Gradient checkpointing turns prefix sharing off: transformers drops the KV cache inside a
    checkpointed layer, so a suffix would no longer attend to its shared prefix.

    `skip_zero` (the samples' advantages, given when the loss has no KL term) leaves out every
    sample whose advantage is exactly 0: its policy-gradient term is 0, so running it would cost a
    forward and backward for nothing (a GRPO group whose episodes all scored the same). `device` sizes
    `optim.micro_batch_tokens: auto`."""
    if skip_zero is not None:
        kept = kept_indices(len(samples), skip_zero)
        units = plan_work([samples[i] for i in kept], optim, device=device)
        return [WorkUnit(tuple(kept[j] for j in u.indices), u.prefix, u.tokens) for u in units]
    sharing = optim.share_prefix and not optim.gradient_checkpointing
    groups = plan_shared_prefixes(samples, min_tokens=optim.share_prefix_min_tokens) if sharing else []
    shared = [g for g in groups if g.length > 0]
    in_shared = {i for g in shared for i in g.indices}
    alone = [i for i in range(len(samples)) if i not in in_shared]
    packs = plan_micro_batches([len(samples[i].token_ids) for i in alone], optim.tokens_per_micro_batch(device))
    units = []
    for pack in packs:
        indices = tuple(alone[j] for j in pack)
        units.append(WorkUnit(indices, 0, sum(len(samples[i].token_ids) for i in indices)))
    for g in shared:
        suffixes = sum(len(samples[i].token_ids) - g.length for i in g.indices)
        units.append(WorkUnit(g.indices, g.length, g.length + suffixes))
    return units
