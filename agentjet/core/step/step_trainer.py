"""What the training loop needs of a trainer (`trainer.Trainer`; a fake in unit tests), and the real one's factory."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol

from agentjet.core.config import TrainConfig
from agentjet.core.episodes.merging import Sample
from agentjet.core.placement import Placement, resolve_placement
from agentjet.core.step.step_stats import StepStats

__all__ = ["StepTrainer", "TrainerFactory", "default_trainer", "trainer_factory"]


class StepTrainer(Protocol):
    """What the loop needs of a trainer (`trainer.Trainer`; a fake in unit tests)."""

    steps: int

    def step(self, samples: Sequence[Sample], advantages: Sequence[float]) -> StepStats: ...

    def save_adapter(self, path: Path) -> None: ...

    def load_adapter(self, path: Path) -> None: ...

    def state_dict(self) -> dict[str, Any]: ...

    def load_state_dict(self, state: dict[str, Any]) -> None: ...

    def reconfigure(self, config: TrainConfig) -> None: ...


TrainerFactory = Callable[[Path, TrainConfig], StepTrainer]


def default_trainer(
    model_path: Path,
    config: TrainConfig,
    *,
    placement: Placement | None = None,
    train_procs: int = 1,
    sampler_is_own_forward: bool = True,
) -> StepTrainer:
    """The real trainer at `placement` (default: auto, a GPU in bf16 when there is one).

    `sampler_is_own_forward`: the backend samples with the trainer's own forward (the
    transformers backend at the same placement); False (vLLM) turns `grpo.tis: auto` on.

    `train_procs` > 1: data-parallel over that many torch.distributed ranks, this process rank 0
    (`distributed_trainer.py`; the other ranks spawned here, or started by torchrun).
    Imported here: torch is slow to import.
    """
    from agentjet.core.step.trainer import Trainer

    where = placement or resolve_placement()
    if train_procs > 1:
        from agentjet.core.step.distributed_trainer import DistributedTrainer, torchrun_rank

        spawn = torchrun_rank() is None
        return DistributedTrainer(
            model_path, config, world_size=train_procs, device=where.device, dtype=where.dtype, spawn=spawn,
            sampler_is_own_forward=sampler_is_own_forward,
        )  # fmt: skip
    return Trainer(
        model_path, config, device=where.device, dtype=where.torch_dtype, loss=config.grpo.loss,
        sampler_is_own_forward=sampler_is_own_forward,
    )  # fmt: skip


def trainer_factory(
    placement: Placement, train_procs: int = 1, *, sampler_is_own_forward: bool = True
) -> TrainerFactory:
    """The factory a server's training loop builds its trainer with: the server's placement, ranks and sampler."""

    def build(model_path: Path, config: TrainConfig) -> StepTrainer:
        return default_trainer(
            model_path, config, placement=placement, train_procs=train_procs,
            sampler_is_own_forward=sampler_is_own_forward,
        )  # fmt: skip

    return build
