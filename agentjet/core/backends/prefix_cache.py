"""Prefix KV reuse: finished sequences' KV rows, kept so that a prompt extending them skips their prefill.

Multi-round chats send round k+1 as round k's prompt + answer + a new user turn, and many
prompts share a system prompt; re-prefilling those tokens stalls every running stream. The
`PrefixCache` keeps the KV rows of finished sequences (LRU, bounded by a token budget) and
`prefill` builds a joining batch's cache from the longest cached common prefix of each prompt,
running the model only on the remaining suffixes. Entries hold the weights' KV: clear the cache
whenever the weights change. Owned by the generation loop thread; not thread-safe.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager

import torch
import torch.nn.functional as F
from transformers import DynamicCache

from agentjet.core.backends.kv_batch import KVBatch, LayerKV, left_padded

__all__ = ["PrefixCache", "PrefixHit", "prefill", "prefill_in_groups"]

PrefixHit = tuple[int, list[LayerKV]]  # (n tokens reused, per layer (keys, values) each (1, H, n, D))


def _common_prefix(a: Sequence[int], b: Sequence[int]) -> int:
    """Length of the longest common prefix; binary search on C-speed slice equality."""
    low, high = 0, min(len(a), len(b))
    if high == 0 or a[0] != b[0]:
        return 0
    low = 1
    while low < high:  # invariant: a[:low] == b[:low]; the answer lies in [low, high]
        mid = (low + high + 1) // 2
        if tuple(a[:mid]) == tuple(b[:mid]):
            low = mid
        else:
            high = mid - 1
    return low


class PrefixCache:
    """Token ids -> KV rows of finished sequences, least recently used evicted beyond `budget_tokens`.

    A hit needs at least `min_match` common tokens (shorter ones save too little to be worth a
    cache build) and always leaves one prompt token to prefill, so the joiner gets its logits.
    """

    def __init__(self, budget_tokens: int, *, min_match: int = 16) -> None:
        self.budget_tokens = budget_tokens
        self.min_match = max(1, min_match)
        self._entries: OrderedDict[tuple[int, ...], list[LayerKV]] = OrderedDict()
        self.n_tokens = 0

    def __len__(self) -> int:
        return len(self._entries)

    def clear(self) -> None:
        self._entries.clear()
        self.n_tokens = 0

    def store(self, ids: tuple[int, ...], kv: list[LayerKV]) -> None:
        """Keep `kv` (per layer, each (1, H, len(ids), D)) for `ids`; drop entries it extends."""
        if len(ids) < self.min_match or len(ids) > self.budget_tokens:
            return
        for old in [old for old in self._entries if len(old) <= len(ids) and ids[: len(old)] == old]:
            self._pop(old)  # its every hit is also a (longer or equal) hit of the new entry
        self._entries[ids] = kv
        self.n_tokens += len(ids)
        while self.n_tokens > self.budget_tokens:
            self._pop(next(iter(self._entries)))

    def lookup(self, prompt: Sequence[int]) -> PrefixHit | None:
        """The longest usable cached prefix of `prompt`, its KV sliced to that length, or None."""
        best, best_n = None, 0
        for ids in self._entries:
            n = min(_common_prefix(ids, prompt), len(prompt) - 1)
            if n > best_n:
                best, best_n = ids, n
        if best is None or best_n < self.min_match:
            return None
        self._entries.move_to_end(best)
        return best_n, [(k[:, :, :best_n], v[:, :, :best_n]) for k, v in self._entries[best]]

    def _pop(self, ids: tuple[int, ...]) -> None:
        del self._entries[ids]
        self.n_tokens -= len(ids)


def prefill(
    model: torch.nn.Module,
    prompts: Sequence[Sequence[int]],
    hits: Sequence[PrefixHit | None],
    *,
    pad_id: int,
    device: torch.device,
) -> tuple[KVBatch, torch.Tensor]:
    """Prefill `prompts` together, reusing each hit's KV for its first tokens; (batch, last logits (n, V)).

    The cache columns are [left-padded prefixes | left-padded suffixes]: a row may have a gap
    of padding between the two, which the mask hides and explicit position ids make exact.
    """
    n_reused = [hit[0] if hit else 0 for hit in hits]
    suffixes = [tuple(p[n:]) for p, n in zip(prompts, n_reused, strict=True)]
    ids, suffix_mask, positions = left_padded(suffixes, pad_id=pad_id, device=device)
    if any(n_reused):
        cache, past_mask = _past_cache(hits, max(n_reused))
        mask = torch.cat([past_mask, suffix_mask], dim=1)  # (n, P + S)
        positions = positions + torch.tensor(n_reused, dtype=torch.long, device=device)[:, None]
    else:
        cache, mask = DynamicCache(), suffix_mask
    out = model(
        input_ids=ids, attention_mask=mask, position_ids=positions, cache=cache, use_cache=True, logits_to_keep=1
    )
    next_pos = mask.sum(dim=1)  # (n,): each prompt's length
    return KVBatch(cache, mask, next_pos), out.logits[:, -1, :]


def prefill_in_groups(
    model: torch.nn.Module,
    prompts: Sequence[Sequence[int]],
    hits: Sequence[PrefixHit | None],
    *,
    pad_id: int,
    device: torch.device,
    split: Callable[[list[int]], list[list[int]]],
    rows_of: Callable[[Sequence[int]], AbstractContextManager[None]],
) -> tuple[KVBatch, torch.Tensor]:
    """`prefill` one forward per group of rows that `split` makes of the suffix lengths (indices into
    `prompts`), each inside `rows_of(group)`, joined in the prompts' order: unlike lengths pad less apart."""
    groups = split([len(prompt) - (hit[0] if hit else 0) for prompt, hit in zip(prompts, hits, strict=True)])
    if len(groups) == 1:  # in the prompts' order: nothing to put back
        with rows_of(range(len(prompts))):
            return prefill(model, prompts, hits, pad_id=pad_id, device=device)
    parts = []
    for group in groups:
        with rows_of(group):
            parts.append(
                prefill(model, [prompts[i] for i in group], [hits[i] for i in group], pad_id=pad_id, device=device)
            )
    batch, _ = parts[0]
    for other, _ in parts[1:]:
        batch.extend(other)
    joined = [i for group in groups for i in group]  # joined row k holds prompt joined[k]
    back = sorted(range(len(joined)), key=joined.__getitem__)  # the joined row of each prompt, in order
    batch.select(back)
    return batch, torch.cat([logits for _, logits in parts], dim=0)[back]


def _past_cache(hits: Sequence[PrefixHit | None], width: int) -> tuple[DynamicCache, torch.Tensor]:
    """A DynamicCache (n rows, `width` columns) of the hits' KV, left-padded; rows without a hit all padding."""
    template = next(kv for hit in hits if hit for kv in [hit[1]])
    layers: list[LayerKV] = []
    for layer, (k0, v0) in enumerate(template):
        keys = [_pad_row(hit[1][layer][0] if hit else k0[:, :, :0], width) for hit in hits]
        values = [_pad_row(hit[1][layer][1] if hit else v0[:, :, :0], width) for hit in hits]
        layers.append((torch.cat(keys, dim=0), torch.cat(values, dim=0)))  # (n, H, width, D)
    mask = torch.zeros((len(hits), width), dtype=torch.bool, device=template[0][0].device)
    for row, hit in enumerate(hits):
        if hit:
            mask[row, width - hit[0] :] = True
    return DynamicCache(ddp_cache_data=layers), mask


def _pad_row(kv: torch.Tensor, width: int) -> torch.Tensor:
    """(1, H, T, D) -> (1, H, width, D), zeros on the left."""
    missing = width - kv.shape[2]
    return F.pad(kv, (0, 0, missing, 0)) if missing else kv
