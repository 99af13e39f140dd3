"""Config changes after the trainer was built: optim/loss apply at the next step, LoRA changes are a 409."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest
import torch

from agentjet.core import SwarmClient
from agentjet.core.config import CollectConfig, GrpoConfig, OptimConfig, ServerSettings, TrainConfig
from agentjet.core.engine import Engine
from agentjet.core.episodes.merging import Sample, merge_timelines
from agentjet.core.errors import ConfigConflict
from agentjet.core.server.app import create_app
from agentjet.core.step.trainer import Trainer
from agentjet.core.testing import RunningServer, serve_in_thread
from agentjet.core.training.loop import TrainingLoop
from tests.conftest import TOKEN, _wait_rolling
from tests.core.factories import call_record

HEADERS = {"Authorization": f"Bearer {TOKEN}"}
CONFIG = TrainConfig(
    collect=CollectConfig(strategy="tasks", tasks=1), grpo=GrpoConfig(group_size=2), optim=OptimConfig(lr=1e-3)
)


def _with(config: TrainConfig, **sections: dict[str, Any]) -> TrainConfig:
    """`config` with some fields of some sections replaced (validated like a PUT body)."""
    raw = config.model_dump()
    for section, values in sections.items():
        raw[section] = {**raw[section], **values}
    return TrainConfig.model_validate(raw)


def _samples() -> tuple[list[Sample], list[float]]:
    samples = [
        *merge_timelines([call_record(0, [11, 12, 13, 14], [15, 16, 17])], match="token")[0],
        *merge_timelines([call_record(0, [11, 12, 13, 14], [18, 19])], match="token")[0],
    ]
    return samples, [1.0, -1.0]


def _lrs(trainer: Trainer) -> set[float]:
    return {float(group["lr"]) for group in trainer.optimizer.param_groups}


# ---- the trainer ------------------------------------------------------------------------------
def test_optim_and_clip_changes_apply_at_the_next_step_not_before(tiny_model: Path) -> None:
    trainer = Trainer(tiny_model, CONFIG)
    trainer.step(*_samples())
    new = _with(CONFIG, optim={"lr": 3e-4, "weight_decay": 0.01, "grad_clip": 0.5}, grpo={"clip_eps": 0.1})
    trainer.reconfigure(new)
    assert _lrs(trainer) == {1e-3} and trainer.config == CONFIG  # a running step would finish under the old one
    trainer.step(*_samples())
    assert _lrs(trainer) == {3e-4}
    assert {float(g["weight_decay"]) for g in trainer.optimizer.param_groups} == {0.01}
    assert trainer.config == new and trainer.steps == 2


@pytest.mark.parametrize(
    "change, field",
    [({"rank": 8}, "lora.rank"), ({"target_modules": ["q_proj"]}, "lora.target_modules"), ({"alpha": 8}, "lora.alpha")],
)
def test_lora_changes_are_refused_naming_the_field(tiny_model: Path, change: dict[str, Any], field: str) -> None:
    trainer = Trainer(tiny_model, CONFIG)
    with pytest.raises(ConfigConflict, match=rf"{field} cannot change after the trainer was built"):
        trainer.reconfigure(_with(CONFIG, lora=change, optim={"lr": 5e-4}))
    trainer.step(*_samples())
    assert _lrs(trainer) == {1e-3}  # the refused config left nothing behind, not even its optim part


def test_turning_kl_on_under_full_fine_tune_is_refused_but_under_lora_applies(tiny_model: Path) -> None:
    full = _with(CONFIG, lora={"enabled": False})
    with pytest.raises(ConfigConflict, match="grpo.kl_coef"):
        Trainer(tiny_model, full).reconfigure(_with(full, grpo={"kl_coef": 0.1}))
    trainer = Trainer(tiny_model, CONFIG)
    trainer.reconfigure(_with(CONFIG, grpo={"kl_coef": 0.1}))
    trainer.step(*_samples())
    assert trainer.config.grpo.kl_coef == 0.1


def test_restored_optimizer_keeps_its_moments_but_takes_the_configured_lr(tiny_model: Path) -> None:
    first = Trainer(tiny_model, CONFIG)
    first.step(*_samples())
    state = first.state_dict()
    second = Trainer(tiny_model, _with(CONFIG, optim={"lr": 2e-4}))
    second.load_state_dict(state)
    assert _lrs(second) == {2e-4} and second.steps == 1
    moments = [s["exp_avg"] for s in second.optimizer.state.values()]
    assert moments and any(torch.count_nonzero(m) > 0 for m in moments)


def test_the_loss_comes_from_the_config(tiny_model: Path) -> None:
    from agentjet.core.step.trainer import LOSSES

    assert Trainer(tiny_model, CONFIG).loss_fn is LOSSES[CONFIG.grpo.loss]


# ---- the training loop's guard ----------------------------------------------------------------
async def test_a_put_while_the_trainer_is_being_built_is_a_conflict(
    tmp_path: Path, make_engine: Callable[..., Awaitable[Engine]]
) -> None:
    engine = await make_engine(train_config=CONFIG)
    started, release = threading.Event(), threading.Event()

    def slow_factory(path: Path, config: TrainConfig) -> Any:
        started.set()
        release.wait(timeout=10)
        return object()

    loop = TrainingLoop(engine, model_path=tmp_path, state_dir=tmp_path / "state", trainer_factory=slow_factory)
    engine.set_train_config(_with(CONFIG, lora={"rank": 8}))  # nothing built yet: any valid config goes
    building = asyncio.create_task(loop.trainer.get(engine.train_config))
    assert await asyncio.to_thread(started.wait, 10)
    with pytest.raises(ConfigConflict, match="being built"):
        engine.set_train_config(CONFIG)
    release.set()
    await building
    assert engine.train_config.lora.rank == 8


# ---- end to end: a live server on the tiny model ----------------------------------------------
@pytest.fixture
def training_server(tmp_path: Path, tiny_model: Path) -> Iterator[tuple[RunningServer, Path]]:
    from agentjet.core.backends.transformers_backend import TransformersBackend

    settings = ServerSettings(model="tiny", state_dir=tmp_path / "state", token=TOKEN)
    backend = TransformersBackend(tiny_model, name="tiny", max_batch_size=4)
    with serve_in_thread(create_app(settings, backend=backend, model_path=tiny_model)) as running:
        _wait_rolling(running.url)
        reply = httpx.put(f"{running.url}/swarm/config", json=CONFIG.model_dump(mode="json"), headers=HEADERS)
        assert reply.status_code == 200, reply.text
        yield running, settings.state_dir


def _episode(server: RunningServer, task: str, reward: float) -> None:
    begun = httpx.post(f"{server.url}/swarm/episodes", json={"task_id": task}, headers=HEADERS).json()
    llm = openai.OpenAI(base_url=begun["base_url"], api_key=begun["api_key"], max_retries=0, timeout=60)
    llm.chat.completions.create(model="tiny", messages=[{"role": "user", "content": task}], max_tokens=6)
    end = httpx.post(f"{server.url}/swarm/episodes/{begun['episode_id']}/end", json={"reward": reward}, headers=HEADERS)
    assert end.status_code == 200, end.text


def _train_one_step(server: RunningServer, step: int, timeout_s: float = 60.0) -> None:
    _episode(server, f"t{step}", 1.0)
    _episode(server, f"t{step}", 0.0)
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        status = httpx.get(f"{server.url}/swarm/status", headers=HEADERS).json()
        if status["step"] >= step and status["state"] == "rolling":
            return
        time.sleep(0.05)
    raise TimeoutError(f"never reached step {step}")


def test_a_put_of_an_adapter_deeper_than_the_model_is_refused_before_the_trainer_exists(
    training_server: tuple[RunningServer, Path],
) -> None:
    """Before the first update no trainer holds the lora settings, so `lora.layers` is checked against the model's
    depth at the PUT, not at the build minutes later."""
    server, _ = training_server
    deeper = _with(CONFIG, lora={"layers": 3})  # tiny has 2 layers
    reply = httpx.put(f"{server.url}/swarm/config", json=deeper.model_dump(mode="json"), headers=HEADERS)
    assert 400 <= reply.status_code < 500, reply.text
    assert "lora.layers is 3, but the model has 2 layers" in reply.json()["error"]["message"]
    current = httpx.get(f"{server.url}/swarm/config", headers=HEADERS).json()["config"]
    assert TrainConfig.model_validate(current) == CONFIG
    fits = _with(CONFIG, lora={"layers": 2})
    assert (
        httpx.put(f"{server.url}/swarm/config", json=fits.model_dump(mode="json"), headers=HEADERS).status_code == 200
    )


def test_live_server_refuses_lora_changes_with_409_and_applies_lr(training_server: tuple[RunningServer, Path]) -> None:
    server, state_dir = training_server
    _train_one_step(server, 1)  # the trainer now exists
    reshaped = _with(CONFIG, lora={"rank": 4})
    reply = httpx.put(f"{server.url}/swarm/config", json=reshaped.model_dump(mode="json"), headers=HEADERS)
    assert reply.status_code == 409
    error = reply.json()["error"]
    assert error["code"] == "config_conflict" and "lora.rank cannot change" in error["message"]
    with SwarmClient(server.url, token=TOKEN) as client, pytest.raises(ConfigConflict, match="lora.rank"):
        client.configure(reshaped)
    current = httpx.get(f"{server.url}/swarm/config", headers=HEADERS).json()["config"]
    assert TrainConfig.model_validate(current) == CONFIG

    faster = _with(CONFIG, optim={"lr": 4e-4})
    reply = httpx.put(f"{server.url}/swarm/config", json=faster.model_dump(mode="json"), headers=HEADERS)
    assert reply.status_code == 200, reply.text
    _train_one_step(server, 2)
    saved = torch.load(state_dir / "checkpoints" / "step-2" / "trainer.pt", weights_only=False)
    assert {group["lr"] for group in saved["optimizer"]["param_groups"]} == {4e-4}
    before = torch.load(state_dir / "checkpoints" / "step-1" / "trainer.pt", weights_only=False)
    assert {group["lr"] for group in before["optimizer"]["param_groups"]} == {1e-3}
