"""The training loop: turns ended train episodes into GRPO updates of the served policy.

The engine tells the loop when an episode ended (after its journal write); the loop pools
ended TRAIN episodes not yet trained, asks the collection strategy for a batch, and when one
is ready drives the engine ROLLING -> DRAINING (new episodes and calls are still served; we wait
for in-flight calls so they finish under the old policy) -> UPDATING (merge, advantages,
`Trainer.step` in a worker thread, save adapter, hot-load it into the backend) -> ROLLING.
Event-loop owned: one asyncio task runs the updates and only it touches the pool and the
engine state; the worker thread only sees the trainer and plain values.
"""

from __future__ import annotations

import asyncio
import json
import logging
import statistics
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol

from agentjet.core.advantages import group_advantages
from agentjet.core.collect import Batch, PoolEpisode, build_strategy
from agentjet.core.config import TrainConfig
from agentjet.core.engine import Engine
from agentjet.core.merging import Sample, merge_timelines
from agentjet.core.trainer import StepStats
from agentjet.core.types import EngineState, EpisodeKind, EpisodeRecord, EpisodeStatus

__all__ = ["StepTrainer", "TrainingLoop", "build_samples"]

log = logging.getLogger(__name__)

_DRAIN_POLL_S = 0.02


class StepTrainer(Protocol):
    """What the loop needs of a trainer (`trainer.Trainer`; a fake in unit tests)."""

    steps: int

    def step(self, samples: Sequence[Sample], advantages: Sequence[float]) -> StepStats: ...

    def save_adapter(self, path: Path) -> None: ...


TrainerFactory = Callable[[Path, TrainConfig], StepTrainer]


def _default_trainer(model_path: Path, config: TrainConfig) -> StepTrainer:
    """The real trainer, on the GPU when there is one (imported here: torch is slow to import)."""
    import torch

    from agentjet.core.trainer import Trainer

    return Trainer(model_path, config, device="cuda" if torch.cuda.is_available() else "cpu")


def build_samples(records: Sequence[EpisodeRecord], config: TrainConfig) -> tuple[list[Sample], list[float], int]:
    """Merged samples of the batch, each with its episode's GRPO advantage, and the call count.

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
    calls = 0
    for record, advantage in zip(records, advantages, strict=True):
        merged, _drifts = merge_timelines(record.calls, match=config.merge)
        samples.extend(merged)
        per_sample.extend([advantage] * len(merged))
        calls += len(record.calls)
    return samples, per_sample, calls


class TrainingLoop:
    """Owns the trainer, the pool of untrained episodes and the update cycle of one server."""

    def __init__(
        self,
        engine: Engine,
        *,
        model_path: Path,
        state_dir: Path,
        trainer_factory: TrainerFactory = _default_trainer,
        drain_timeout_s: float = 30.0,
    ) -> None:
        self.engine = engine
        self.model_path = model_path
        self.state_dir = state_dir
        self.drain_timeout_s = drain_timeout_s
        self.last_trained_seq = 0
        self.failed_updates = 0
        self._trainer_factory = trainer_factory
        self._trainer: StepTrainer | None = None
        self._pool: dict[int, EpisodeRecord] = {}  # journal seq -> ended train episode not yet trained
        self._wake = asyncio.Event()
        engine.on_episode_ended = self.episode_ended
        engine.pool_stats = self.pool_stats

    # ---- called by the engine (event loop) -----------------------------------------------
    def episode_ended(self, record: EpisodeRecord, seq: int) -> None:
        """Pool an ended train episode and wake the update task; eval episodes are never trained."""
        if record.kind is not EpisodeKind.TRAIN or record.status is not EpisodeStatus.ENDED:
            return
        self._pool[seq] = record
        self._wake.set()

    def pool_stats(self) -> dict[str, Any]:
        group_size = self.engine.train_config.grpo.group_size
        tasks: dict[str, int] = {}
        for record in self._pool.values():
            tasks[record.task_id] = tasks.get(record.task_id, 0) + 1
        return {
            "pooled_episodes": len(self._pool),
            "complete_groups": sum(1 for n in tasks.values() if n >= group_size),
            "trained_through_seq": self.last_trained_seq,
        }

    # ---- the update task -----------------------------------------------------------------
    async def run(self) -> None:
        """Forever: wait for an episode end, then train every batch the strategy forms.

        Never raises: it runs in the server's task group, where an escaping error would stop serving.
        """
        while True:
            await self._wake.wait()
            self._wake.clear()
            try:
                await self._train_ready_batches()
            except Exception:
                log.exception("training loop error; waiting for the next episode end")

    async def _train_ready_batches(self) -> None:
        while self.engine.state is EngineState.ROLLING:
            batch = self.select()
            if batch is None or not await self._update(batch):
                return  # a failed update waits for the next episode end before retrying

    def select(self) -> Batch | None:
        """The strategy's batch from the pool, oldest first (pure: the pool is not changed)."""
        config = self.engine.train_config
        strategy = build_strategy(config.collect, group_size=config.grpo.group_size)
        pool = [
            PoolEpisode(seq, r.episode_id, r.task_id, r.reward or 0.0, None) for seq, r in sorted(self._pool.items())
        ]
        return strategy.select(pool, active=frozenset(), requested=frozenset())

    async def _update(self, batch: Batch) -> bool:
        """One training step on `batch`; on failure the batch stays pooled and we roll on.

        True when the engine is rolling again after a successful step (look for another batch).
        """
        started = time.perf_counter()
        self.engine.move(EngineState.DRAINING)
        try:
            await self._drain()
            self.engine.move(EngineState.UPDATING)
            metrics = await self._train(batch, started)
        except Exception:
            self.failed_updates += 1
            log.exception("update failed episodes=%d; batch kept pooled", len(batch.episodes))
            self._resume()
            return False
        if metrics is not None:
            self.engine.latest_metrics = metrics
        return self._resume()

    def _resume(self) -> bool:
        """Back to rolling unless the engine was stopped meanwhile (then the loop idles)."""
        if self.engine.state in (EngineState.DRAINING, EngineState.UPDATING):
            self.engine.move(EngineState.ROLLING)
            return True
        return False

    async def _drain(self) -> None:
        """Wait until no call is in flight, so no sample straddles two policy versions of an update."""
        deadline = time.monotonic() + self.drain_timeout_s
        while self.engine.calls_in_flight() > 0:
            if time.monotonic() > deadline:
                in_flight = self.engine.calls_in_flight()
                log.warning("drain timeout s=%.1f in_flight=%d; updating anyway", self.drain_timeout_s, in_flight)
                return
            await asyncio.sleep(_DRAIN_POLL_S)

    async def _train(self, batch: Batch, started: float) -> dict[str, Any] | None:
        """Train on the batch, then drop it (and C3's skipped groups) from the pool: only now is it consumed."""
        config = self.engine.train_config
        records = [self._pool[e.seq] for e in batch.episodes]
        samples, advantages, calls = build_samples(records, config)
        trainer = await self._get_trainer(config)
        if samples:
            stats = await asyncio.to_thread(trainer.step, samples, advantages)
        else:
            stats = None
            log.warning("batch has no calls episodes=%d; consumed without a step", len(records))
        metrics = await self._publish(trainer, stats, records, calls, len(samples), started) if stats else None
        for episode in (*batch.episodes, *batch.skipped):
            self._pool.pop(episode.seq, None)
        self.last_trained_seq = max([self.last_trained_seq, *(e.seq for e in (*batch.episodes, *batch.skipped))])
        if metrics is not None:
            metrics["skipped_episodes"] = len(batch.skipped)
            metrics["trained_through_seq"] = self.last_trained_seq
            await asyncio.to_thread(self._append_metrics, metrics)
        return metrics

    async def _get_trainer(self, config: TrainConfig) -> StepTrainer:
        """Built on the first update, in a thread: loading the model must not stall serving."""
        if self._trainer is None:
            log.info("building trainer model=%s", self.model_path)
            self._trainer = await asyncio.to_thread(self._trainer_factory, self.model_path, config)
        return self._trainer

    async def _publish(
        self,
        trainer: StepTrainer,
        stats: StepStats,
        records: Sequence[EpisodeRecord],
        calls: int,
        samples: int,
        started: float,
    ) -> dict[str, Any]:
        """Save and hot-load the new adapter, then the step's metrics (the engine's step moves here)."""
        step = trainer.steps
        path = self.state_dir / "adapters" / f"step-{step}"
        await asyncio.to_thread(trainer.save_adapter, path)
        await self.engine.backend.load_adapter(path, version=step)
        self.engine.step = step
        rewards = [r.reward or 0.0 for r in records]
        metrics = {
            "step": step,
            "policy_version": step,
            "loss": stats.loss,
            "kl": stats.kl,
            "clip_fraction": stats.clip_fraction,
            "grad_norm": stats.grad_norm,
            "tokens_trained": stats.tokens_trained,
            "samples": samples,
            "calls": calls,
            "merge_ratio": calls / samples,
            "reward_mean": statistics.fmean(rewards),
            "reward_std": statistics.pstdev(rewards),
            "episodes": len(records),
            "train_time_s": stats.step_time_s,
            "step_time_s": time.perf_counter() - started,
            "time": time.time(),
        }
        log.info(
            "step done step=%d loss=%.4f tokens=%d episodes=%d", step, stats.loss, stats.tokens_trained, len(rewards)
        )
        return metrics

    def _append_metrics(self, metrics: dict[str, Any]) -> None:
        self.state_dir.mkdir(parents=True, exist_ok=True)
        with (self.state_dir / "metrics.jsonl").open("a") as f:
            f.write(json.dumps(metrics) + "\n")
