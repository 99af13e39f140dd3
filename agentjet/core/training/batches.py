"""A batch of ended episodes as the trainer takes it: merged samples, each with its episode's advantage (pure)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from agentjet.core.config import TrainConfig
from agentjet.core.episodes.merging import Drift, Sample, merge_timelines
from agentjet.core.training.advantages import group_advantages
from agentjet.core.types import EpisodeRecord

__all__ = ["TrainingBatch", "build_samples"]


@dataclass(frozen=True)
class TrainingBatch:
    """A batch ready for `Trainer.step`, with what its metrics need (advantages per episode, drifts)."""

    samples: list[Sample]
    advantages: list[float]  # one per sample: its episode's
    episode_advantages: list[float]  # one per episode, in batch order
    calls: int
    drifts: list[Drift]  # why calls stayed separate samples, over the whole batch


def build_samples(records: Sequence[EpisodeRecord], config: TrainConfig) -> TrainingBatch:
    """Merged samples of the batch, each with its episode's GRPO advantage, and merge statistics.

    Advantages are computed per task group over episode rewards, then every sample of an
    episode gets its episode's value: merging must not change how much an episode counts.
    """
    grpo = config.grpo
    advantages = group_advantages(
        [r.reward or 0.0 for r in records],
        [r.task_id for r in records],
        scale=grpo.scale_rewards,
        std_floor=grpo.std_floor,
    )
    samples: list[Sample] = []
    per_sample: list[float] = []
    drifts: list[Drift] = []
    for record, advantage in zip(records, advantages, strict=True):
        merged, episode_drifts = merge_timelines(record.calls, match=config.merge)
        samples.extend(merged)
        per_sample.extend([advantage] * len(merged))
        drifts.extend(episode_drifts)
    calls = sum(len(r.calls) for r in records)
    return TrainingBatch(samples, per_sample, advantages, calls, drifts)
