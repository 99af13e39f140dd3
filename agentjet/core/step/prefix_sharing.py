"""Group prefix sharing: the samples of a GRPO group start with the same prompt, so run it once.

`plan_shared_prefixes` (pure) clusters samples whose token ids share a long common prefix that
holds no trainable position. `SharedPrefix` runs that prefix through the model once, with
gradients, and hands every micro-batch of the cluster's suffixes a KV cache that points at the
same prefix keys/values. The suffixes' backward passes accumulate gradients into detached copies
of those keys/values; `backward()` then pushes the accumulated gradient through the one prefix
forward. The loss and the gradients equal those of the unshared samples (same tokens, same
weights) to float tolerance, while the prefix is computed once per update instead of once per
sample.

Why a KV cache and not a packed tree with a tree attention mask: the cache path reuses the
model's own attention and position handling (no custom mask per architecture), and memory stays
bounded by the micro-batch budget because only the prefix's graph outlives one micro-batch.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import torch
from torch import Tensor, nn
from transformers import DynamicCache

from agentjet.core.backends.kv_batch import full_attention_layers, layer_kv
from agentjet.core.episodes.merging import Sample, common_prefix

__all__ = ["PrefixGroup", "SharedPrefix", "plan_shared_prefixes", "suffix_samples"]


@dataclass(frozen=True)
class PrefixGroup:
    """Samples `indices` share their first `length` tokens; `length` 0 means no sharing."""

    length: int
    indices: tuple[int, ...]


def _shareable(sample: Sample) -> int:
    """How many leading tokens may sit in a shared prefix.

    A prefix of length p is only run for its keys/values: its logits are never computed, so the
    token at position p (predicted by the prefix's last position) must not be trainable, and at
    least one token must be left for the suffix.
    """
    first_trainable = next((i for i, m in enumerate(sample.loss_mask) if m), len(sample.token_ids))
    return min(first_trainable - 1, len(sample.token_ids) - 1)


def plan_shared_prefixes(samples: Sequence[Sample], *, min_tokens: int) -> list[PrefixGroup]:
    """Cluster samples by shared leading tokens; every index lands in exactly one group. Pure.

    Samples are sorted by their token ids, so the samples of one group are neighbours; a
    neighbour joins the open cluster while that does not shrink the tokens saved
    ((members - 1) x prefix). So the 8 episodes of a task share the task's whole prompt, and
    two tasks that only share a system prompt are not forced down to it. Clusters whose prefix
    is shorter than `min_tokens` are not worth a separate forward: they come back as singles.
    """
    order = sorted(range(len(samples)), key=lambda i: samples[i].token_ids)
    groups: list[PrefixGroup] = []
    members: list[int] = []
    cut = 0

    def close() -> None:
        if len(members) > 1 and cut >= min_tokens:
            groups.append(PrefixGroup(cut, tuple(members)))
        else:
            groups.extend(PrefixGroup(0, (i,)) for i in members)

    for index in order:
        if members:
            shared = common_prefix(samples[members[0]].token_ids, samples[index].token_ids)  # sorted: first vs last
            joined = min(cut, shared, _shareable(samples[index]))
            if joined >= min_tokens and len(members) * joined >= (len(members) - 1) * cut:
                members.append(index)
                cut = joined
                continue
            close()
        members, cut = [index], _shareable(samples[index])
    if members:
        close()
    return groups


def suffix_samples(samples: Sequence[Sample], group: PrefixGroup) -> list[Sample]:
    """The group's samples with the shared prefix cut off, aligned with `group.indices`.

    The suffix keeps token `length` (the first after the prefix) as its context-only first
    token, exactly as `packing.collate` treats the first token of any sample.
    """
    cut = group.length
    return [
        replace(
            samples[i],
            token_ids=samples[i].token_ids[cut:],
            loss_mask=samples[i].loss_mask[cut:],
            behaviour_logprobs=samples[i].behaviour_logprobs[cut:],
            policy_versions=samples[i].policy_versions[cut:],
            temperatures=samples[i].temperatures[cut:],
        )
        for i in group.indices
    ]


class SharedPrefix:
    """One forward of a shared prefix whose keys/values every suffix micro-batch attends to."""

    def __init__(self, model: nn.Module, token_ids: Sequence[int], device: torch.device) -> None:
        ids = torch.tensor([list(token_ids)], dtype=torch.long, device=device)  # (1, P)
        self.length = len(token_ids)
        cache = DynamicCache()
        # One logit, kept by index: an int `logits_to_keep` slices a strided view, and with grad on, the output
        # head's matmul then copies the whole (1, 576, 49152) head instead of folding (~0.1 s a prefix on a CPU).
        last = torch.tensor([self.length - 1], device=device)  # (1,)
        model(input_ids=ids, attention_mask=torch.ones_like(ids), cache=cache, use_cache=True, logits_to_keep=last)
        self._computed: list[Tensor] = []  # keys/values with the prefix graph behind them
        for layer in full_attention_layers(cache):
            self._computed.extend(layer_kv(layer))  # (1, H, P, D) each
        # Leaves the suffix passes differentiate into; .grad sums over every row and micro-batch.
        self._leaves = [t.detach().requires_grad_(t.requires_grad) for t in self._computed]

    def cache_for(self, rows: int) -> DynamicCache:
        """A fresh cache for a suffix batch of `rows`: every row sees the same prefix (no copy)."""
        cache = DynamicCache()
        for layer in range(len(self._leaves) // 2):
            keys, values = self._leaves[2 * layer], self._leaves[2 * layer + 1]
            cache.update(keys.expand(rows, -1, -1, -1), values.expand(rows, -1, -1, -1), layer)
        return cache

    def attention_mask(self, suffix_mask: Tensor) -> Tensor:
        """The suffix batch's (B, L) mask with the prefix's ones in front: (B, P + L)."""
        ones = suffix_mask.new_ones((suffix_mask.shape[0], self.length))
        return torch.cat([ones, suffix_mask], dim=1)

    def backward(self) -> None:
        """Send the gradient the suffixes left on the prefix keys/values through the prefix forward."""
        pairs = [(t, leaf.grad) for t, leaf in zip(self._computed, self._leaves, strict=True) if leaf.grad is not None]
        if pairs:
            torch.autograd.backward([t for t, _ in pairs], [g for _, g in pairs])
        self._computed, self._leaves = [], []
