"""The training step, in one straight line: pack -> forward -> loss -> backward -> clip -> step.

`Trainer.step(samples, advantages)` takes merged samples (`merging.py`) and one GRPO advantage
per sample (`advantages.py`; the samples of one episode share it), packs them into right-padded
micro-batches under `optim.micro_batch_tokens`, and minimises the PPO-clip objective against
the behaviour logprobs recorded at sampling time (scored at the temperature each token was
sampled at), plus `grpo.kl_coef` x the k3 KL estimate to the reference policy (the base model:
the LoRA adapter disabled, or a frozen copy under full fine-tuning). The loss is a token-level
mean over every trainable token of the whole batch: each micro-batch's sum is divided by the
batch total, so neither merging nor micro-batching changes the loss or the gradients. With
`optim.share_prefix`, samples that start with the same long prompt (a GRPO group) run that
prefix once and their suffixes attend to its keys/values (`prefix_sharing.py`); again the loss
and the gradients do not change.

When the sampler is not the trainer's own forward (vLLM, another dtype), its recorded logprobs
differ from the trainer's on the very same tokens. `grpo.tis` (truncated importance sampling,
Yao et al. 2025) then takes the PPO ratio against the trainer's own old logprobs and multiplies
each token's policy-gradient term by min(pi_old / pi_sampler, grpo.tis_cap) (`truncated_is_weights`).
"""

from __future__ import annotations

import copy
import math
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import peft
import torch
from torch import Tensor, nn

from agentjet.core.config import TrainConfig, changed_fields
from agentjet.core.episodes.merging import Sample
from agentjet.core.errors import ConfigConflict, NonFiniteStep
from agentjet.core.placement import memory_report, parameter_bytes
from agentjet.core.step.losses import LOSSES, kl_k3, ppo_clip_loss, sequence_logprobs, truncated_is_weights
from agentjet.core.step.packing import MicroBatch, collate, plan_micro_batches
from agentjet.core.step.policy_model import build_model, load_policy_weights, set_activation_checkpointing
from agentjet.core.step.prefix_sharing import PrefixGroup, SharedPrefix, suffix_samples
from agentjet.core.step.stages import Stages, drive
from agentjet.core.step.step_plan import WorkUnit, kept_indices, plan_work
from agentjet.core.step.step_stats import RunningSums, StepStats, StepTotals, TisSums

__all__ = [
    "LOSSES",
    "Trainer",
    "WorkUnit",
    "kl_k3",
    "plan_work",
    "ppo_clip_loss",
    "sequence_logprobs",
    "truncated_is_weights",
]


class Trainer:
    """Owns the policy model and its AdamW optimiser; `step` is one GRPO update.

    `sampler_is_own_forward`: the behaviour logprobs come from this trainer's own forward (the
    transformers backend on the trainer's device and dtype); False (vLLM, another dtype) turns
    `grpo.tis: auto` on.
    """

    _tis_sums: TisSums | None = None  # opened by `step`, filled by `_micro_batch_loss`

    def __init__(
        self,
        model_path: Path,
        config: TrainConfig,
        *,
        device: str = "cpu",
        dtype: torch.dtype = torch.float32,
        seed: int = 0,
        loss: str | None = None,
        sampler_is_own_forward: bool = True,
    ) -> None:
        """`loss` overrides `config.grpo.loss` (a key of LOSSES); `dtype` is the frozen base's precision."""
        torch.manual_seed(seed)  # the LoRA A init
        self.config = config
        self.sampler_is_own_forward = sampler_is_own_forward  # False: grpo.tis "auto" is on
        self.device = torch.device(device)
        self.dtype = dtype
        self.model = build_model(model_path, config.lora, self.device, dtype)
        self.model.train()
        self._param_bytes = parameter_bytes(self.model.parameters())  # once: a status poll asks often
        self._set_gradient_checkpointing(config.optim.gradient_checkpointing)
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

    def memory_report(self) -> dict[str, Any]:
        """This copy's placement, parameter bytes and peak memory (`placement.memory_report`)."""
        return memory_report(str(self.device), str(self.dtype).removeprefix("torch."), self._param_bytes)

    @property
    def tis_active(self) -> bool:
        """Whether truncated importance sampling weights the loss: `grpo.tis` on, or auto with a foreign sampler."""
        mode = self.config.grpo.tis
        return mode == "on" or (mode == "auto" and not self.sampler_is_own_forward)

    def trainable_parameters(self) -> list[nn.Parameter]:
        return [p for p in self.model.parameters() if p.requires_grad]

    def step(self, samples: Sequence[Sample], advantages: Sequence[float]) -> StepStats:
        """One update: gradients of the token-mean loss over all samples, clip, AdamW step.

        Raises NonFiniteStep, with the weights and optimiser as they were, when the loss, the
        gradient norm or any updated weight is not finite: a poisoned step is never applied.
        """
        return drive(self.step_stages(samples, advantages))

    def step_stages(self, samples: Sequence[Sample], advantages: Sequence[float]) -> Stages[StepStats]:
        """`step`, pausing after each micro-batch's backward: the caller may run other work on this thread between.

        Why: on a CPU the server's decode loop runs the update between its decode steps, so one OpenMP
        team does both (`training/step_runner.py`). The optimiser step runs after the last pause, so a
        caller that abandons the stages (`close()`) leaves the weights as they were; the next step
        zeroes the gradients it left behind.
        """
        started = time.perf_counter()
        self._take_pending_config()
        if not all(math.isfinite(a) for a in advantages):
            raise NonFiniteStep("advantages are not finite")
        zero = torch.zeros((), device=self.device)
        self._tis_sums = tis = TisSums(zero, zero)
        try:
            totals = yield from self.accumulate_stages(samples, advantages)
        finally:
            self._tis_sums = None
        ran = kept_indices(len(samples), self._skip_zero(advantages))
        ran_tokens = sum(sum(samples[i].loss_mask[1:]) for i in ran)
        tis_scale = totals.tokens / ran_tokens if ran_tokens else 0.0  # TIS means over the tokens that ran
        grad_norm = nn.utils.clip_grad_norm_(self.trainable_parameters(), self.config.optim.grad_clip)
        loss, norm = totals.loss.item(), grad_norm.item()  # CPU<->GPU sync: the step depends on them
        if not (math.isfinite(loss) and math.isfinite(norm)):
            self.optimizer.zero_grad(set_to_none=True)
            raise NonFiniteStep(f"loss={loss} grad_norm={norm}: the step was not applied")
        self._apply_update()
        self.steps += 1
        return StepStats(  # .item(): CPU<->GPU syncs, once per step
            loss=loss,
            kl=totals.kl.item(),
            clip_fraction=totals.clipped.item() / totals.tokens,
            grad_norm=norm,
            tokens_trained=totals.tokens,
            samples=len(samples),
            micro_batches=totals.micro_batches,
            step_time_s=time.perf_counter() - started,
            prefix_tokens_saved=totals.prefix_tokens_saved,
            tis_applied=self.tis_active,
            tis_weight_mean=tis.weight.item() * tis_scale if ran_tokens else None,
            tis_truncated_fraction=tis.truncated.item() * tis_scale if ran_tokens else None,
            samples_skipped=len(samples) - len(ran),
        )

    def _apply_update(self) -> None:
        """AdamW step, undone if any updated weight is not finite: the weights are restored, and under
        LoRA the optimiser moments too (under full fine-tuning copying them each step costs too much;
        they only hold the step's clipped, finite gradients)."""
        params = self.trainable_parameters()
        weights = [p.detach().clone() for p in params]
        moments = copy.deepcopy(self.optimizer.state_dict()) if isinstance(self.model, peft.PeftModel) else None
        self.optimizer.step()
        self.optimizer.zero_grad(set_to_none=True)
        finite = torch.stack([torch.isfinite(p).all() for p in params]).all()
        if bool(finite):  # CPU<->GPU sync, once per step
            return
        with torch.no_grad():
            for param, saved in zip(params, weights, strict=True):
                param.copy_(saved)
        if moments is not None:
            self.optimizer.load_state_dict(moments)
        raise NonFiniteStep("the update made some weights non-finite; weights and optimiser restored")

    def plan(self, samples: Sequence[Sample], advantages: Sequence[float]) -> list[WorkUnit]:
        """The step's work units (`plan_work`); without a KL term, samples whose advantage is 0 are left out."""
        return plan_work(samples, self.config.optim, self._skip_zero(advantages), device=str(self.device))

    def _skip_zero(self, advantages: Sequence[float]) -> Sequence[float] | None:
        """The advantages whose zeros may be left out: only a loss without a KL term gives them no gradient."""
        return advantages if self.config.grpo.kl_coef == 0 else None

    def accumulate_gradients(
        self, samples: Sequence[Sample], advantages: Sequence[float], units: Sequence[WorkUnit] | None = None
    ) -> StepTotals:
        """Zero the grads, then forward + backward each micro-batch; leaves the batch's grads in `.grad`.

        `units` (default: every unit of `plan_work`) runs only those: one process's share of a
        data-parallel step (`distributed_trainer.py`). Each share is still divided by the whole
        batch's trainable tokens, so the shares' losses and gradients sum to the batch's.
        """
        return drive(self.accumulate_stages(samples, advantages, units))

    def accumulate_stages(
        self, samples: Sequence[Sample], advantages: Sequence[float], units: Sequence[WorkUnit] | None = None
    ) -> Stages[StepTotals]:
        """`accumulate_gradients`, pausing after each micro-batch's backward (`step_stages`)."""
        if len(samples) != len(advantages):
            raise ValueError(f"{len(samples)} samples but {len(advantages)} advantages")
        tokens = sum(sum(s.loss_mask[1:]) for s in samples)  # a trainable first token has no context
        if tokens == 0:
            raise ValueError("no trainable tokens: every sample is context only")
        self.optimizer.zero_grad(set_to_none=True)
        zero = torch.zeros((), device=self.device)
        running = RunningSums(zero, zero, zero)
        work = self.plan(samples, advantages) if units is None else units
        for unit in work:
            if unit.prefix == 0:  # a micro-batch of samples that share nothing
                yield from self._run_micro_batches(samples, advantages, tokens, running, plan=[unit.indices])
                continue
            group = PrefixGroup(unit.prefix, unit.indices)
            head = samples[group.indices[0]].token_ids[: group.length]
            prefix = SharedPrefix(self.model, head, self.device)
            reference = self._reference_prefix(head) if self.config.grpo.kl_coef > 0 else None
            group_advantages = [advantages[i] for i in group.indices]
            suffixes = suffix_samples(samples, group)
            yield from self._run_micro_batches(suffixes, group_advantages, tokens, running, prefix, reference)
            prefix.backward()
        for param in self.trainable_parameters():  # nothing ran (every advantage 0): AdamW still takes its step
            if param.grad is None:
                param.grad = torch.zeros_like(param)
        saved = sum((len(u.indices) - 1) * u.prefix for u in work)
        return StepTotals(running.loss, running.kl, running.clipped, tokens, running.micro_batches, saved)

    def _run_micro_batches(
        self,
        samples: Sequence[Sample],
        advantages: Sequence[float],
        tokens: int,
        running: RunningSums,
        prefix: SharedPrefix | None = None,
        reference: SharedPrefix | None = None,
        *,
        plan: Sequence[Sequence[int]] | None = None,
    ) -> Stages[None]:
        """Pack `samples` under the token budget (or as `plan` says); forward + backward each pack, into `running`,
        pausing after each."""
        if plan is None:
            budget = self.config.optim.tokens_per_micro_batch(str(self.device))
            plan = plan_micro_batches([len(s.token_ids) for s in samples], budget)
        for indices in plan:
            batch = collate(samples, advantages, indices, self.device)
            if not batch.loss_mask.any():
                continue  # context only (e.g. a prompt-only call): nothing to train, no forward needed
            batch_loss, batch_kl, batch_clipped = self._micro_batch_loss(batch, tokens, prefix, reference)
            batch_loss.backward()  # type: ignore[no-untyped-call]  # torch leaves Tensor.backward unannotated
            running.loss = running.loss + batch_loss.detach()
            running.kl = running.kl + batch_kl
            running.clipped = running.clipped + batch_clipped
            running.micro_batches += 1
            yield

    def _micro_batch_loss(
        self, batch: MicroBatch, tokens: int, prefix: SharedPrefix | None, reference: SharedPrefix | None
    ) -> tuple[Tensor, Tensor, Tensor]:
        """(this micro-batch's share of the batch loss, its share of the KL, its clipped-token count)."""
        grpo = self.config.grpo
        keep = batch.loss_mask.any(dim=0).nonzero().squeeze(1)  # (K,) positions with a trained target in some row
        tempered = batch.temperatures[:, keep]  # (B, K)
        temperatures = None if bool(tempered.eq(1.0).all()) else tempered  # all 1.0: skip a (B, K, V) division
        logprobs = sequence_logprobs(
            self.model, batch.token_ids, batch.attention_mask, prefix, keep, temperatures
        )  # (B, K)
        behaviour = batch.behaviour_logprobs[:, keep]  # (B, K)
        mask = batch.loss_mask[:, keep]  # (B, K) bool
        old = self._old_logprobs(logprobs)  # (B, K)
        weights, truncated = truncated_is_weights(old, behaviour, grpo.tis_cap)  # (B, K) each
        if self._tis_sums is not None:
            self._tis_sums.weight = self._tis_sums.weight + torch.where(mask, weights, 0.0).sum() / tokens
            self._tis_sums.truncated = self._tis_sums.truncated + (truncated & mask).sum() / tokens
        if self.tis_active:  # ratio against the trainer's own old policy, corrected to the sampler's by TIS
            per_token, active = self.loss_fn(logprobs, old, batch.advantages, grpo.clip_eps)
            per_token = weights * per_token  # (B, K); the KL term below is not reweighted
        else:  # ratio against the sampler's logprobs directly
            per_token, active = self.loss_fn(logprobs, behaviour, batch.advantages, grpo.clip_eps)
        kl = torch.zeros_like(logprobs)  # (B, K)
        if grpo.kl_coef > 0:
            kl = kl_k3(logprobs, self._reference_logprobs(batch, reference, keep, temperatures))  # (B, K)
            per_token = per_token + grpo.kl_coef * kl  # (B, K)
        loss = torch.where(mask, per_token, 0.0).sum() / tokens  # (), masked: padding never reaches a grad
        kl_share = torch.where(mask, kl.detach(), 0.0).sum() / tokens  # ()
        return loss, kl_share, (active & mask).sum()

    @staticmethod
    def _old_logprobs(logprobs: Tensor) -> Tensor:
        """pi_old, the trainer's own logprobs under the weights this batch trains from (no grad).

        `step` takes exactly one optimiser step per batch, after every micro-batch's forward, so
        the weights of this forward are the old weights and pi_old = `logprobs.detach()`: no
        second forward. Should a batch ever take several optimiser steps (PPO epochs or
        mini-batches), this is no longer true: pi_old must then be a no-grad forward under the
        pre-update weights, computed once per batch before its first optimiser step and carried
        with the batch (like `behaviour_logprobs`), and this method must return it.
        """
        return logprobs.detach()

    @torch.no_grad()
    def _reference_logprobs(
        self, batch: MicroBatch, prefix: SharedPrefix | None, keep: Tensor, temperatures: Tensor | None
    ) -> Tensor:
        """The reference policy's logprobs (B, K), at the same temperatures as the policy's."""
        args = (batch.token_ids, batch.attention_mask, prefix, keep, temperatures)
        if self.reference is not None:
            return sequence_logprobs(self.reference, *args)  # (B, K)
        assert isinstance(self.model, peft.PeftModel)
        with self.model.disable_adapter():  # the reference policy = the base weights
            return sequence_logprobs(self.model, *args)  # (B, K)

    @torch.no_grad()
    def _reference_prefix(self, token_ids: Sequence[int]) -> SharedPrefix:
        """The shared prefix under the reference policy (for the KL term), computed once per group."""
        if self.reference is not None:
            return SharedPrefix(self.reference, token_ids, self.device)
        assert isinstance(self.model, peft.PeftModel)
        with self.model.disable_adapter():
            return SharedPrefix(self.model, token_ids, self.device)

    def save_adapter(self, path: Path) -> None:
        """A PEFT adapter folder (`PeftModel.from_pretrained`); under full fine-tune, the whole model."""
        self.model.save_pretrained(path)  # type: ignore[operator]

    def load_adapter(self, path: Path) -> None:
        """Set the policy weights from a folder `save_adapter` wrote: resuming from a checkpoint."""
        load_policy_weights(self.model, path, self.device)

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
        `grpo.kl_coef`, `grpo.loss`, `grpo.tis`, `grpo.tis_cap` (read at each micro-batch). Fixed once
        built: `lora.*` (the adapter's shape and targets) and turning KL on under full fine-tuning (no
        frozen reference copy was kept).
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
        self._set_gradient_checkpointing(config.optim.gradient_checkpointing)
        self.config = config

    def _set_gradient_checkpointing(self, enabled: bool) -> None:
        """Turn `optim.gradient_checkpointing` on or off (`policy_model.set_activation_checkpointing`) if it changed."""
        if enabled == getattr(self, "_checkpointing", False):
            return
        set_activation_checkpointing(self.model, enabled)
        self._checkpointing = enabled

    def _apply_optim(self, config: TrainConfig) -> None:
        for group in self.optimizer.param_groups:
            group["lr"] = config.optim.lr
            group["weight_decay"] = config.optim.weight_decay
