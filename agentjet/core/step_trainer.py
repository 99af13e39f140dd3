"""What the training loop needs of a trainer (`trainer.Trainer`; a fake in unit tests), and the real one's factory."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol

from agentjet.core.config import TrainConfig
from agentjet.core.merging import Sample
from agentjet.core.trainer import StepStats

__all__ = ["StepTrainer", "TrainerFactory", "default_trainer"]


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


def default_trainer(model_path: Path, config: TrainConfig) -> StepTrainer:
    """The real trainer, on the GPU when there is one (imported here: torch is slow to import)."""
    import torch

    from agentjet.core.trainer import Trainer

    return Trainer(model_path, config, device="cuda" if torch.cuda.is_available() else "cpu", loss=config.grpo.loss)
