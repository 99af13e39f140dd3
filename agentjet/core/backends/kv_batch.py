"""The KV cache of a running decode batch: rows join (merge) and leave (select) between steps.

Rows are sequences, columns are cache slots. Rows are left-padded so that every row's newest
token sits in the last column; a boolean mask marks the real slots and each row carries its
own next position id, so a padded row computes exactly what it would compute alone. Only
full-attention `DynamicLayer` caches are supported (no sliding windows, no linear attention).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

import torch
import torch.nn.functional as F
from transformers import DynamicCache
from transformers.cache_utils import DynamicLayer

__all__ = ["KVBatch", "LayerKV", "full_attention_layers", "layer_kv", "left_padded"]

LayerKV = tuple[torch.Tensor, torch.Tensor]  # one layer's (keys, values), each (B, H, L, D)


def left_padded(
    prompts: Sequence[Sequence[int]], *, pad_id: int, device: torch.device | str
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Prefill inputs for prompts of different lengths: (input_ids, mask, position_ids), each (n, L)."""
    width = max(len(p) for p in prompts)
    ids = torch.full((len(prompts), width), pad_id, dtype=torch.long)
    mask = torch.zeros((len(prompts), width), dtype=torch.bool)
    for row, prompt in enumerate(prompts):
        ids[row, width - len(prompt) :] = torch.tensor(prompt, dtype=torch.long)
        mask[row, width - len(prompt) :] = True
    positions = (mask.long().cumsum(dim=1) - 1).clamp(min=0)  # (n, L): 0.. on the real tokens
    return ids.to(device), mask.to(device), positions.to(device)


def full_attention_layers(cache: DynamicCache) -> list[DynamicLayer]:
    layers = list(cache.layers)
    if not all(type(layer) is DynamicLayer for layer in layers):
        kinds = sorted({type(layer).__name__ for layer in layers})
        raise TypeError(f"continuous batching and prefix sharing need full-attention DynamicLayer caches, got {kinds}")
    return cast(list[DynamicLayer], layers)


def layer_kv(layer: DynamicLayer) -> tuple[torch.Tensor, torch.Tensor]:
    if layer.keys is None or layer.values is None:
        raise ValueError("cache layer has not been filled by a forward pass")
    return layer.keys, layer.values


class KVBatch:
    """A left-padded batch cache with its padding mask and per-row next positions.

    Owned by the generation loop thread; not thread-safe.
    """

    def __init__(self, cache: DynamicCache, mask: torch.Tensor, next_pos: torch.Tensor) -> None:
        self.cache = cache
        self.mask = mask  # (B, L) bool: True on real cache slots
        self.next_pos = next_pos  # (B,) long: position id of each row's next token
        full_attention_layers(cache)

    @property
    def size(self) -> int:
        return int(self.mask.shape[0])

    @property
    def width(self) -> int:
        return int(self.mask.shape[1])

    def step_inputs(self) -> tuple[torch.Tensor, torch.Tensor]:
        """Mask and positions for one decode step (one new token per row), then advance.

        Returns a ready 4D boolean mask (B, 1, 1, L+1) so transformers skips mask building.
        """
        ones = torch.ones((self.size, 1), dtype=torch.bool, device=self.mask.device)
        self.mask = torch.cat([self.mask, ones], dim=1)  # (B, L+1)
        positions = self.next_pos[:, None]  # (B, 1)
        self.next_pos = self.next_pos + 1
        return self.mask[:, None, None, :], positions

    def row_kv(self, row: int) -> list[LayerKV]:
        """A copy of one row's real cache slots per layer, each (1, H, T, D): it outlives the batch."""
        columns = self.mask[row].nonzero()[:, 0]  # (T,)
        return [
            (keys[row : row + 1].index_select(2, columns), values[row : row + 1].index_select(2, columns))
            for keys, values in map(layer_kv, full_attention_layers(self.cache))
        ]

    def select(self, rows: Sequence[int]) -> None:
        """Keep only `rows` (in that order), then drop leading columns that are padding in every row."""
        index = torch.tensor(list(rows), dtype=torch.long, device=self.mask.device)
        self.mask = self.mask.index_select(0, index)
        self.next_pos = self.next_pos.index_select(0, index)
        real_columns = self.mask.any(dim=0).nonzero()
        first = int(real_columns[0]) if real_columns.numel() else self.width
        self.mask = self.mask[:, first:]
        for layer in full_attention_layers(self.cache):
            keys, values = layer_kv(layer)
            layer.keys = keys.index_select(0, index)[:, :, first:, :]
            layer.values = values.index_select(0, index)[:, :, first:, :]

    def extend(self, other: KVBatch) -> None:
        """Append `other`'s rows after ours, left-padding whichever cache is shorter."""
        width = max(self.width, other.width)
        mine, theirs = full_attention_layers(self.cache), full_attention_layers(other.cache)
        if len(mine) != len(theirs):
            raise ValueError(f"cannot merge caches with {len(mine)} and {len(theirs)} layers")
        for a, b in zip(mine, theirs, strict=True):
            (a_keys, a_values), (b_keys, b_values) = layer_kv(a), layer_kv(b)
            a.keys = torch.cat([_pad_left(a_keys, width), _pad_left(b_keys, width)], dim=0)
            a.values = torch.cat([_pad_left(a_values, width), _pad_left(b_values, width)], dim=0)
        self.mask = torch.cat([_pad_mask(self.mask, width), _pad_mask(other.mask, width)], dim=0)
        self.next_pos = torch.cat([self.next_pos, other.next_pos], dim=0)


def _pad_left(kv: torch.Tensor, width: int) -> torch.Tensor:
    """(B, H, L, D) -> (B, H, width, D) with zero slots on the left (masked out, so never read)."""
    missing = width - kv.shape[2]
    return F.pad(kv, (0, 0, missing, 0)) if missing else kv


def _pad_mask(mask: torch.Tensor, width: int) -> torch.Tensor:
    missing = width - mask.shape[1]
    return F.pad(mask, (missing, 0), value=False) if missing else mask
