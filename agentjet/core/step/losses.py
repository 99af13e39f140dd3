"""Per-token pieces of the policy loss: logprobs under a model, PPO-clip, TIS weights, k3 KL.

Pure tensor functions (no optimiser, no state): the trainer composes them per micro-batch, and
benches and tests call them on their own. `LOSSES` maps `grpo.loss` names to a loss.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import torch
from torch import Tensor, nn

if TYPE_CHECKING:
    from agentjet.core.step.prefix_sharing import SharedPrefix

__all__ = ["LOSSES", "LossFn", "kl_k3", "ppo_clip_loss", "sequence_logprobs", "truncated_is_weights"]

# (logprobs, behaviour_logprobs, advantages, clip_eps) -> (per-token loss, clip active), (B, T-1) each
LossFn = Callable[[Tensor, Tensor, Tensor, float], tuple[Tensor, Tensor]]


def sequence_logprobs(
    model: nn.Module,
    token_ids: Tensor,
    attention_mask: Tensor,
    prefix: SharedPrefix | None = None,
    positions: Tensor | None = None,
    temperatures: Tensor | None = None,
) -> Tensor:
    """Logprob of each next token under `model`: out[b, t] = log p(token_ids[b, t+1] | token_ids[b, :t+1]).

    With `positions` (K,) only those t are computed, out is (B, K): the vocabulary projection and
    softmax, a large share of a small model's cost, then run only where a target is trained.
    With `prefix`, every row continues that shared prefix (positions and attention follow it).
    With `temperatures` (shaped like out), each position's logits are divided by its temperature
    first: the distribution the token was sampled from, as its behaviour logprob was recorded.
    """
    keep = torch.arange(token_ids.shape[1] - 1, device=token_ids.device) if positions is None else positions  # (K,)
    kwargs: dict[str, Any] = {"input_ids": token_ids, "attention_mask": attention_mask, "logits_to_keep": keep}
    if prefix is not None:
        kwargs["attention_mask"] = prefix.attention_mask(attention_mask)  # (B, P+T)
        kwargs["cache"] = prefix.cache_for(token_ids.shape[0])
    logits: Tensor = model(**kwargs).logits.float()  # (B, K, V), row k predicts token keep[k]+1
    if temperatures is not None:
        logits = logits / temperatures.unsqueeze(-1)  # (B, K, V)
    targets = token_ids[:, keep + 1].unsqueeze(-1)  # (B, K, 1)
    picked = logits.gather(-1, targets).squeeze(-1)  # (B, K)
    return picked - torch.logsumexp(logits, dim=-1)  # (B, K)


def ppo_clip_loss(logprobs: Tensor, behaviour: Tensor, advantages: Tensor, clip_eps: float) -> tuple[Tensor, Tensor]:
    """Negated PPO-clip objective per token, and where the clip zeroes the gradient."""
    ratio = torch.exp(logprobs - behaviour)  # (B, T-1)
    adv = advantages[:, None]  # (B, 1)
    unclipped = ratio * adv  # (B, T-1)
    clipped = ratio.clamp(1 - clip_eps, 1 + clip_eps) * adv  # (B, T-1)
    active = ((ratio < 1 - clip_eps) & (adv < 0)) | ((ratio > 1 + clip_eps) & (adv > 0))  # (B, T-1)
    return -torch.minimum(unclipped, clipped), active


def truncated_is_weights(old: Tensor, behaviour: Tensor, cap: float) -> tuple[Tensor, Tensor]:
    """TIS weights min(exp(old - behaviour), cap), detached, and where the cap binds; (B, K) each.

    `old`: the trainer's own logprobs of the sampled tokens under the weights the batch trains from;
    `behaviour`: the sampler's. Their ratio corrects for the sampler not being the trainer's forward.
    """
    ratio = torch.exp(old.detach() - behaviour)  # (B, K); inf on overflow, which the cap takes
    return ratio.clamp(max=cap), ratio > cap


def kl_k3(logprobs: Tensor, reference: Tensor) -> Tensor:
    """Schulman's k3 estimate of KL(policy || reference) per token: >= 0, and 0 where they agree."""
    log_ratio = reference - logprobs  # (B, T-1)
    return torch.exp(log_ratio) - log_ratio - 1  # (B, T-1)


LOSSES: dict[str, LossFn] = {"ppo_clip": ppo_clip_loss}
