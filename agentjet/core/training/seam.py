"""What the engine needs of the training loop attached to it (`loop.TrainingLoop`; a fake in tests).

One owner per field: the loop alone writes what it publishes here (its step, metrics, health),
and the engine reads it; the engine alone decides when to call the loop (an episode ended, a
client's update request changed, a config is being replaced). Event-loop only.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from agentjet.core.config import TrainConfig
from agentjet.core.training.health import TrainingHealth
from agentjet.core.types import EpisodeRecord

__all__ = ["TrainingSeam"]


class TrainingSeam(Protocol):
    """The training side of one server, as its engine sees it."""

    @property
    def step(self) -> int:
        """The optimiser step whose weights are served and whose metrics line is out (0: the base weights).

        It moves after `latest_metrics`, so a poll that sees step N also sees N's metrics."""

    @property
    def latest_metrics(self) -> dict[str, Any] | None:
        """The newest step's metrics line (`metrics.jsonl`), or None before the first."""

    @property
    def health(self) -> TrainingHealth:
        """Whether this server still trains, and if not, why."""

    def episode_ended(self, record: EpisodeRecord, seq: int) -> None:
        """An episode was closed with a reward and journaled at `seq` (called after the write)."""

    def clients_changed(self) -> None:
        """A client asked for or withdrew from an update, or went idle: C4/C5 may have a batch now."""

    def check_config(self, config: TrainConfig) -> None:
        """Raise ConfigConflict to refuse a PUT /swarm/config the trainer cannot take."""

    def config_changed(self) -> None:
        """A PUT /swarm/config was accepted: a released hold or a smaller batch may make a batch now."""

    def pool_stats(self) -> dict[str, Any]:
        """The pool of untrained episodes for GET /swarm/status."""

    def memory_reports(self) -> dict[str, Callable[[], dict[str, Any]]]:
        """The training side's model copies by name ("trainer"), each with its placement probe."""
