"""Group prefix sharing: the samples of a GRPO group start with the same prompt, so run it once.

`plan_shared_prefixes` (pure) clusters samples whose token ids share a long common prefix that
holds no trainable position, and within a cluster the members that share a longer one (nested
groups: a prefix tree). `SharedPrefix` runs that prefix through the model once, with gradients,
and hands every micro-batch of the cluster's suffixes a KV cache that points at the same prefix
keys/values. The suffixes' backward passes accumulate gradients into detached copies of those
keys/values; `backward()` then pushes the accumulated gradient through the one prefix forward. A
nested group's prefix runs only its extension, attending to its parent's keys/values, and its
`backward()` (before the parent's) passes the parent its share. The loss and the gradients equal
those of the unshared samples (same tokens, same weights) to float tolerance, while each prefix is
computed once per update instead of once per sample.

Why nested: prompts often share a system prompt across every task and a longer one within a task
or a turn (the werewolves' pack asked one question); one level must pick one of the two.

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

__all__ = ["PrefixGroup", "SharedPrefix", "plan_shared_prefixes", "suffix_samples", "tokens_saved"]


@dataclass(frozen=True)
class PrefixGroup:
    """Samples `indices` share their first `length` tokens; `length` 0 means no sharing.

    `nested` are groups of some of those samples that share a longer prefix; the samples in no
    nested group are the group's direct members."""

    length: int
    indices: tuple[int, ...]
    nested: tuple[PrefixGroup, ...] = ()

    def direct(self) -> tuple[int, ...]:
        inner = {i for group in self.nested for i in group.indices}
        return tuple(i for i in self.indices if i not in inner)

    def renumbered(self, new: Sequence[int]) -> PrefixGroup:
        """The same group with every index i replaced by new[i]."""
        return PrefixGroup(
            self.length, tuple(new[i] for i in self.indices), tuple(g.renumbered(new) for g in self.nested)
        )


def tokens_saved(group: PrefixGroup, base: int = 0) -> int:
    """Tokens the group's shared prefixes keep out of the model, against running each sample whole
    (`base`: the length its parent already ran)."""
    if group.length == 0:
        return 0
    return (len(group.indices) - 1) * (group.length - base) + sum(tokens_saved(g, group.length) for g in group.nested)


def _shareable(sample: Sample) -> int:
    """How many leading tokens may sit in a shared prefix.

    A prefix of length p is only run for its keys/values: its logits are never computed, so the
    token at position p (predicted by the prefix's last position) must not be trainable, and at
    least one token must be left for the suffix.
    """
    first_trainable = next((i for i, m in enumerate(sample.loss_mask) if m), len(sample.token_ids))
    return min(first_trainable - 1, len(sample.token_ids) - 1)


def plan_shared_prefixes(samples: Sequence[Sample], *, min_tokens: int) -> list[PrefixGroup]:
    """Cluster samples by shared leading tokens, as a prefix tree; every index lands in exactly one
    top-level group. Pure.

    Samples are sorted by their token ids, so the samples of a cluster are neighbours: a cluster is a
    run of neighbours that each share at least `min_tokens` (a shorter prefix is not worth its own
    forward) and its prefix is the run's common prefix. Within a cluster the same rule, `min_tokens`
    past the cluster's prefix, finds the nested groups. So a step's samples that share only a system
    prompt form one group, the 8 episodes of a task a nested group inside it with the task's whole
    prompt, and samples sharing nothing worth it come back as singles (length 0).
    """
    order = sorted(range(len(samples)), key=lambda i: samples[i].token_ids)
    runs = _runs(samples, order, base=0, min_tokens=min_tokens)
    return [group for run in runs for group in _grouped(samples, run, 0, min_tokens)]


def _runs(samples: Sequence[Sample], order: Sequence[int], *, base: int, min_tokens: int) -> list[list[int]]:
    """`order` (sorted) cut wherever two neighbours share fewer than `base + min_tokens` shareable tokens."""
    runs: list[list[int]] = []
    for index in order:
        if runs:
            last = runs[-1][-1]
            shared = common_prefix(samples[last].token_ids, samples[index].token_ids)
            if min(shared, _shareable(samples[last]), _shareable(samples[index])) >= base + min_tokens:
                runs[-1].append(index)
                continue
        runs.append([index])
    return runs


def _grouped(samples: Sequence[Sample], run: Sequence[int], base: int, min_tokens: int) -> list[PrefixGroup]:
    """A run of neighbours as a group with its nested groups (a lone sample at the top: a single)."""
    if len(run) == 1:
        return [PrefixGroup(0, (run[0],))] if base == 0 else []
    first, last = samples[run[0]].token_ids, samples[run[-1]].token_ids
    length = min(common_prefix(first, last), *(_shareable(samples[i]) for i in run))  # sorted: first vs last
    inner = _runs(samples, run, base=length, min_tokens=min_tokens)
    nested = tuple(group for part in inner for group in _grouped(samples, part, length, min_tokens))
    return [PrefixGroup(length, tuple(run), nested)]


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

    length: int

    def __init__(
        self, model: nn.Module, token_ids: Sequence[int], device: torch.device, parent: SharedPrefix | None = None
    ) -> None:
        """Run `token_ids` (the whole prefix); under `parent` (a prefix of it) only the tokens past it."""
        start = parent.length if parent is not None else 0
        ids = torch.tensor([list(token_ids[start:])], dtype=torch.long, device=device)  # (1, P - start)
        self.length = len(token_ids)
        cache = parent.cache_for(1) if parent is not None else DynamicCache()  # the new keys/values append to it
        # One logit, kept by index: an int `logits_to_keep` slices a strided view, and with grad on, the output
        # head's matmul then copies the whole (1, 576, 49152) head instead of folding (~0.1 s a prefix on a CPU).
        last = torch.tensor([ids.shape[1] - 1], device=device)  # (1,)
        mask = torch.ones((1, self.length), dtype=torch.long, device=device)
        model(input_ids=ids, attention_mask=mask, cache=cache, use_cache=True, logits_to_keep=last)
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
        """Send the gradient the suffixes left on the prefix keys/values through the prefix forward
        (under a parent, into the parent's keys/values too: call it before the parent's)."""
        pairs = [(t, leaf.grad) for t, leaf in zip(self._computed, self._leaves, strict=True) if leaf.grad is not None]
        if pairs:
            torch.autograd.backward([t for t, _ in pairs], [g for _, g in pairs])
        self._computed, self._leaves = [], []
