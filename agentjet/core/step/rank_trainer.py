"""One rank of a data-parallel training group: a `Trainer` that runs its share of each step.

Every rank plans the same work units (`step_plan.plan_work`) and takes its share (`split_units`,
balanced by tokens) under `DistributedDataParallel.no_sync()`, each share divided by the whole
batch's token count; one zero-weighted one-token forward/backward through the DDP wrapper then
makes DDP's reducer all-reduce the accumulated gradients, with a comm hook that sums them (DDP's
default divides by the world size). So every rank holds the single-process gradient and takes
the identical AdamW step; the step's statistics are all-reduced too.
"""

from __future__ import annotations

import gc
from collections.abc import Sequence

import torch
import torch.distributed as dist
from torch._C._distributed_c10d import GradBucket  # typed here (.pyi)
from torch.futures import Future
from torch.nn.parallel import DistributedDataParallel

from agentjet.core.episodes.merging import Sample
from agentjet.core.step.stages import Stages
from agentjet.core.step.step_plan import WorkUnit
from agentjet.core.step.step_stats import StepTotals
from agentjet.core.step.trainer import Trainer

__all__ = ["RankTrainer", "split_units"]


def split_units(units: Sequence[WorkUnit], world_size: int) -> list[list[WorkUnit]]:
    """Each rank's share of the units, balanced by tokens (largest first onto the least loaded rank).

    Deterministic, so every rank computes the same split; each share keeps the plan's order. Pure.
    """
    load = [0] * world_size
    shares: list[list[int]] = [[] for _ in range(world_size)]
    for index in sorted(range(len(units)), key=lambda i: (-units[i].tokens, i)):
        rank = min(range(world_size), key=lambda r: (load[r], r))
        shares[rank].append(index)
        load[rank] += units[index].tokens
    return [[units[i] for i in sorted(share)] for share in shares]


def _sum_hook(state: object, bucket: GradBucket) -> Future[torch.Tensor]:
    """DDP comm hook: all-reduce SUM (each rank's share is already divided by the global token count)."""
    work = dist.all_reduce(bucket.buffer(), async_op=True)
    assert work is not None
    summed: Future[torch.Tensor] = work.get_future().then(lambda done: done.value()[0])
    return summed


# DDP checks the hook's annotations against the real types; `from __future__ import annotations` left strings
_sum_hook.__annotations__ = {"state": object, "bucket": GradBucket, "return": Future[torch.Tensor]}


class RankTrainer(Trainer):
    """A `Trainer` that runs its rank's share of each step; DDP sums the shares' gradients.

    Without `join` it computes the whole step alone. A queued `reconfigure` is applied only by
    `apply_queued_config` (at a step command, never inside `step`), so every rank applies it at
    the same step.
    """

    rank = 0
    world_size = 1
    ddp: DistributedDataParallel | None = None

    def join(self, rank: int, world_size: int) -> None:
        """Wrap the policy in DDP over the default group; its construction copies rank 0's trainable weights."""
        self.rank, self.world_size = rank, world_size
        frozen = [name for name, p in self.model.named_parameters() if not p.requires_grad]
        DistributedDataParallel._set_params_and_buffers_to_ignore_for_model(self.model, frozen)  # type: ignore[no-untyped-call]  # frozen: the same files
        device_ids = [self.device.index] if self.device.type == "cuda" else None
        self.ddp = DistributedDataParallel(self.model, device_ids=device_ids, forward_sync_buffers=False)
        self.ddp.register_comm_hook(None, _sum_hook)

    def leave(self) -> None:
        """Drop the DDP wrapper (and its reducer's hooks on the parameters) before the group goes."""
        self.ddp = None
        self.rank, self.world_size = 0, 1
        gc.collect()

    def _take_pending_config(self) -> None:
        """Not at the start of `step`: a queued config waits for `apply_queued_config` (the step command)."""

    def apply_queued_config(self) -> None:
        """Apply the config `reconfigure` queued (if any) now, between steps."""
        super()._take_pending_config()

    def accumulate_stages(
        self, samples: Sequence[Sample], advantages: Sequence[float], units: Sequence[WorkUnit] | None = None
    ) -> Stages[StepTotals]:
        """This rank's share of the batch's gradients, then the sum over every rank (identical on all)."""
        if self.ddp is None:
            return (yield from super().accumulate_stages(samples, advantages, units))
        if units is None:
            units = split_units(self.plan(samples, advantages), self.world_size)[self.rank]
        with self.ddp.no_sync():  # the micro-batches run on the bare model: nothing is reduced yet
            totals = yield from super().accumulate_stages(samples, advantages, units)
        self._reduce_gradients()
        return self._global_totals(totals)

    def _reduce_gradients(self) -> None:
        """One zero-weighted one-token forward/backward through DDP: its reducer sums the accumulated grads."""
        assert self.ddp is not None
        ids = torch.zeros((1, 1), dtype=torch.long, device=self.device)  # (1, 1)
        logits = self.ddp(input_ids=ids, attention_mask=torch.ones_like(ids), logits_to_keep=1).logits
        (logits.float().sum() * 0.0).backward()  # every trainable weight gets a 0 grad: its hook fires

    def _global_totals(self, totals: StepTotals) -> StepTotals:
        """The step's statistics summed over the ranks (the truncated-IS sums too, when the step keeps them)."""
        tis = self._tis_sums
        parts = [totals.loss, totals.kl, totals.clipped]
        parts += [torch.tensor(float(totals.micro_batches)), torch.tensor(float(totals.prefix_tokens_saved))]
        if tis is not None:
            parts += [tis.weight, tis.truncated]
        packed = torch.stack([p.detach().to(self.device, torch.float64) for p in parts])  # (P,)
        dist.all_reduce(packed)
        if tis is not None:
            tis.weight, tis.truncated = packed[5].float(), packed[6].float()
        loss, kl, clipped = packed[0].float(), packed[1].float(), packed[2].float()
        return StepTotals(loss, kl, clipped, totals.tokens, int(packed[3].item()), int(packed[4].item()))
