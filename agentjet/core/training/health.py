"""Training health: whether this server is still training, and if not, why (for `/swarm/status`).

A server that serves but has stopped training must say so: the restore state, the last step
and when it ran, the last error, refused (non-finite) steps and the episodes quarantined with
their reasons. `failed` means training is off until a restart (a restore that could not run):
the engine then refuses train episodes with 503 `training_down` rather than pooling them for
nothing. Owned by the training loop; event-loop only. Time is an argument.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

__all__ = ["TrainingHealth", "TrainingState"]

_RECENT_REASONS = 10


class TrainingState(StrEnum):
    STARTING = "starting"  # waiting for the backend before the restore
    RESTORING = "restoring"  # loading the checkpoint and re-pooling the journal
    READY = "ready"  # training whenever a batch is ready
    FAILED = "failed"  # off until a restart: `last_error` says why


@dataclass
class TrainingHealth:
    state: TrainingState = TrainingState.STARTING
    last_step: int | None = None
    last_step_at: float | None = None
    last_error: str | None = None
    last_error_at: float | None = None
    failed_updates: int = 0
    refused_steps: int = 0  # non-finite loss, gradients or weights: never applied, never hot-loaded
    quarantined: int = 0
    restored_step: int | None = None
    _reasons: Counter[str] = field(default_factory=Counter)
    _recent: list[str] = field(default_factory=list)

    def step_done(self, step: int, now: float) -> None:
        self.last_step, self.last_step_at = step, now

    def error(self, message: str, now: float, *, refused: bool = False) -> None:
        self.last_error, self.last_error_at = message, now
        self.failed_updates += 1
        self.refused_steps += int(refused)

    def quarantine(self, count: int, reason: str) -> None:
        self.quarantined += count
        self._reasons[reason] += count
        self._recent = ([reason] + [r for r in self._recent if r != reason])[:_RECENT_REASONS]

    def fail(self, message: str, now: float) -> None:
        self.state = TrainingState.FAILED
        self.last_error, self.last_error_at = message, now

    @property
    def is_down(self) -> bool:
        return self.state is TrainingState.FAILED

    def view(self) -> dict[str, Any]:
        return {
            "state": str(self.state),
            "last_step": self.last_step,
            "last_step_at": self.last_step_at,
            "last_error": self.last_error,
            "last_error_at": self.last_error_at,
            "failed_updates": self.failed_updates,
            "refused_steps": self.refused_steps,
            "quarantined_episodes": self.quarantined,
            "quarantine_reasons": {r: self._reasons[r] for r in self._recent},
            "restored_step": self.restored_step,
        }
