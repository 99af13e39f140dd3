"""Pack training samples into right-padded micro-batches under a token budget.

Planning is pure (lengths in, index groups out); `collate` turns one group into tensors whose
targets are shifted by one: position t of every (B, T-1) tensor describes token t+1, the
token the logits at position t predict.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch
from torch import Tensor

from agentjet.core.episodes.merging import Sample

__all__ = ["MicroBatch", "collate", "plan_micro_batches"]

PAD_ID = 0  # any valid id: padded positions are masked out of attention and loss


@dataclass(frozen=True)
class MicroBatch:
    """One forward/backward pass worth of samples, right-padded to the longest."""

    token_ids: Tensor  # (B, T) long
    attention_mask: Tensor  # (B, T) long, 1 on real tokens
    loss_mask: Tensor  # (B, T-1) bool, True where target token t+1 was sampled
    behaviour_logprobs: Tensor  # (B, T-1) float32, logprob of target t+1 when it was sampled
    temperatures: Tensor  # (B, T-1) float32, the temperature target t+1 was sampled at (1.0 elsewhere)
    advantages: Tensor  # (B,) float32
    indices: tuple[int, ...]  # positions of these samples in the step's input

    @property
    def trainable_tokens(self) -> int:
        return int(self.loss_mask.sum().item())  # CPU<->GPU sync when on an accelerator


def plan_micro_batches(lengths: Sequence[int], budget: int) -> list[list[int]]:
    """Group sample indices so that each group's padded size (count x longest) fits `budget`.

    Longest first, so padding stays small; a sample longer than the budget travels alone.
    Every index appears in exactly one group. Pure.
    """
    order = sorted(range(len(lengths)), key=lambda i: (-lengths[i], i))
    groups: list[list[int]] = []
    for index in order:
        if groups and (len(groups[-1]) + 1) * lengths[groups[-1][0]] <= budget:
            groups[-1].append(index)  # the group's first member is its longest
        else:
            groups.append([index])
    return groups


def collate(
    samples: Sequence[Sample], advantages: Sequence[float], indices: Sequence[int], device: str | torch.device
) -> MicroBatch:
    """Right-pad the chosen samples into tensors on `device`."""
    width = max(len(samples[i].token_ids) for i in indices)
    rows = len(indices)
    token_ids = torch.full((rows, width), PAD_ID, dtype=torch.long)  # (B, T)
    attention = torch.zeros((rows, width), dtype=torch.long)  # (B, T)
    loss_mask = torch.zeros((rows, width), dtype=torch.bool)  # (B, T), unshifted
    behaviour = torch.zeros((rows, width), dtype=torch.float32)  # (B, T), unshifted
    temperatures = torch.ones((rows, width), dtype=torch.float32)  # (B, T), unshifted
    for row, i in enumerate(indices):
        sample = samples[i]
        n = len(sample.token_ids)
        token_ids[row, :n] = torch.tensor(sample.token_ids, dtype=torch.long)
        attention[row, :n] = 1
        loss_mask[row, :n] = torch.tensor(sample.loss_mask, dtype=torch.bool)
        behaviour[row, :n] = torch.tensor(sample.behaviour_logprobs, dtype=torch.float32)
        if sample.temperatures:
            temperatures[row, :n] = torch.tensor(sample.temperatures, dtype=torch.float32)
    return MicroBatch(
        token_ids=token_ids.to(device),
        attention_mask=attention.to(device),
        loss_mask=loss_mask[:, 1:].to(device),  # (B, T-1); a trainable first token has no context: dropped
        behaviour_logprobs=behaviour[:, 1:].to(device),  # (B, T-1)
        temperatures=temperatures[:, 1:].to(device),  # (B, T-1)
        advantages=torch.tensor([advantages[i] for i in indices], dtype=torch.float32, device=device),  # (B,)
        indices=tuple(indices),
    )
