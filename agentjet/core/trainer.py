"""The training step, in one straight line: pack -> forward -> loss -> backward -> clip -> step.

`Trainer.step(samples, advantages)` takes merged samples (`merging.py`) and one GRPO advantage
per sample (`advantages.py`; the samples of one episode share it), packs them into right-padded
micro-batches under `optim.micro_batch_tokens`, and minimises the PPO-clip objective against
the behaviour logprobs recorded at sampling time, plus `grpo.kl_coef` x the k3 KL estimate to
the reference policy (the base model: the LoRA adapter disabled, or a frozen copy under full
fine-tuning). The loss is a token-level mean over every trainable token of the whole batch:
each micro-batch's sum is divided by the batch total, so neither merging nor micro-batching
changes the loss or the gradients.
"""

from __future__ import annotations

import copy
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import peft
import torch
from torch import Tensor, nn
from transformers import AutoModelForCausalLM

from agentjet.core.config import LoraConfig, TrainConfig, changed_fields
from agentjet.core.errors import ConfigConflict
from agentjet.core.merging import Sample
from agentjet.core.packing import MicroBatch, collate, plan_micro_batches

__all__ = ["LOSSES", "StepStats", "Trainer", "kl_k3", "ppo_clip_loss", "sequence_logprobs", "to_peft"]

# (logprobs, behaviour_logprobs, advantages, clip_eps) -> (per-token loss, clip active), (B, T-1) each
LossFn = Callable[[Tensor, Tensor, Tensor, float], tuple[Tensor, Tensor]]


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


def to_peft(cfg: LoraConfig) -> peft.LoraConfig:
    """Our LoRA section as peft's config for a causal LM."""
    return peft.LoraConfig(
        task_type="CAUSAL_LM",
        r=cfg.rank,
        lora_alpha=cfg.alpha,  # type: ignore[arg-type]  # annotated int; peft's scaling alpha / r takes floats
        lora_dropout=cfg.dropout,
        target_modules=list(cfg.target_modules),
        bias="none",
    )


def sequence_logprobs(model: nn.Module, token_ids: Tensor, attention_mask: Tensor) -> Tensor:
    """Logprob of each next token under `model`: out[b, t] = log p(token_ids[b, t+1] | token_ids[b, :t+1])."""
    logits: Tensor = model(input_ids=token_ids, attention_mask=attention_mask).logits  # (B, T, V)
    logits = logits[:, :-1].float()  # (B, T-1, V), position t predicts token t+1
    targets = token_ids[:, 1:].unsqueeze(-1)  # (B, T-1, 1)
    picked = logits.gather(-1, targets).squeeze(-1)  # (B, T-1)
    return picked - torch.logsumexp(logits, dim=-1)  # (B, T-1)


def ppo_clip_loss(logprobs: Tensor, behaviour: Tensor, advantages: Tensor, clip_eps: float) -> tuple[Tensor, Tensor]:
    """Negated PPO-clip objective per token, and where the clip zeroes the gradient."""
    ratio = torch.exp(logprobs - behaviour)  # (B, T-1)
    adv = advantages[:, None]  # (B, 1)
    unclipped = ratio * adv  # (B, T-1)
    clipped = ratio.clamp(1 - clip_eps, 1 + clip_eps) * adv  # (B, T-1)
    active = ((ratio < 1 - clip_eps) & (adv < 0)) | ((ratio > 1 + clip_eps) & (adv > 0))  # (B, T-1)
    return -torch.minimum(unclipped, clipped), active


def kl_k3(logprobs: Tensor, reference: Tensor) -> Tensor:
    """Schulman's k3 estimate of KL(policy || reference) per token: >= 0, and 0 where they agree."""
    log_ratio = reference - logprobs  # (B, T-1)
    return torch.exp(log_ratio) - log_ratio - 1  # (B, T-1)


LOSSES: dict[str, LossFn] = {"ppo_clip": ppo_clip_loss}


def build_model(model_path: Path, lora: LoraConfig, device: torch.device) -> nn.Module:
    """The policy in fp32: the base model wrapped with a fresh LoRA adapter, or itself (full fine-tune)."""
    model: nn.Module = AutoModelForCausalLM.from_pretrained(model_path, dtype=torch.float32)
    model.to(device)
    if not lora.enabled:
        return model
    return peft.get_peft_model(model, to_peft(lora))


@dataclass(frozen=True)
class _Totals:
    """Batch-level sums left behind by the backward passes (still tensors: no sync yet)."""

    loss: Tensor  # () token-mean loss of the whole batch
    kl: Tensor  # () token-mean KL
    clipped: Tensor  # () count of trainable tokens with the clip active
    tokens: int
    micro_batches: int


class Trainer:
    """Owns the policy model and its AdamW optimiser; `step` is one GRPO update."""

    def __init__(
        self, model_path: Path, config: TrainConfig, *, device: str = "cpu", seed: int = 0, loss: str | None = None
    ) -> None:
        """`loss` overrides `config.grpo.loss` (a key of LOSSES)."""
        torch.manual_seed(seed)  # the LoRA A init
        self.config = config
        self.device = torch.device(device)
        self.model = build_model(model_path, config.lora, self.device)
        self.model.train()
        self.reference: nn.Module | None = None
        if not isinstance(self.model, peft.PeftModel) and config.grpo.kl_coef > 0:
            self.reference = copy.deepcopy(self.model).eval().requires_grad_(False)  # full fine-tune: frozen copy
        self.loss_fn = LOSSES[loss or config.grpo.loss]
        self._pending: TrainConfig | None = None  # set by `reconfigure`, taken at the next step
        self._pending_lock = threading.Lock()
        self.optimizer = torch.optim.AdamW(
            self.trainable_parameters(), lr=config.optim.lr, weight_decay=config.optim.weight_decay
        )
        self.steps = 0  # optimiser steps taken = the policy version being trained

    def trainable_parameters(self) -> list[nn.Parameter]:
        return [p for p in self.model.parameters() if p.requires_grad]

    def step(self, samples: Sequence[Sample], advantages: Sequence[float]) -> StepStats:
        """One update: gradients of the token-mean loss over all samples, clip, AdamW step."""
        started = time.perf_counter()
        self._take_pending_config()
        totals = self.accumulate_gradients(samples, advantages)
        grad_norm = nn.utils.clip_grad_norm_(self.trainable_parameters(), self.config.optim.grad_clip)
        self.optimizer.step()
        self.optimizer.zero_grad(set_to_none=True)
        self.steps += 1
        return StepStats(  # .item(): CPU<->GPU syncs, once per step
            loss=totals.loss.item(),
            kl=totals.kl.item(),
            clip_fraction=totals.clipped.item() / totals.tokens,
            grad_norm=grad_norm.item(),
            tokens_trained=totals.tokens,
            samples=len(samples),
            micro_batches=totals.micro_batches,
            step_time_s=time.perf_counter() - started,
        )

    def accumulate_gradients(self, samples: Sequence[Sample], advantages: Sequence[float]) -> _Totals:
        """Zero the grads, then forward + backward each micro-batch; leaves the batch's grads in `.grad`."""
        if len(samples) != len(advantages):
            raise ValueError(f"{len(samples)} samples but {len(advantages)} advantages")
        groups = plan_micro_batches([len(s.token_ids) for s in samples], self.config.optim.micro_batch_tokens)
        batches = [collate(samples, advantages, group, self.device) for group in groups]
        tokens = sum(batch.trainable_tokens for batch in batches)
        if tokens == 0:
            raise ValueError("no trainable tokens: every sample is context only")
        self.optimizer.zero_grad(set_to_none=True)
        loss = kl = clipped = torch.zeros((), device=self.device)
        for batch in batches:
            batch_loss, batch_kl, batch_clipped = self._micro_batch_loss(batch, tokens)
            batch_loss.backward()  # type: ignore[no-untyped-call]  # torch leaves Tensor.backward unannotated
            loss, kl, clipped = loss + batch_loss.detach(), kl + batch_kl, clipped + batch_clipped
        return _Totals(loss, kl, clipped, tokens, len(batches))

    def _micro_batch_loss(self, batch: MicroBatch, tokens: int) -> tuple[Tensor, Tensor, Tensor]:
        """(this micro-batch's share of the batch loss, its share of the KL, its clipped-token count)."""
        grpo = self.config.grpo
        logprobs = sequence_logprobs(self.model, batch.token_ids, batch.attention_mask)  # (B, T-1)
        per_token, active = self.loss_fn(logprobs, batch.behaviour_logprobs, batch.advantages, grpo.clip_eps)
        kl = torch.zeros_like(logprobs)  # (B, T-1)
        if grpo.kl_coef > 0:
            kl = kl_k3(logprobs, self._reference_logprobs(batch))  # (B, T-1)
            per_token = per_token + grpo.kl_coef * kl  # (B, T-1)
        mask = batch.loss_mask  # (B, T-1) bool
        loss = torch.where(mask, per_token, 0.0).sum() / tokens  # (), masked: padding never reaches a grad
        kl_share = torch.where(mask, kl.detach(), 0.0).sum() / tokens  # ()
        return loss, kl_share, (active & mask).sum()

    @torch.no_grad()
    def _reference_logprobs(self, batch: MicroBatch) -> Tensor:
        if self.reference is not None:
            return sequence_logprobs(self.reference, batch.token_ids, batch.attention_mask)  # (B, T-1)
        assert isinstance(self.model, peft.PeftModel)
        with self.model.disable_adapter():  # the reference policy = the base weights
            return sequence_logprobs(self.model, batch.token_ids, batch.attention_mask)  # (B, T-1)

    def save_adapter(self, path: Path) -> None:
        """A PEFT adapter folder (`PeftModel.from_pretrained`); under full fine-tune, the whole model."""
        self.model.save_pretrained(path)  # type: ignore[operator]

    def load_adapter(self, path: Path) -> None:
        """Set the policy weights from a folder `save_adapter` wrote: resuming from a checkpoint."""
        if isinstance(self.model, peft.PeftModel):
            weights = peft.utils.load_peft_weights(str(path), device=str(self.device))
            peft.set_peft_model_state_dict(self.model, weights)
        else:
            saved = AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32)
            self.model.load_state_dict(saved.state_dict())

    def state_dict(self) -> dict[str, Any]:
        """Optimiser state and step count (the weights travel in the adapter folder)."""
        return {"step": self.steps, "optimizer": self.optimizer.state_dict()}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore optimiser moments and step; lr and weight decay stay this trainer's config, not the checkpoint's."""
        self.optimizer.load_state_dict(state["optimizer"])
        self._apply_optim(self.config)
        self.steps = int(state["step"])

    # ---- config changes while training (PUT /swarm/config) -----------------------------------
    def reconfigure(self, config: TrainConfig) -> None:
        """Take `config` from the next step on, or raise ConfigConflict naming what cannot change now.

        Live: `optim.*` (lr and weight decay are written into the optimiser), `grpo.clip_eps`,
        `grpo.kl_coef`, `grpo.loss`. Fixed once built: `lora.*` (the adapter's shape and targets)
        and turning KL on under full fine-tuning (no frozen reference copy was kept).
        """
        locked = [name for name in changed_fields(self.config, config) if name.startswith("lora.")]
        if self.reference is None and not isinstance(self.model, peft.PeftModel) and config.grpo.kl_coef > 0:
            locked.append("grpo.kl_coef")  # 0 -> >0 under full fine-tuning: the base weights are gone
        if locked:
            raise ConfigConflict(
                f"{', '.join(locked)} cannot change after the trainer was built (step {self.steps}): the model "
                "and adapter are fixed; restart the server with a fresh --state-dir to train with them"
            )
        with self._pending_lock:
            self._pending = config

    def _take_pending_config(self) -> None:
        """Apply the latest `reconfigure` at a step boundary (never mid-step): worker-thread side."""
        with self._pending_lock:
            config, self._pending = self._pending, None
        if config is None:
            return
        self.loss_fn = LOSSES[config.grpo.loss]
        self._apply_optim(config)
        self.config = config

    def _apply_optim(self, config: TrainConfig) -> None:
        for group in self.optimizer.param_groups:
            group["lr"] = config.optim.lr
            group["weight_decay"] = config.optim.weight_decay
