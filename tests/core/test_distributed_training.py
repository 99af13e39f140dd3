"""Training across processes: 2 gloo ranks train exactly like 1; a rank killed mid-step fails that
step cleanly, its batch stays pooled and the next step (on a rebuilt group) trains it once; workers
never outlive their trainer or their parent.

One `DistributedTrainer` lives per process (torch.distributed has one default group), so the tests
share one through `_group()`, which builds a fresh one whenever the last one was closed.
"""

from __future__ import annotations

import asyncio
import copy
import json
import os
import random
import signal
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import psutil
import pytest
import torch
from torch import Tensor

from agentjet.core.config import CollectConfig, GrpoConfig, OptimConfig, TrainConfig
from agentjet.core.engine import Engine
from agentjet.core.episodes.merging import Sample
from agentjet.core.errors import ConfigError, TrainingRankFailed
from agentjet.core.placement import Placement
from agentjet.core.step import step_trainer
from agentjet.core.step.distributed_trainer import DistributedTrainer, check_world
from agentjet.core.step.rank_trainer import split_units
from agentjet.core.step.step_stats import StepStats
from agentjet.core.step.trainer import Trainer, WorkUnit, plan_work
from agentjet.core.training.loop import TrainingLoop
from agentjet.core.types import EngineState, EpisodeKind
from tests.core.factories import call_record

VOCAB = 49152  # the tiny model's
TIMEOUT_S = 20.0  # rank 0's collective timeout in these tests: a kill must be noticed long before it


def _config(*, share_prefix: bool) -> TrainConfig:
    return TrainConfig(
        grpo=GrpoConfig(kl_coef=0.1, group_size=2),
        optim=OptimConfig(lr=1e-2, micro_batch_tokens=64, share_prefix=share_prefix),
        collect=CollectConfig(strategy="tasks", tasks=1),
    )


_live: list[DistributedTrainer] = []


def _group(model: Path) -> DistributedTrainer:
    """The live 2-rank trainer, or a new one when there is none (or it was closed)."""
    if not _live or _live[0]._closed:
        _live[:] = [DistributedTrainer(model, _config(share_prefix=False), world_size=2, timeout_s=TIMEOUT_S)]
    return _live[0]


@pytest.fixture(scope="module", autouse=True)
def _close_group() -> Iterator[None]:
    yield
    for trainer in _live:
        trainer.close()


def _sample(rng: random.Random, prompt: Sequence[int], completion: int) -> Sample:
    ids = (*prompt, *(rng.randrange(1, VOCAB) for _ in range(completion)))
    mask = tuple(i >= len(prompt) for i in range(len(ids)))
    behaviour = tuple(-rng.uniform(9.0, 12.0) if m else 0.0 for m in mask)
    return Sample("ep", ids, mask, behaviour, tuple(0 if m else -1 for m in mask), ((0, 0),))


def _batch() -> tuple[list[Sample], list[float]]:
    """A GRPO group of 4 sharing a 40-token prompt (completions of 6..15) and 3 lone samples of 35..70 tokens."""
    rng = random.Random(3)
    prompt = [rng.randrange(1, VOCAB) for _ in range(40)]
    group = [_sample(rng, prompt, n) for n in (6, 9, 12, 15)]
    lone = [_sample(rng, [rng.randrange(1, VOCAB) for _ in range(n - 10)], 10) for n in (35, 50, 70)]
    return [*group, *lone], [1.0, -1.0, 0.5, -0.5, 2.0, -0.25, -1.5]


def _single_like(group: DistributedTrainer, model: Path, config: TrainConfig, tmp_path: Path) -> Trainer:
    """A 1-process trainer holding exactly the group's weights and optimiser state."""
    single = Trainer(model, config, seed=0)
    folder = tmp_path / f"adapter-{group.steps}-{config.optim.share_prefix}"
    group.save_adapter(folder)
    single.load_adapter(folder)
    single.load_state_dict(copy.deepcopy(group.state_dict()))  # its tensors, not shared ones
    return single


def _stepped(trainer: Trainer, run: Callable[[], StepStats]) -> tuple[StepStats, dict[str, Tensor]]:
    """Run a step, keeping the gradients the optimiser is about to apply (rank 0's, after the all-reduce)."""
    grads: dict[str, Tensor] = {}
    original = trainer.optimizer.step

    def spy(*args: Any, **kwargs: Any) -> Any:
        for name, param in trainer.model.named_parameters():
            if param.requires_grad:
                assert param.grad is not None, name
                grads[name] = param.grad.detach().clone()
        return original(*args, **kwargs)

    trainer.optimizer.step = spy  # type: ignore[method-assign]
    try:
        return run(), grads
    finally:
        del trainer.optimizer.step


def _assert_close(got: dict[str, Tensor], want: dict[str, Tensor], what: str, atol: float = 1e-12) -> None:
    """Max relative difference <= 1e-4 per tensor (relative to the tensor's largest entry), plus `atol`."""
    assert got.keys() == want.keys() and want
    for name, tensor in want.items():
        scale = tensor.abs().max().item()
        assert (got[name] - tensor).abs().max().item() <= 1e-4 * scale + atol, f"{what} {name}"


def _weights(trainer: Trainer) -> dict[str, Tensor]:
    return {n: p.detach().clone() for n, p in trainer.model.named_parameters() if p.requires_grad}


def _assert_same_step(
    group: DistributedTrainer, single: Trainer, samples: list[Sample], advantages: list[float]
) -> dict[str, Tensor]:
    """One step of each: same statistics, gradients and updated weights. Returns the gradients."""
    want, want_grads = _stepped(single, lambda: single.step(samples, advantages))
    got, got_grads = _stepped(group.local, lambda: group.step(samples, advantages))
    assert got.loss == pytest.approx(want.loss, rel=1e-4, abs=1e-7)
    assert got.kl == pytest.approx(want.kl, rel=1e-4, abs=1e-9)
    assert got.grad_norm == pytest.approx(want.grad_norm, rel=1e-4)
    assert got.clip_fraction == pytest.approx(want.clip_fraction, abs=1e-9)
    assert (got.tokens_trained, got.samples) == (want.tokens_trained, want.samples)
    assert (got.micro_batches, got.prefix_tokens_saved) == (want.micro_batches, want.prefix_tokens_saved)
    _assert_close(got_grads, want_grads, "gradient")
    # AdamW divides by sqrt(v) + 1e-8: where a gradient entry is ~1e-8 its float rounding moves that
    # weight by up to ~1e-3 lr (one process with other micro-batches moves it as much: 4.5e-6 at lr 1e-2)
    _assert_close(_weights(group.local), _weights(single), "weight", atol=5e-3 * single.config.optim.lr)
    return want_grads


def test_two_gloo_processes_train_exactly_like_one(tiny_model: Path, tmp_path: Path) -> None:
    group = _group(tiny_model)
    samples, advantages = _batch()
    moved: set[str] = set()
    for share in (False, True):  # the config change travels with the next step command to rank 1
        config = _config(share_prefix=share)
        group.reconfigure(config)
        units = plan_work(samples, config.optim)
        shares = split_units(units, 2)
        assert all(shares) and sorted(u.indices for s in shares for u in s) == sorted(u.indices for u in units)
        assert any(u.prefix > 30 and len(u.indices) == 4 for u in units) == share  # the group runs as one unit
        single = _single_like(group, tiny_model, config, tmp_path)
        for _ in range(2):  # the second step also proves rank 1 took the same AdamW step as rank 0
            grads = _assert_same_step(group, single, samples, advantages)
            moved |= {name for name, g in grads.items() if g.abs().max().item() > 0}
    assert moved == set(_weights(group.local))  # no comparison was vacuous: every LoRA weight had a gradient


def test_split_balances_tokens_and_keeps_each_share_in_plan_order() -> None:
    units = [WorkUnit((i,), 0, t) for i, t in enumerate([50, 10, 40, 30, 20, 60])]
    shares = split_units(units, 2)
    assert [sum(u.tokens for u in s) for s in shares] == [110, 100]
    assert all([u.indices for u in s] == sorted(u.indices for u in s) for s in shares)
    assert split_units(units[:1], 3)[1:] == [[], []]  # more ranks than units: the others idle (and still sync)


async def _episode(engine: Engine, task: str, reward: float) -> None:
    episode, _ = engine.begin_episode(task, kind=EpisodeKind.TRAIN, agent=None, client_id=None)
    engine.call_started(episode)
    engine.call_finished(episode, [call_record(0, [1, 2, 3, 4, 5, 6], [7, 8, 9, 10])])
    await engine.end_episode(episode.episode_id, reward, {})


async def _until(condition: Callable[[], bool], timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, "condition not reached"
        await asyncio.sleep(0.02)


async def test_a_rank_killed_mid_step_fails_it_and_the_next_step_trains_the_pooled_batch_once(
    tiny_model: Path, tmp_path: Path, make_engine: Callable[..., Awaitable[Engine]]
) -> None:
    config = _config(share_prefix=False)
    engine = await make_engine(train_config=config)
    group = _group(tiny_model)
    group.reconfigure(config)  # whatever an earlier test left
    state = tmp_path / "state"
    loop = TrainingLoop(engine, model_path=tiny_model, state_dir=state, trainer_factory=lambda p, c: group)
    base = group.steps
    await _episode(engine, "a", 1.0)
    await _episode(engine, "a", 0.0)
    await loop._train_ready_batches()
    assert group.steps == engine.step == base + 1
    victim = group.worker_pids[0]
    os.kill(victim, signal.SIGSTOP)  # rank 1 stalls, so the step below is surely under way when it dies
    await _episode(engine, "b", 1.0)
    await _episode(engine, "b", 0.0)
    update = asyncio.create_task(loop._train_ready_batches())
    await _until(lambda: engine.state is EngineState.UPDATING, 10.0)
    await asyncio.sleep(0.5)
    assert not update.done()  # rank 0 waits for rank 1 at the gradient all-reduce
    os.kill(victim, signal.SIGKILL)
    killed = time.monotonic()
    await asyncio.wait_for(update, TIMEOUT_S * 2)
    assert time.monotonic() - killed < TIMEOUT_S / 2  # noticed at once (sockets closed), not by the timeout
    assert loop.failed_updates == 1 and engine.state is EngineState.ROLLING
    assert "TrainingRankFailed" in (loop.health.last_error or "") and f"pid {victim}" in (loop.health.last_error or "")
    assert group.steps == engine.step == base + 1  # not applied
    assert engine.status()["pool"]["pooled_episodes"] == 2  # b stays pooled
    await loop._train_ready_batches()  # the group is rebuilt first, then b is trained
    assert group.steps == engine.step == base + 2 and group.worker_pids != [victim]
    assert engine.status()["pool"]["pooled_episodes"] == 0
    lines = [json.loads(line) for line in (state / "metrics.jsonl").read_text().splitlines()]
    assert [line["step"] for line in lines] == [base + 1, base + 2]
    first, second = (set(line["episode_seqs"]) for line in lines)
    assert len(first) == len(second) == 2 and not first & second  # a, then b: each trained once
    single = _single_like(group, tiny_model, config, tmp_path)  # the new rank 1 has rank 0's weights + moments:
    samples, advantages = _batch()
    for _ in range(2):
        _assert_same_step(group, single, samples, advantages)


def _gone(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


def _wait_gone(pids: Sequence[int], timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while not all(_gone(pid) for pid in pids):
        assert time.monotonic() < deadline, f"workers {pids} outlived their trainer"
        time.sleep(0.05)


_PARENT = """
import sys, time
from pathlib import Path
from agentjet.core.config import TrainConfig
from agentjet.core.step.distributed_trainer import DistributedTrainer
trainer = DistributedTrainer(Path(sys.argv[1]), TrainConfig(), world_size=2)
print(trainer.worker_pids[0], flush=True)
time.sleep(600)
"""


def test_workers_exit_when_the_trainer_closes_and_when_their_parent_dies(tiny_model: Path) -> None:
    group = _group(tiny_model)
    pids = group.worker_pids
    assert pids and not any(_gone(pid) for pid in pids)
    group.close()
    _wait_gone(pids, 15.0)
    parent = subprocess.Popen([sys.executable, "-c", _PARENT, str(tiny_model)], stdout=subprocess.PIPE)
    try:
        assert parent.stdout is not None
        worker = int(parent.stdout.readline())
        assert not _gone(worker)
        parent.kill()  # kill -9: no close(), no atexit
        parent.wait(10)
        _wait_gone([worker], 10.0)
    finally:
        parent.kill()
        parent.wait(10)


def test_a_rank_that_hangs_fails_the_step_after_the_timeout(tiny_model: Path) -> None:
    if _live and not _live[0]._closed:
        _live[0].close()
    group = DistributedTrainer(tiny_model, _config(share_prefix=False), world_size=2, timeout_s=3.0)
    _live[:] = [group]
    samples, advantages = _batch()
    os.kill(group.worker_pids[0], signal.SIGSTOP)  # alive, but never answers
    started = time.monotonic()
    with pytest.raises(TrainingRankFailed, match="the step was not applied"):
        group.step(samples, advantages)
    assert 2.5 < time.monotonic() - started < 15.0 and group.steps == 0


def test_the_server_factory_builds_a_distributed_trainer_for_several_procs(
    tiny_model: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    built: list[dict[str, Any]] = []

    def fake(model_path: Path, config: TrainConfig, **kwargs: Any) -> str:
        built.append({"model": model_path, **kwargs})
        return "distributed"

    monkeypatch.setattr("agentjet.core.step.distributed_trainer.DistributedTrainer", fake)
    factory = step_trainer.trainer_factory(Placement("cpu", "float32"), train_procs=3)
    assert factory(tiny_model, TrainConfig()) == "distributed"
    want = {"model": tiny_model, "world_size": 3, "device": "cpu", "dtype": "float32", "spawn": True}
    assert built == [{**want, "sampler_is_own_forward": True}]
    foreign = step_trainer.trainer_factory(Placement("cpu", "float32"), train_procs=3, sampler_is_own_forward=False)
    foreign(tiny_model, TrainConfig())  # a vLLM sampler: every rank turns grpo.tis auto on
    assert built[-1] == {**want, "sampler_is_own_forward": False}
    monkeypatch.setenv("RANK", "0")
    monkeypatch.setenv("WORLD_SIZE", "3")  # under torchrun rank 0 spawns nothing
    factory(tiny_model, TrainConfig())
    assert built[-1]["spawn"] is False
    assert isinstance(step_trainer.trainer_factory(Placement("cpu", "float32"))(tiny_model, TrainConfig()), Trainer)
    check_world("cpu", 8)  # CPU ranks share the cores
    if torch.cuda.device_count() < 2:
        with pytest.raises(ConfigError, match="needs 2 GPUs"):
            check_world("cuda:0", 2)
