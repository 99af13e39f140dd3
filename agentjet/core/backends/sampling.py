"""Per-row token sampling for a decode batch: greedy, temperature and top-p, seeded per row.

Each sampled row draws exactly one uniform number from its own `torch.Generator` and picks a
token by inverse-CDF, so a seeded sequence gets the same tokens whatever it is batched with.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

__all__ = ["sample_tokens"]


def sample_tokens(
    logits: torch.Tensor,
    temperatures: Sequence[float],
    top_ps: Sequence[float],
    generators: Sequence[torch.Generator],
) -> tuple[list[int], list[float]]:
    """Sample one token per row of logits (B, V); return the tokens and their logprobs.

    The logprob is log_softmax(logits / T) at the sampled token, before top-p truncation (the
    behaviour policy the trainer compares against); T == 0 means greedy with plain log_softmax.
    """
    logits = logits.float()  # (B, V)
    temps = torch.tensor(list(temperatures), dtype=torch.float32, device=logits.device)
    is_greedy = temps == 0
    divisor = torch.where(is_greedy, torch.ones_like(temps), temps)
    logprobs = torch.log_softmax(logits / divisor[:, None], dim=-1)  # (B, V)
    tokens = logprobs.argmax(dim=-1)  # (B,)
    sampled = [i for i, t in enumerate(temperatures) if t > 0]
    if sampled:
        rows = torch.tensor(sampled, dtype=torch.long, device=logits.device)
        uniforms = torch.cat([torch.rand(1, generator=generators[i], device=generators[i].device) for i in sampled])
        top_p = torch.tensor([top_ps[i] for i in sampled], dtype=torch.float32, device=logits.device)
        probs = logprobs.index_select(0, rows).exp()  # (S, V)
        tokens[rows] = _inverse_cdf(probs, uniforms.to(logits.device), top_p)
    chosen = logprobs.gather(1, tokens[:, None])[:, 0]  # (B,)
    return tokens.tolist(), chosen.tolist()


def _inverse_cdf(probs: torch.Tensor, uniforms: torch.Tensor, top_p: torch.Tensor) -> torch.Tensor:
    """Pick from each row of probs (S, V), within its top-p nucleus, using one uniform per row."""
    last = probs.shape[-1] - 1
    if bool((top_p >= 1.0).all()):  # no nucleus: skip the sort, by far the costliest part
        cdf = probs.cumsum(dim=-1)  # (S, V)
        picked = torch.searchsorted(cdf, (uniforms * cdf[:, -1])[:, None], right=True)  # (S, 1)
        return picked[:, 0].clamp(max=last)
    sorted_probs, order = probs.sort(dim=-1, descending=True)  # (S, V)
    mass_before = sorted_probs.cumsum(dim=-1) - sorted_probs
    kept = torch.where(mass_before < top_p[:, None], sorted_probs, torch.zeros_like(sorted_probs))
    cdf = kept.cumsum(dim=-1)  # the most likely token is always kept
    picked = torch.searchsorted(cdf, (uniforms * cdf[:, -1])[:, None], right=True)  # (S, 1)
    return order.gather(1, picked.clamp(max=last))[:, 0]
