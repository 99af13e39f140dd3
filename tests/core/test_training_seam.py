"""The engine's one seam to the training loop: it tells the loop what happened and reads what the loop publishes."""

from __future__ import annotations

import pytest

from agentjet.core.config import TrainConfig
from agentjet.core.engine import Engine
from agentjet.core.errors import ConfigConflict
from agentjet.core.types import EpisodeKind
from tests.core.factories import RecordingTraining


async def test_without_training_the_engine_serves_the_base_weights(engine: Engine) -> None:
    status = engine.status()
    assert engine.training is None and engine.step == 0 and engine.latest_metrics is None
    assert engine.training_health is None and status["training"] == {"state": "off"}
    assert status["step"] == 0 and status["latest_metrics"] is None


async def test_the_engine_reads_what_the_training_side_publishes(engine: Engine) -> None:
    training = RecordingTraining()
    engine.attach_training(training)
    training.step, training.latest_metrics = 3, {"step": 3, "loss": 0.5}
    training.health.step_done(3, 100.0)
    status = engine.status()
    assert engine.step == 3 and status["step"] == 3
    assert engine.latest_metrics == status["latest_metrics"] == {"step": 3, "loss": 0.5}
    assert engine.training_health is training.health and status["training"] == training.health.view()
    assert status["training"]["last_step"] == 3 and status["pool"]["pooled_episodes"] == 0


async def test_the_engine_tells_the_training_side_of_ends_client_changes_and_configs(engine: Engine) -> None:
    training = RecordingTraining()
    engine.attach_training(training)
    episode, _ = engine.begin_episode("t", kind=EpisodeKind.TRAIN, agent=None, client_id="alice")
    assert training.ended == []
    await engine.end_episode(episode.episode_id, 1.0, {})
    assert [(record.episode_id, record.reward) for record, _ in training.ended] == [(episode.episode_id, 1.0)]
    assert training.client_changes == 0
    engine.clients.request_update("alice", ready=True)
    assert training.client_changes == 1
    config = TrainConfig(checkpoint_every=7)
    engine.set_train_config(config)
    assert training.configs == [config] and engine.train_config is config


async def test_a_config_the_training_side_refuses_is_not_taken(engine: Engine) -> None:
    class Refusing(RecordingTraining):
        def check_config(self, config: TrainConfig) -> None:
            raise ConfigConflict("lora.rank cannot change after the trainer was built")

    before = engine.train_config
    engine.attach_training(Refusing())
    with pytest.raises(ConfigConflict, match="lora.rank"):
        engine.set_train_config(TrainConfig(checkpoint_every=7))
    assert engine.train_config is before
