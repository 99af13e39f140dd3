"""A training step on the decode loop's thread (one OpenMP team on a CPU): same update, serving goes on, clean stop."""

from __future__ import annotations

import asyncio
import random
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import torch

from agentjet.core.backends.fakes import ScriptedBackend
from agentjet.core.backends.transformers_backend import TransformersBackend
from agentjet.core.config import LoraConfig, OptimConfig, TrainConfig
from agentjet.core.episodes.merging import Sample
from agentjet.core.errors import BackendError, NonFiniteStep
from agentjet.core.step.stages import Stages, drive
from agentjet.core.step.trainer import Trainer
from agentjet.core.training.step_runner import run_step, shares_decode_thread
from agentjet.core.types import GenerationRequest, SamplingParams
from tests.core.factories import randomise_lora_b

VOCAB = 49152  # the tiny model's vocabulary


@pytest.fixture
def backend(fresh_backend: TransformersBackend) -> TransformersBackend:
    return fresh_backend


def _trainer(model: Path) -> Trainer:
    config = TrainConfig(lora=LoraConfig(enabled=True), optim=OptimConfig(lr=1e-2, micro_batch_tokens=64))
    trainer = Trainer(model, config, seed=0)
    randomise_lora_b(trainer.model)
    return trainer


def _samples(n: int = 6) -> tuple[list[Sample], list[float]]:
    rng = random.Random(2)
    samples = []
    for i in range(n):
        length = 33 + i  # a budget of 64 holds one: one micro-batch each
        ids = tuple(rng.randrange(1, VOCAB) for _ in range(length))
        mask = tuple(t >= length - 8 for t in range(length))
        behaviour = tuple(-rng.uniform(9.0, 12.0) if m else 0.0 for m in mask)
        samples.append(Sample("ep", ids, mask, behaviour, tuple(0 if m else -1 for m in mask), ((i, 0),)))
    return samples, [1.0, -1.0, 0.5, -0.5, 2.0, -2.0][:n]


def _lora(trainer: Trainer) -> dict[str, torch.Tensor]:
    return {name: p.detach().clone() for name, p in trainer.model.named_parameters() if "lora_" in name}


def _request(backend: TransformersBackend, rid: str, max_tokens: int) -> GenerationRequest:
    ids = tuple(backend.tokenizer.encode("Once upon a time", add_special_tokens=False))
    return GenerationRequest(rid, ids, SamplingParams(max_tokens=max_tokens, temperature=1.0, seed=3))


async def test_a_step_between_decode_steps_is_the_step_on_its_own_thread(
    backend: TransformersBackend, tiny_model: Path
) -> None:
    samples, advantages = _samples()
    here, there = _trainer(tiny_model), _trainer(tiny_model)
    alone = await asyncio.to_thread(here.step, samples, advantages)
    assert shares_decode_thread(there, backend)
    between = await run_step(there, backend, samples, advantages)
    assert between.micro_batches == alone.micro_batches == 6
    assert between.loss == pytest.approx(alone.loss, rel=1e-5) and between.grad_norm == pytest.approx(alone.grad_norm)
    moved = _lora(there)
    for name, weight in _lora(here).items():
        assert torch.allclose(moved[name], weight, atol=1e-6), name
    assert there.steps == 1


async def test_stages_run_on_the_decode_thread_with_autograd_on(backend: TransformersBackend) -> None:
    seen: list[tuple[str, bool, bool]] = []

    def stages() -> Stages[int]:
        for _ in range(3):
            seen.append((threading.current_thread().name, torch.is_grad_enabled(), torch.is_inference_mode_enabled()))
            yield
        return 7

    assert await backend.run_between_steps(stages()) == 7
    assert seen == [("agentjet-decode", True, False)] * 3


async def test_serving_goes_on_between_the_stages(backend: TransformersBackend) -> None:
    """A call sent after a long job started ends before the job does: a decode step runs between two stages."""
    started = threading.Event()
    stages_run = 0

    def slow_job() -> Stages[None]:
        nonlocal stages_run
        started.set()
        for _ in range(400):  # 400 x 5 ms: far longer than 6 decode steps of the tiny model
            time.sleep(0.005)
            stages_run += 1
            yield

    job = asyncio.ensure_future(backend.run_between_steps(slow_job()))
    await asyncio.to_thread(started.wait, 10)
    reply = await backend.generate(_request(backend, "during", max_tokens=6))
    assert not job.done() and stages_run < 400
    assert len(reply.completion_ids) >= 1
    await job
    assert stages_run == 400


async def test_a_stage_error_reaches_the_caller_as_raised_and_the_loop_serves_on(backend: TransformersBackend) -> None:
    def refused() -> Stages[None]:
        yield
        raise NonFiniteStep("loss=nan")

    with pytest.raises(NonFiniteStep, match="loss=nan"):
        await backend.run_between_steps(refused())
    reply = await backend.generate(_request(backend, "after", max_tokens=3))
    assert len(reply.completion_ids) >= 1


async def test_closing_the_backend_ends_a_job_at_its_next_pause(tiny_model: Path) -> None:
    instance = TransformersBackend(tiny_model, name="closing", max_batch_size=2)
    await instance.start()
    cleaned = threading.Event()
    started = threading.Event()

    def endless() -> Stages[None]:
        try:
            while True:
                started.set()
                time.sleep(0.002)
                yield
        finally:
            cleaned.set()

    job = asyncio.ensure_future(instance.run_between_steps(endless()))
    await asyncio.to_thread(started.wait, 10)
    await instance.close()
    with pytest.raises(BackendError, match="closed"):
        await job
    assert cleaned.is_set()
    with pytest.raises(BackendError, match="closed"):
        await instance.run_between_steps(endless())


def test_drive_runs_every_stage_and_returns_the_result() -> None:
    order: list[int] = []

    def stages() -> Stages[str]:
        for i in range(4):
            order.append(i)
            yield
        return "done"

    assert drive(stages()) == "done" and order == [0, 1, 2, 3]


def _fake(device: str | None, *, stages: bool = True) -> Any:
    fake = SimpleNamespace(step=lambda *a: None)
    if device is not None:
        fake.device = torch.device(device)
    if stages:
        fake.step_stages = lambda *a: iter(())
    return fake


@pytest.fixture(scope="module")
def cpu_backend() -> Iterator[Any]:
    yield SimpleNamespace(device=torch.device("cpu"), run_between_steps=lambda stages: stages)


@pytest.mark.parametrize(
    ("trainer", "backend_device", "expected"),
    [
        (_fake("cpu"), "cpu", True),
        (_fake("cuda:0"), "cpu", False),  # a GPU trainer beside a CPU sampler: no OpenMP team to share
        (_fake("cpu"), "cuda:0", False),  # a GPU backend's loop mostly waits on the GPU
        (_fake(None), "cpu", False),  # a fake trainer: no device
        (_fake("cpu", stages=False), "cpu", False),  # the data-parallel trainer: no stages
    ],
)
def test_which_steps_share_the_decode_thread(trainer: Any, backend_device: str, expected: bool) -> None:
    backend = SimpleNamespace(device=torch.device(backend_device), run_between_steps=lambda stages: stages)
    assert shares_decode_thread(trainer, backend) is expected


def test_a_backend_without_a_decode_loop_keeps_the_worker_thread(tiny_tokenizer: Any, cpu_backend: Any) -> None:
    assert shares_decode_thread(_fake("cpu"), cpu_backend)
    assert not shares_decode_thread(_fake("cpu"), ScriptedBackend(tiny_tokenizer, []))  # no run_between_steps


async def test_a_step_cut_short_by_a_close_changes_no_weight_and_the_next_step_runs(tiny_model: Path) -> None:
    """A server stopped mid-update: the step ends at its next pause, before the optimiser step, and loses nothing."""
    instance = TransformersBackend(tiny_model, name="stopping", max_batch_size=2)
    await instance.start()
    trainer, reference = _trainer(tiny_model), _trainer(tiny_model)
    before = _lora(trainer)
    samples, advantages = _samples()
    stages_run = threading.Event()
    stages = trainer.step_stages(samples, advantages)

    job = asyncio.ensure_future(instance.run_between_steps(_first_pause_signalled(stages, stages_run)))
    await asyncio.to_thread(stages_run.wait, 30)
    await instance.close()
    with pytest.raises(BackendError, match="closed"):
        await job
    assert trainer.steps == 0
    for name, weight in _lora(trainer).items():
        assert torch.equal(weight, before[name]), name
    stats = trainer.step(samples, advantages)  # the gradients the cut step left are zeroed first
    expected = reference.step(samples, advantages)
    assert stats.grad_norm == pytest.approx(expected.grad_norm) and trainer.steps == 1


def _first_pause_signalled(stages: Stages[Any], paused: threading.Event) -> Stages[Any]:
    """`stages` held at its first pause (a micro-batch has run, its gradients are accumulated) until closed."""
    try:
        next(stages)
        paused.set()
        while True:  # the decode loop turns meanwhile; only `close()` ends this
            time.sleep(0.001)
            yield
    finally:
        stages.close()
