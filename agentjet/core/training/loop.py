"""The training loop: turns ended train episodes into GRPO updates of the served policy.

The engine tells the loop when an episode ended (after its journal write); the loop pools
ended TRAIN episodes not yet trained, asks the collection strategy for a batch, and when one
is ready drives the engine ROLLING -> UPDATING (merge, advantages, `Trainer.step` in a worker
thread or, on a CPU, between decode steps (`step_runner.py`), save the adapter: calls are still
served, by the current weights) -> DRAINING (new calls wait at the engine's door, running ones
finish) -> hot-load -> ROLLING. Holding calls only for the
swap bounds an update's time under any load (the drain ends once the longest running call does)
and keeps every call on one policy version; calls sampled while the trainer steps are recorded
with the version that made them and trained in a later batch, their PPO ratio against the
recorded behaviour logprobs correcting for the one version they lag.
Event-loop owned: one asyncio task runs the updates and only it touches the pool and the
engine state; the worker thread only sees the trainer and plain values.

Durability (`checkpoints.py`): every `checkpoint_every` steps the loop writes a checkpoint
(adapter, optimiser, step, the journal seqs consumed). On start it restores the newest one and
rebuilds the pool from the journal (every ended train episode not consumed), so a kill -9 loses
no ended episode and trains none twice; metric lines of steps after the checkpoint are dropped
because those steps will be redone.

No poisoned weights: episodes whose reward the current `reward` range refuses (journaled by an
older version, or before a range change), groups whose advantages are not finite and batches
whose step the trainer refuses (`NonFiniteStep`) are quarantined in the journal with the reason,
never trained and never retried; a refused step is never hot-loaded. `TrainingHealth` says what
happened in `/swarm/status` (`training`).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from agentjet.core.config import TrainConfig
from agentjet.core.engine import Engine
from agentjet.core.errors import NonFiniteStep
from agentjet.core.step.step_stats import StepStats
from agentjet.core.step.step_trainer import StepTrainer, TrainerFactory, default_trainer
from agentjet.core.trackers.factory import check_installed
from agentjet.core.training import checkpoints
from agentjet.core.training.batches import TrainingBatch, build_samples
from agentjet.core.training.collect import Batch, PoolEpisode, build_strategy, pool_summary
from agentjet.core.training.health import TrainingHealth, TrainingState
from agentjet.core.training.lazy_trainer import LazyTrainer
from agentjet.core.training.metrics import EvalRewards, step_metrics
from agentjet.core.training.metrics_log import MetricsLog, last_metrics
from agentjet.core.training.pool import EpisodePool
from agentjet.core.training.quarantine import Quarantine
from agentjet.core.training.step_runner import run_step
from agentjet.core.types import EngineState, EpisodeKind, EpisodeRecord, EpisodeStatus

__all__ = ["TrainingLoop"]

log = logging.getLogger(__name__)


class TrainingLoop:
    """Owns the trainer, the pool of untrained episodes and the update cycle of one server."""

    def __init__(
        self,
        engine: Engine,
        *,
        model_path: Path,
        state_dir: Path,
        trainer_factory: TrainerFactory = default_trainer,
        drain_timeout_s: float = 30.0,
    ) -> None:
        self.engine = engine
        self.state_dir = state_dir
        self.drain_timeout_s = drain_timeout_s
        self.failed_updates = 0
        self.step = 0  # the newest step served whose metrics line is out: the engine reads it (`training/seam.py`)
        self.latest_metrics: dict[str, Any] | None = None  # the newest metrics line: GET /swarm/status
        self.trainer = LazyTrainer(trainer_factory, model_path)
        self._pool = EpisodePool()
        self.health = TrainingHealth()
        self._quarantine = Quarantine(engine.journal, self.health)  # seqs refused for training, for good
        self._wake = asyncio.Event()
        self._metrics_log = MetricsLog(state_dir)
        self._eval_rewards = EvalRewards()  # ended eval episodes: reported in the next step's line, never trained
        engine.attach_training(self)

    # ---- called by the engine (event loop) -----------------------------------------------
    def episode_ended(self, record: EpisodeRecord, seq: int) -> None:
        """Pool an ended train episode and wake the update task; eval episodes are never trained."""
        self._eval_rewards.observe(record, seq)
        if record.kind is not EpisodeKind.TRAIN or record.status is not EpisodeStatus.ENDED:
            return
        if self._pool.is_consumed(seq) or seq in self._quarantine:
            return
        self._pool.add(seq, record)
        self._wake.set()

    def clients_changed(self) -> None:
        """An update request (C4/C5) came, went, or its client left: it may complete a batch."""
        self._wake.set()

    def check_config(self, config: TrainConfig) -> None:
        """Guard of PUT /swarm/config: its trackers are installed here (`LazyTrainer.check_config`)."""
        check_installed(config.report_to)
        self.trainer.check_config(config)

    def config_changed(self) -> None:
        """The new config may form a batch the old one did not (a released `collect.hold`, a smaller batch)."""
        self._wake.set()

    def close(self) -> None:
        """Release the trainer's processes (a `DistributedTrainer`'s workers) and end the trackers' runs once
        serving has stopped."""
        self.trainer.close()
        self._metrics_log.close()

    def pool_stats(self) -> dict[str, Any]:
        """The pool for GET /swarm/status: per task group (oldest first) and the clients C4/C5 count."""
        return pool_summary(
            [(r.task_id, _reward(r)) for _, r in self._pool.oldest_first()],
            group_size=self.engine.train_config.grpo.group_size,
            trained_through_seq=self._pool.trained_through_seq,
            active=sorted(self.engine.clients.active()),
            requested=sorted(self.engine.clients.requests()),
        )

    def memory_reports(self) -> dict[str, Callable[[], dict[str, Any]]]:
        """The trainer's placement and peak memory for GET /swarm/status, once it is built."""
        return self.trainer.memory_reports()

    # ---- the update task -----------------------------------------------------------------
    async def run(self) -> None:
        """Forever: wait for an episode end, then train every batch the strategy forms.

        Never raises: it runs in the server's task group, where an escaping error would stop serving.
        A failed restore stops training (serving goes on): training from scratch could train twice.
        """
        try:
            await self.restore()
        except Exception as exc:
            log.exception("restore failed; training stays off until a restart")
            self.health.fail(f"restore failed: {exc}", time.time())
            return
        self.health.state = TrainingState.READY
        self._wake.set()  # the restored pool may already hold a batch
        while True:
            await self._wake.wait()
            self._wake.clear()
            try:
                await self._train_ready_batches()
            except Exception:
                log.exception("training loop error; waiting for the next episode end")

    # ---- restore ----------------------------------------------------------------------------
    @property
    def checkpoint_root(self) -> Path:
        return self.state_dir / "checkpoints"

    async def restore(self) -> None:
        """Once the backend is rolling: load the newest checkpoint and rebuild the pool from the journal.

        Runs DRAINING (new calls wait, running ones finish) so no call samples from the base
        weights once a restored adapter is on its way in.
        """
        await self.engine.states.wait_rolling()  # the backend may still be booting
        self.health.state = TrainingState.RESTORING
        self.engine.states.move(EngineState.DRAINING)
        try:
            await self._drain()
            await self._restore_state()
        finally:
            self.engine.states.resume()

    async def _restore_state(self) -> None:
        checkpoint = await asyncio.to_thread(checkpoints.latest_checkpoint, self.checkpoint_root)
        step = 0
        if checkpoint is not None:
            trainer = await self.trainer.get(self.engine.train_config)
            await asyncio.to_thread(checkpoints.restore_trainer, trainer, checkpoint)
            await self.engine.backend.load_adapter(checkpoint.adapter_dir, version=checkpoint.policy_version)
            self.step = step = checkpoint.step
            self._pool.restore(checkpoint.consumed)
        self.health.restored_step = step
        dropped = await asyncio.to_thread(checkpoints.truncate_metrics, self.state_dir / "metrics.jsonl", step)
        await self._quarantine.load()
        ended = await asyncio.to_thread(lambda: list(self.engine.journal.read_from(0, status=EpisodeStatus.ENDED)))
        for seq, record in ended:
            if record.kind is EpisodeKind.TRAIN and seq not in self._quarantine:
                self._pool.add(seq, record)
        log.info(
            "restored step=%d consumed=%d pooled=%d quarantined=%d metrics_dropped=%d",
            step,
            len(self._pool.consumed),
            len(self._pool),
            len(self._quarantine.seqs),
            dropped,
        )
        await self._reload_metrics()

    async def _train_ready_batches(self) -> None:
        while self.engine.state is EngineState.ROLLING:
            await self._quarantine_unusable_rewards()
            requests = self.engine.clients.requests()  # the update requests this batch answers
            batch = self.select()
            if batch is None:
                return
            rolling = await self._update(batch)
            if any(self._pool.is_consumed(e.seq) for e in batch.episodes):  # trained: one request, one update
                self.engine.clients.consume(requests)
            if not rolling:
                return  # a failed update waits for the next episode end before retrying

    def select(self) -> Batch | None:
        """The strategy's batch from the pool, oldest first (pure: the pool is not changed)."""
        config = self.engine.train_config
        if config.collect.hold:  # the policy is held still (e.g. while a run evaluates it): episodes wait
            return None
        strategy = build_strategy(config.collect, group_size=config.grpo.group_size)
        pool = [
            PoolEpisode(seq, r.episode_id, r.task_id, _reward(r), r.client_id) for seq, r in self._pool.oldest_first()
        ]
        active = self.engine.clients.active()  # first: it forgets the requests of clients gone idle
        return strategy.select(pool, active=active, requested=frozenset(self.engine.clients.requests()))

    async def _update(self, batch: Batch) -> bool:
        """One training step on `batch`; on failure we roll on (the batch stays pooled unless the step ran).

        True when the engine is rolling again and another batch may be ready: after a step, or
        after quarantining what could not be trained (the rest of the pool is looked at again).
        """
        started = time.perf_counter()
        records = [self._pool.records[e.seq] for e in batch.episodes]
        built = build_samples(records, self.engine.train_config)
        if await self._quarantine_nonfinite(batch, built):
            return True
        self.engine.states.move(EngineState.UPDATING)
        try:
            metrics = await self._train(batch, records, built, started)
        except NonFiniteStep as exc:
            self.health.error(f"step refused: {exc}", time.time(), refused=True)
            log.error("step refused, not applied and never hot-loaded: %s; batch quarantined", exc)
            await self._refuse([e.seq for e in batch.episodes], f"non-finite step ({exc})")
            return self.engine.states.resume()
        except Exception as exc:
            self.failed_updates += 1
            self.health.error(f"update failed: {exc!r}", time.time())
            kept = sum(1 for e in batch.episodes if e.seq in self._pool)
            log.exception("update failed episodes=%d still_pooled=%d", len(batch.episodes), kept)
            self.engine.states.resume()
            return False
        if metrics is not None:
            self.health.step_done(int(metrics["step"]), time.time())
        return self.engine.states.resume()

    async def _quarantine_unusable_rewards(self) -> None:
        """Pooled episodes whose reward the current range refuses (journaled before it applied)."""
        for reason, seqs in Quarantine.unusable_rewards(self._pool.records, self.engine.train_config.reward).items():
            await self._refuse(seqs, reason)

    async def _quarantine_nonfinite(self, batch: Batch, built: TrainingBatch) -> bool:
        """Quarantine the task groups of `batch` whose advantages are not finite; True if any were."""
        bad = Quarantine.nonfinite_groups((e.task_id for e in batch.episodes), built.episode_advantages)
        if bad:
            await self._refuse([e.seq for e in batch.episodes if e.task_id in bad], "advantages not finite")
        return bool(bad)

    async def _refuse(self, seqs: Sequence[int], reason: str) -> None:
        await self._quarantine.add(seqs, reason)
        self._pool.drop(seqs)

    async def _drain(self) -> None:
        """Wait until no call is in flight (new ones wait at the engine's door while draining), so no call
        sees the weights change under it. Past the timeout (a call longer than any sane `max_tokens`)
        the swap goes ahead: the stragglers' later tokens come from the new weights, their recorded
        logprobs stay exact, and the status counts them (`straddled_calls`)."""
        if not await self.engine.states.drain(self.drain_timeout_s):
            in_flight = self.engine.calls_in_flight()
            log.warning("drain timeout s=%.1f in_flight=%d; hot-loading anyway", self.drain_timeout_s, in_flight)

    async def _train(
        self, batch: Batch, records: list[EpisodeRecord], built: TrainingBatch, started: float
    ) -> dict[str, Any] | None:
        """Train on the batch, then drop it (and C3's skipped groups) from the pool the moment the step returns.

        From then on the optimiser holds the batch, so it is consumed whatever fails next: a
        failed save or hot-load that left it pooled would train it again at the retry. (A kill
        -9 is different: the in-memory step dies too, and the restore re-pools the batch.)
        """
        config = self.engine.train_config
        trainer = await self.trainer.get(config)
        if built.samples:
            stats = await run_step(trainer, self.engine.backend, built.samples, built.advantages)
        else:
            stats = None
            log.warning("batch has no calls episodes=%d; consumed without a step", len(records))
        self._pool.consume(e.seq for e in (*batch.episodes, *batch.skipped))
        try:
            metrics = await self._publish(trainer, stats, records, built, started) if stats else None
        except Exception:
            log.error("step=%d trained but not published; its batch is consumed, never retrained", trainer.steps)
            raise
        if metrics is not None:
            metrics["skipped_episodes"] = len(batch.skipped)
            metrics["trained_through_seq"] = self._pool.trained_through_seq
            metrics["episode_seqs"] = sorted(e.seq for e in batch.episodes)
            metrics["skipped_seqs"] = sorted(e.seq for e in batch.skipped)
            try:
                await asyncio.to_thread(self._metrics_log.append, metrics, config)
                self.latest_metrics = metrics
            finally:  # the served step moves with its metrics line, never before it (a poll then sees both)
                self.step = trainer.steps
            if trainer.steps % config.checkpoint_every == 0:
                await self._checkpoint(trainer, config)
        return metrics

    async def _checkpoint(self, trainer: StepTrainer, config: TrainConfig) -> None:
        """Write the checkpoint of the step just taken (its adapter is already in adapters/step-N).

        A failure is logged, not raised: the step itself succeeded and its batch is consumed;
        a restart then resumes from the previous checkpoint and redoes the steps after it.
        """
        step = trainer.steps
        try:
            await asyncio.to_thread(
                checkpoints.write_checkpoint,
                self.checkpoint_root,
                step=step,
                policy_version=step,
                adapter_dir=self.state_dir / "adapters" / f"step-{step}",
                trainer_state=trainer.state_dict(),
                consumed=self._pool.consumed,
                config=config,
            )
        except Exception:
            log.exception("checkpoint failed step=%d; the previous one stays the resume point", step)

    async def _publish(
        self,
        trainer: StepTrainer,
        stats: StepStats,
        records: Sequence[EpisodeRecord],
        built: TrainingBatch,
        started: float,
    ) -> dict[str, Any]:
        """Save and hot-load the new adapter, then the step's metrics (`_train` appends them and moves `step`).

        The eval episodes ended since the previous step are reported in this line, then forgotten.
        """
        step = trainer.steps
        path = self.state_dir / "adapters" / f"step-{step}"
        await asyncio.to_thread(trainer.save_adapter, path)
        if self.engine.state is EngineState.UPDATING:  # not when a stop came meanwhile: nothing is served
            self.engine.states.move(EngineState.DRAINING)
            await self._drain()
        await self.engine.backend.load_adapter(path, version=step)
        keep = self.engine.train_config.keep_adapters
        await asyncio.to_thread(checkpoints.prune_state_adapters, self.state_dir, keep=keep)
        values = step_metrics(
            stats,
            rewards=[_reward(r) for r in records],
            task_ids=[r.task_id for r in records],
            advantages=built.episode_advantages,
            drifts=built.drifts,
            calls=built.calls,
            samples=len(built.samples),
            eval_rewards=self._eval_rewards.take(),
        )
        metrics = {"step": step, "policy_version": step, **values}
        metrics["step_time_s"] = time.perf_counter() - started
        metrics["eval_through_seq"] = self._eval_rewards.through_seq
        metrics["time"] = time.time()
        log.info(
            "step done step=%d loss=%.4f reward=%.3f tokens=%d tokens_per_s=%.0f episodes=%d",
            step,
            stats.loss,
            values["reward_mean"],
            stats.tokens_trained,
            stats.tokens_trained / max(stats.step_time_s, 1e-9),
            len(records),
        )
        if built.drifts:
            reasons = {k: n for k, n in values.items() if k.startswith("drift_") and n}
            log.warning("calls left unmerged step=%d count=%d reasons=%s", step, len(built.drifts), reasons)
        return metrics

    async def _reload_metrics(self) -> None:
        """After a restore: status shows the last kept metrics line, and eval episodes it did not report wait."""
        last = await asyncio.to_thread(last_metrics, self._metrics_log.jsonl_path)
        self.latest_metrics = last
        self._eval_rewards.through_seq = int((last or {}).get("eval_through_seq", 0))
        after = await asyncio.to_thread(
            lambda: list(self.engine.journal.read_from(self._eval_rewards.through_seq, status=EpisodeStatus.ENDED))
        )
        for seq, record in after:
            self._eval_rewards.observe(record, seq)


def _reward(record: EpisodeRecord) -> float:
    return record.reward if record.reward is not None else 0.0
