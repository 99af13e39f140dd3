"""The training loop's trainer, built on the first update in a worker thread: loading a model never stalls serving.

While it is being built a PUT /swarm/config is refused (the new config could slip past it);
once built, the trainer takes a new config at its next step or refuses it (`reconfigure`).
Event-loop only; the trainer itself runs in worker threads.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agentjet.core.config import TrainConfig
from agentjet.core.errors import ConfigConflict
from agentjet.core.step.policy_model import check_lora_fits
from agentjet.core.step.step_trainer import StepTrainer, TrainerFactory

__all__ = ["LazyTrainer"]

log = logging.getLogger(__name__)


class LazyTrainer:
    """Owns the one trainer of a training loop, from its build to its `close`."""

    def __init__(self, factory: TrainerFactory, model_path: Path) -> None:
        self.model_path = model_path
        self._factory = factory
        self._trainer: StepTrainer | None = None
        self._building = False

    async def get(self, config: TrainConfig) -> StepTrainer:
        """The trainer, built from `config` the first time (in a thread)."""
        if self._trainer is None:
            log.info("building trainer model=%s", self.model_path)
            self._building = True  # a PUT meanwhile could slip past the trainer: refused instead
            try:
                self._trainer = await asyncio.to_thread(self._factory, self.model_path, config)
            finally:
                self._building = False
            report = getattr(self._trainer, "memory_report", None)
            if callable(report):  # the real trainer: its copy's placement and peak memory
                log.info("trainer built model=%s at %s", self.model_path, _placement_line(report()))
        return self._trainer

    def check_config(self, config: TrainConfig) -> None:
        """Guard of PUT /swarm/config: a built trainer takes the config at its next step or refuses it; an adapter
        the model cannot hold is refused before any build."""
        check_lora_fits(config.lora, self.model_path)
        if self._trainer is not None:
            self._trainer.reconfigure(config)
        elif self._building:
            raise ConfigConflict("the trainer is being built from the current config; retry in a few seconds")

    def memory_reports(self) -> dict[str, Callable[[], dict[str, Any]]]:
        """The trainer's placement and peak memory probe once it is built (the real trainer; fakes have none)."""
        report = getattr(self._trainer, "memory_report", None)
        return {"trainer": report} if callable(report) else {}

    def close(self) -> None:
        """Release the trainer's processes (a `DistributedTrainer`'s workers) once serving has stopped."""
        close = getattr(self._trainer, "close", None)
        if callable(close):
            close()


def _placement_line(report: dict[str, Any]) -> str:
    """`cuda:0 bfloat16, 14.2 GB of parameters`: the start-up log's words for one model copy."""
    return f"{report['device']} {report['dtype']}, {report['param_bytes'] / 1e9:.2f} GB of parameters"
