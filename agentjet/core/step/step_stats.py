"""What one training step measured: `StepStats` out, and the sums it keeps on the device until the step ends.

The sums stay tensors across the micro-batches, so a step pays one CPU<->GPU sync for its
statistics, at its end; a data-parallel step all-reduces them first (`rank_trainer.py`).
"""

from __future__ import annotations

from dataclasses import dataclass

from torch import Tensor

__all__ = ["RunningSums", "StepStats", "StepTotals", "TisSums"]


@dataclass(frozen=True)
class StepStats:
    """What one optimiser step did. `loss`, `kl` are token means; `grad_norm` is before clipping."""

    loss: float
    kl: float
    clip_fraction: float
    grad_norm: float
    tokens_trained: int
    samples: int
    micro_batches: int
    step_time_s: float
    prefix_tokens_saved: int = 0  # prompt tokens not recomputed thanks to group prefix sharing
    # truncated importance sampling (grpo.tis): whether it weighted this step's loss, and the token
    # mean of min(pi_old / pi_sampler, tis_cap) and the share of tokens at the cap, measured either way
    tis_applied: bool = False
    tis_weight_mean: float | None = None
    tis_truncated_fraction: float | None = None
    samples_skipped: int = 0  # samples with advantage 0 and no KL term: no gradient, so never run


@dataclass(frozen=True)
class StepTotals:
    """Batch-level sums left behind by the backward passes (still tensors: no sync yet)."""

    loss: Tensor  # () token-mean loss of the whole batch
    kl: Tensor  # () token-mean KL
    clipped: Tensor  # () count of trainable tokens with the clip active
    tokens: int
    micro_batches: int
    prefix_tokens_saved: int


@dataclass
class TisSums:
    """Token-mean shares of the TIS weight and of the truncated tokens over one step's micro-batches."""

    weight: Tensor  # ()
    truncated: Tensor  # ()


@dataclass
class RunningSums:
    """Sums over the micro-batches of one step (tensors: no device sync until the step ends)."""

    loss: Tensor
    kl: Tensor
    clipped: Tensor
    micro_batches: int = 0
