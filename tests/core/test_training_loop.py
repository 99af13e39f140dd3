"""The training loop: pooled ended episodes become GRPO updates of the served policy."""

from __future__ import annotations

import json
import time
from collections.abc import Awaitable, Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest
import yaml

from agentjet.core.config import CollectConfig, GrpoConfig, OptimConfig, ServerSettings, TrainConfig
from agentjet.core.engine import Engine
from agentjet.core.episodes.merging import Sample
from agentjet.core.placement import resolve_placement
from agentjet.core.server.app import create_app
from agentjet.core.step.step_stats import StepStats
from agentjet.core.testing import RunningServer, serve_in_thread
from agentjet.core.training.loop import TrainingLoop
from agentjet.core.types import EngineState, EpisodeKind
from tests.conftest import TOKEN, _wait_rolling
from tests.core.factories import call_record

HEADERS = {"Authorization": f"Bearer {TOKEN}"}
CONFIG = TrainConfig(
    collect=CollectConfig(strategy="tasks", tasks=1),
    grpo=GrpoConfig(group_size=2),
    optim=OptimConfig(lr=5e-2),
)


# ---- unit: pooling and selection with a fake trainer -----------------------------------------
class FakeTrainer:
    def __init__(self, fail: bool = False) -> None:
        self.steps = 0
        self.fail = fail
        self.fail_save = False  # the step succeeds, saving its adapter raises
        self.seen: list[tuple[int, list[float]]] = []

    def step(self, samples: Sequence[Sample], advantages: Sequence[float]) -> StepStats:
        if self.fail:
            raise RuntimeError("boom")
        self.steps += 1
        self.seen.append((len(samples), list(advantages)))
        tokens = sum(sum(s.loss_mask) for s in samples)
        return StepStats(0.5, 0.0, 0.0, 1.0, tokens, len(samples), 1, 0.01)

    def save_adapter(self, path: Path) -> None:
        if self.fail_save:
            raise OSError("no space left on device")
        path.mkdir(parents=True)
        (path / "adapter_config.json").write_text("{}")

    def load_adapter(self, path: Path) -> None:
        self.loaded = path

    def state_dict(self) -> dict[str, Any]:
        return {"step": self.steps, "optimizer": {}}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.steps = int(state["step"])


async def _episode(engine: Engine, task: str, reward: float, kind: EpisodeKind = EpisodeKind.TRAIN) -> None:
    episode, _ = engine.begin_episode(task, kind=kind, agent=None, client_id=None)
    engine.call_started(episode)
    engine.call_finished(episode, [call_record(0, [1, 2, 3], [4, 5])])
    await engine.end_episode(episode.episode_id, reward, {})


@pytest.fixture
async def fake_loop(
    tmp_path: Path, make_engine: Callable[..., Awaitable[Engine]]
) -> tuple[Engine, TrainingLoop, FakeTrainer]:
    engine = await make_engine(train_config=CONFIG)
    trainer = FakeTrainer()
    loop = TrainingLoop(engine, model_path=tmp_path, state_dir=tmp_path / "state", trainer_factory=lambda p, c: trainer)
    return engine, loop, trainer


async def test_batch_trained_rest_stays_pooled_and_eval_is_never_pooled(
    fake_loop: tuple[Engine, TrainingLoop, FakeTrainer],
) -> None:
    engine, loop, trainer = fake_loop
    await _episode(engine, "a", 1.0)
    await _episode(engine, "b", 0.0)
    await _episode(engine, "a", 0.0, EpisodeKind.EVAL)
    assert loop.select() is None and engine.status()["pool"]["pooled_episodes"] == 2
    await _episode(engine, "a", 0.0)
    await _episode(engine, "a", 0.5)  # a third "a": beyond the batch
    await loop._train_ready_batches()
    assert engine.step == 1 and engine.backend.policy_version == 1 and engine.state is EngineState.ROLLING
    assert trainer.seen == [(2, [pytest.approx(1.0, rel=1e-4), pytest.approx(-1.0, rel=1e-4)])]
    pool = engine.status()["pool"]
    assert pool["pooled_episodes"] == 2 and pool["complete_groups"] == 0  # "b" and the third "a"
    metrics = engine.status()["latest_metrics"]
    assert metrics["step"] == 1 and metrics["episodes"] == 2 and metrics["tokens_trained"] == 4
    assert metrics["merge_ratio"] == 1.0 and metrics["reward_mean"] == 0.5
    lines = (loop.state_dir / "metrics.jsonl").read_text().splitlines()
    assert [json.loads(line)["step"] for line in lines] == [1]


async def test_a_held_policy_trains_nothing_until_the_hold_is_released(
    fake_loop: tuple[Engine, TrainingLoop, FakeTrainer],
) -> None:
    engine, loop, trainer = fake_loop
    engine.set_train_config(CONFIG.model_copy(update={"collect": CollectConfig(strategy="tasks", tasks=1, hold=True)}))
    loop._wake.clear()
    await _episode(engine, "a", 1.0)
    await _episode(engine, "a", 0.0)  # a complete group: without the hold this is a batch
    await loop._train_ready_batches()
    assert loop.select() is None and engine.step == 0 and trainer.steps == 0
    assert engine.status()["pool"]["pooled_episodes"] == 2 and engine.status()["pool"]["complete_groups"] == 1
    loop._wake.clear()
    engine.set_train_config(CONFIG)  # released: the PUT itself wakes the update task
    assert loop._wake.is_set()
    await loop._train_ready_batches()
    assert engine.step == 1 and trainer.seen[0][0] == 2


async def test_failed_update_keeps_the_batch_pooled(fake_loop: tuple[Engine, TrainingLoop, FakeTrainer]) -> None:
    engine, loop, trainer = fake_loop
    trainer.fail = True
    await _episode(engine, "a", 1.0)
    await _episode(engine, "a", 0.0)
    await loop._train_ready_batches()
    assert engine.state is EngineState.ROLLING and engine.step == 0 and loop.failed_updates == 1
    assert engine.status()["pool"]["pooled_episodes"] == 2
    trainer.fail = False
    await loop._train_ready_batches()
    assert engine.step == 1 and engine.status()["pool"]["pooled_episodes"] == 0


async def test_update_failing_after_its_step_never_trains_the_batch_again(
    fake_loop: tuple[Engine, TrainingLoop, FakeTrainer],
) -> None:
    engine, loop, trainer = fake_loop
    trainer.fail_save = True  # the optimiser has stepped on "a" when publishing fails
    await _episode(engine, "a", 1.0)
    await _episode(engine, "a", 0.0)
    await loop._train_ready_batches()
    assert loop.failed_updates == 1 and trainer.steps == 1 and engine.step == 0
    assert engine.status()["pool"]["pooled_episodes"] == 0  # consumed: a retry would train it twice
    trainer.fail_save = False
    await _episode(engine, "b", 1.0)
    await _episode(engine, "b", 0.0)
    await loop._train_ready_batches()
    assert len(trainer.seen) == 2 and engine.step == 2  # "a" once, then "b"
    lines = (loop.state_dir / "metrics.jsonl").read_text().splitlines()
    assert [json.loads(line)["step"] for line in lines] == [2]  # step 1 was never published


async def test_the_status_step_moves_with_its_metrics_line_never_before_it(
    fake_loop: tuple[Engine, TrainingLoop, FakeTrainer],
) -> None:
    """A client that sees step N in /swarm/status then reads N's metrics (vibe's watch did not, once)."""
    engine, loop, trainer = fake_loop
    written = loop._metrics_log.append
    seen: list[tuple[int, int, Any]] = []

    def append(metrics: dict[str, Any], config: TrainConfig | None = None) -> None:
        seen.append((loop.step, engine.backend.policy_version, loop.latest_metrics))
        written(metrics, config)

    loop._metrics_log.append = append  # type: ignore[method-assign]
    await _episode(engine, "a", 1.0)
    await _episode(engine, "a", 0.0)
    await loop._train_ready_batches()
    assert seen == [(0, 1, None)]  # while the line is written: hot-loaded, but the status step not yet moved
    status = engine.status()
    assert status["step"] == 1 and status["latest_metrics"]["step"] == 1


async def test_a_metrics_line_that_fails_to_write_still_moves_the_served_step(
    fake_loop: tuple[Engine, TrainingLoop, FakeTrainer],
) -> None:
    engine, loop, trainer = fake_loop

    def append(metrics: dict[str, Any], config: TrainConfig | None = None) -> None:
        raise OSError("no space left on device")

    loop._metrics_log.append = append  # type: ignore[method-assign]
    await _episode(engine, "a", 1.0)
    await _episode(engine, "a", 0.0)
    await loop._train_ready_batches()
    assert loop.failed_updates == 1 and engine.backend.policy_version == 1
    assert engine.step == 1 and engine.status()["latest_metrics"] is None  # served, never published


# ---- end to end: a live server on the real tiny model trains ---------------------------------
@pytest.fixture
def training_server(tmp_path: Path, tiny_model: Path) -> Iterator[tuple[RunningServer, Path]]:
    from agentjet.core.backends.transformers_backend import TransformersBackend

    config_file = tmp_path / "train.yaml"
    config_file.write_text(yaml.safe_dump(CONFIG.model_dump(mode="json")))
    settings = ServerSettings(model="tiny", state_dir=tmp_path / "state", token=TOKEN, config=config_file)
    placement = resolve_placement(settings.device, settings.dtype)  # what the server gives its trainer: auto
    backend = TransformersBackend(tiny_model, name="tiny", max_batch_size=4, dtype=placement.torch_dtype)
    with serve_in_thread(create_app(settings, backend=backend, model_path=tiny_model)) as running:
        _wait_rolling(running.url)
        yield running, settings.state_dir


def _status(server: RunningServer) -> dict[str, Any]:
    body: dict[str, Any] = httpx.get(f"{server.url}/swarm/status", headers=HEADERS, timeout=10).json()
    return body


def _run_episode(server: RunningServer, task: str, reward: float, kind: str = "train") -> list[dict[str, Any]]:
    """One episode of two calls; returns its journaled call records."""
    begun = httpx.post(f"{server.url}/swarm/episodes", json={"task_id": task, "kind": kind}, headers=HEADERS).json()
    client = openai.OpenAI(base_url=begun["base_url"], api_key=begun["api_key"], max_retries=0, timeout=60)
    messages: list[Any] = [{"role": "user", "content": f"Task {task}: say something."}]
    reply = client.chat.completions.create(model="tiny", messages=messages, max_tokens=8, seed=int(reward * 10))
    messages += [
        {"role": "assistant", "content": reply.choices[0].message.content},
        {"role": "user", "content": "More."},
    ]
    client.chat.completions.create(model="tiny", messages=messages, max_tokens=8)
    end = httpx.post(f"{server.url}/swarm/episodes/{begun['episode_id']}/end", json={"reward": reward}, headers=HEADERS)
    assert end.status_code == 200, end.text
    record = httpx.get(f"{server.url}/swarm/episodes/{begun['episode_id']}", headers=HEADERS).json()
    calls: list[dict[str, Any]] = record["calls"]
    return calls


def _wait_step(server: RunningServer, step: int, timeout_s: float = 60.0) -> dict[str, Any]:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        status = _status(server)
        if status["step"] >= step and status["state"] == "rolling":
            return status
        time.sleep(0.05)
    raise TimeoutError(f"server never reached step {step}: {_status(server)}")


def test_live_server_trains_and_serves_new_policy(training_server: tuple[RunningServer, Path]) -> None:
    server, state_dir = training_server
    assert _status(server)["policy_version"] == 0
    for task in ("t1", "t2"):
        _run_episode(server, task, 1.0)
        _run_episode(server, task, 0.0)
        _run_episode(server, "eval", 1.0, kind="eval")
    status = _wait_step(server, 2)
    assert status["policy_version"] == 2
    _run_episode(server, "t3", 1.0)  # beyond any batch: carried in the pool
    calls = _run_episode(server, "t3-eval", 0.0, kind="eval")
    assert {c["policy_version"] for c in calls} == {2}  # the hot-loaded adapter made these tokens
    status = _status(server)
    # 8 ended, 4 trained, 3 eval (never pooled): only t3 is carried
    assert status["pool"]["pooled_episodes"] == 1 and status["pool"]["complete_groups"] == 0
    assert status["latest_metrics"]["step"] == 2 and status["episodes"]["finished"] == 8
    memory = status["memory"]  # each model copy: where it lives, in which dtype, its size and peak
    assert set(memory) == {"backend", "trainer"}
    auto = resolve_placement().dtype  # bf16 on a CPU with native bf16, else fp32
    for copy in memory.values():
        assert (copy["device"], copy["dtype"]) == ("cpu", auto)
        assert copy["param_bytes"] > 0 and copy["peak_bytes"] >= copy["param_bytes"]
    lines = [json.loads(line) for line in (state_dir / "metrics.jsonl").read_text().splitlines()]
    assert [m["step"] for m in lines] == [1, 2]
    assert all(m["tokens_trained"] > 0 and m["episodes"] == 2 and m["reward_std"] == 0.5 for m in lines)
    # the embedded sampler is the trainer's own forward only in float32; a bf16 base's cached decode is not
    assert all(m["tis"] is (auto == "bfloat16") for m in lines)
    assert (state_dir / "adapters" / "step-2" / "adapter_config.json").is_file()
