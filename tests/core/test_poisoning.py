"""No client can poison the policy: bad rewards are refused or quarantined, non-finite steps are never applied.

Unit level on the engine and the training loop (fake trainer), and on the real trainer with the
tiny model: a step whose loss, gradients or updated weights are not finite raises NonFiniteStep
and leaves the weights as they were.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
import torch

from agentjet.core.config import RewardConfig, TrainConfig
from agentjet.core.engine import Engine
from agentjet.core.episodes.merging import Sample, merge_timelines
from agentjet.core.errors import NonFiniteStep, RewardRefused
from agentjet.core.step.step_stats import StepStats
from agentjet.core.step.trainer import Trainer
from agentjet.core.training.advantages import group_advantages, mean_std
from agentjet.core.training.health import TrainingState
from agentjet.core.training.loop import TrainingLoop
from agentjet.core.types import EpisodeKind, EpisodeRecord, EpisodeStatus
from tests.core.factories import call_record
from tests.core.test_training_loop import CONFIG, FakeTrainer, _episode

HUGE = [1e308, -1e308, 1.7976931348623157e308, -1.7976931348623157e308, 1e300, 5e-324]


@pytest.mark.parametrize("values", [HUGE[:2], HUGE[2:4], [HUGE[2], HUGE[2], 0.0], [1e308] * 4, [1e-300, 0.0]])
def test_statistics_stay_finite_for_any_finite_rewards(values: list[float]) -> None:
    mean, std = mean_std(values)
    assert math.isfinite(mean) and math.isfinite(std)
    advantages = group_advantages(values, ["g"] * len(values))
    assert all(math.isfinite(a) for a in advantages)
    if len(set(values)) > 1:
        assert max(advantages) > 0 > min(advantages)  # the order of the rewards survives the rescaling
    else:
        assert advantages == [0.0] * len(values)


def test_advantages_equal_the_naive_formula_where_it_does_not_overflow() -> None:
    rewards, groups = [0.0, 1.0, 3.0, 10.0, -2.0, 7.5], ["a", "a", "a", "b", "b", "b"]
    got = group_advantages(rewards, groups)
    for group in ("a", "b"):
        values = [r for r, g in zip(rewards, groups, strict=True) if g == group]
        mean = sum(values) / len(values)
        std = math.sqrt(sum((v - mean) ** 2 for v in values) / len(values))
        for reward, advantage in zip(rewards, got, strict=True):
            if groups[rewards.index(reward)] == group:
                assert advantage == pytest.approx((reward - mean) / (std + 1e-6), rel=1e-9)


@pytest.mark.parametrize("reward", [1e308, -1e308, 1.0000001e6, float("inf"), float("nan")])
async def test_end_refuses_a_reward_outside_the_range_and_keeps_the_episode_open(engine: Engine, reward: float) -> None:
    episode, _ = engine.begin_episode("t", kind=EpisodeKind.TRAIN, agent=None, client_id=None)
    with pytest.raises(RewardRefused, match="reward"):
        await engine.end_episode(episode.episode_id, reward, {})
    assert (await engine.get_episode(episode.episode_id))["status"] == "open"
    record = await engine.end_episode(episode.episode_id, 1e6, {})  # the bound itself is accepted
    assert record.status is EpisodeStatus.ENDED


class RefusingTrainer(FakeTrainer):
    def step(self, samples: Sequence[Sample], advantages: Sequence[float]) -> StepStats:
        if self.fail:
            raise NonFiniteStep("loss=nan grad_norm=nan: the step was not applied")
        return super().step(samples, advantages)


async def test_a_refused_step_quarantines_its_batch_never_hot_loads_and_training_goes_on(
    tmp_path: Path, make_engine: Any
) -> None:
    engine = await make_engine(train_config=CONFIG)
    trainer = RefusingTrainer(fail=True)
    loop = TrainingLoop(engine, model_path=tmp_path, state_dir=tmp_path / "state", trainer_factory=lambda p, c: trainer)
    await _episode(engine, "a", 1.0)
    await _episode(engine, "a", 0.0)
    await loop._train_ready_batches()
    assert engine.step == 0 and engine.backend.policy_version == 0  # nothing hot-loaded
    assert not (tmp_path / "state" / "adapters").exists()
    quarantined = engine.journal.quarantined()
    assert len(quarantined) == 2 and all(reason.startswith("non-finite step") for reason in quarantined.values())
    training = engine.status()["training"]
    assert training["refused_steps"] == 1 and training["quarantined_episodes"] == 2
    assert "not applied" in training["last_error"]
    trainer.fail = False
    await _episode(engine, "b", 1.0)
    await _episode(engine, "b", 0.0)
    await loop._train_ready_batches()
    assert engine.step == 1 and trainer.seen and len(trainer.seen) == 1  # only "b": "a" is never retried
    assert engine.status()["pool"]["pooled_episodes"] == 0


def _journal_episode(engine: Engine, task: str, reward: float) -> int:
    record = EpisodeRecord(
        episode_id=f"ep-{task}-{reward!r}-{engine.journal.counts()}",
        task_id=task,
        kind=EpisodeKind.TRAIN,
        agent=None,
        status=EpisodeStatus.ENDED,
        reward=reward,
        metadata={},
        created_at=0.0,
        closed_at=1.0,
        policy_version_at_begin=0,
        calls=(call_record(0, [1, 2, 3], [4, 5]),),
    )
    return engine.journal.append(record)


async def test_journaled_rewards_the_range_refuses_are_quarantined_at_restore(tmp_path: Path, make_engine: Any) -> None:
    """As an older server (no range) left them: the group is always the oldest, so once it blocked training."""
    engine = await make_engine(train_config=CONFIG)
    bad = [_journal_episode(engine, "old", 1e308), _journal_episode(engine, "old", -1e308)]
    good = [_journal_episode(engine, "new", 1.0), _journal_episode(engine, "new", 0.0)]
    trainer = FakeTrainer()
    loop = TrainingLoop(engine, model_path=tmp_path, state_dir=tmp_path / "state", trainer_factory=lambda p, c: trainer)
    await loop.restore()
    status = engine.status()  # huge pooled rewards: still a finite, serialisable status
    assert all(math.isfinite(g["reward_std"]) for g in status["pool"]["groups"])
    await loop._train_ready_batches()
    assert sorted(engine.journal.quarantined()) == bad
    assert set(engine.journal.quarantined().values()) == {"reward outside [-1e+06, 1e+06]"}
    assert engine.step == 1 and trainer.seen[0][0] == 2  # the good group trained
    line = engine.latest_metrics
    assert line is not None and sorted(line["episode_seqs"]) == good
    restarted = TrainingLoop(
        engine, model_path=tmp_path, state_dir=tmp_path / "state", trainer_factory=lambda p, c: FakeTrainer()
    )
    await restarted.restore()
    assert restarted.pool_stats()["pooled_episodes"] == 0  # quarantined seqs are never pooled again


async def test_a_widened_range_still_gives_finite_advantages(tmp_path: Path, make_engine: Any) -> None:
    config = CONFIG.model_copy(update={"reward": RewardConfig(min=-1.7976931348623157e308, max=1.7976931348623157e308)})
    engine = await make_engine(train_config=config)
    trainer = FakeTrainer()
    loop = TrainingLoop(engine, model_path=tmp_path, state_dir=tmp_path / "state", trainer_factory=lambda p, c: trainer)
    await _episode(engine, "a", 1.7e308)
    await _episode(engine, "a", -1.7e308)
    assert math.isfinite(engine.status()["pool"]["groups"][0]["reward_std"])
    await loop._train_ready_batches()
    assert engine.step == 1 and trainer.seen[0][1] == [pytest.approx(1.0, rel=1e-4), pytest.approx(-1.0, rel=1e-4)]


def test_reward_ranges_must_be_finite_and_ordered() -> None:
    with pytest.raises(ValueError, match="min < max"):
        TrainConfig.model_validate({"reward": {"min": 1, "max": 0}})
    with pytest.raises(ValueError, match="finite"):
        TrainConfig.model_validate({"reward": {"max": float("inf")}})


# ---- the real trainer ---------------------------------------------------------------------------
def _sample(logprob: float) -> Sample:
    calls = [call_record(0, [5, 6, 7, 8], [9, 10, 11])]
    calls = [c.__class__(**{**c.__dict__, "completion_logprobs": (logprob,) * 3}) for c in calls]
    merged, _ = merge_timelines(calls, match="token")
    return merged[0]


def _weights(trainer: Trainer) -> list[torch.Tensor]:
    return [p.detach().clone() for p in trainer.trainable_parameters()]


def test_a_step_with_a_non_finite_loss_is_refused_and_changes_nothing(tiny_model: Path) -> None:
    trainer = Trainer(tiny_model, TrainConfig(), device="cpu")
    before = _weights(trainer)
    poisoned = [_sample(-1e30), _sample(-1.0)]  # behaviour logprob -1e30: the PPO ratio overflows
    with pytest.raises(NonFiniteStep, match="not applied"):
        trainer.step(poisoned, [-1.0, 1.0])
    assert trainer.steps == 0
    assert all(torch.equal(a, b) for a, b in zip(before, _weights(trainer), strict=True))
    with pytest.raises(NonFiniteStep, match="advantages"):
        trainer.step([_sample(-1.0)], [float("nan")])
    stats = trainer.step([_sample(-1.0), _sample(-2.0)], [1.0, -1.0])  # the trainer is still usable
    assert trainer.steps == 1 and math.isfinite(stats.loss)


def test_an_update_that_makes_a_weight_non_finite_is_undone(tiny_model: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    trainer = Trainer(tiny_model, TrainConfig(), device="cpu")
    before = _weights(trainer)
    moments_before = trainer.optimizer.state_dict()["state"]
    real_step = trainer.optimizer.step

    def poisoning_step(*args: Any, **kwargs: Any) -> Any:
        result = real_step(*args, **kwargs)
        with torch.no_grad():
            trainer.trainable_parameters()[0].view(-1)[0] = float("inf")
        return result

    monkeypatch.setattr(trainer.optimizer, "step", poisoning_step)
    with pytest.raises(NonFiniteStep, match="restored"):
        trainer.step([_sample(-1.0), _sample(-2.0)], [1.0, -1.0])
    assert all(torch.equal(a, b) for a, b in zip(before, _weights(trainer), strict=True))
    assert trainer.optimizer.state_dict()["state"] == moments_before == {}  # the moments were rolled back too
    assert trainer.steps == 0


def test_training_state_names_are_what_status_shows() -> None:
    assert {str(s) for s in TrainingState} == {"starting", "restoring", "ready", "failed"}
