"""Calls sampled at any temperature train on-policy: the trainer scores the distribution they came from.

The backend records log_softmax(logits / T) at each sampled token. A trainer that scored plain
logits would see a PPO ratio off by the temperature alone and clip tokens before any update
(at T = 0.5, 19% of these calls' tokens); these tests sample real calls from the tiny model and
check that the first step's ratio is exactly one.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from agentjet.core.backends.transformers_backend import TransformersBackend
from agentjet.core.config import GrpoConfig, OptimConfig, TrainConfig
from agentjet.core.episodes.merging import merge_timelines, sampling_temperature
from agentjet.core.step.packing import collate
from agentjet.core.step.trainer import Trainer
from agentjet.core.types import CallRecord, GenerationRequest, SamplingParams
from tests.core.factories import call_record

_PROMPTS = ("The wolves meet at night and", "Player 3 votes for", "Compute the sum of 4 and")


@pytest.fixture(scope="module")
def backend(tiny_model: Path) -> Iterator[TransformersBackend]:
    instance = TransformersBackend(tiny_model, name="tiny", max_batch_size=4)
    asyncio.run(instance.start())
    yield instance
    asyncio.run(instance.close())


def _sampled_calls(backend: TransformersBackend, temperature: float) -> list[CallRecord]:
    """One real call per prompt at `temperature`, recorded as the server records them."""
    calls = []
    for index, text in enumerate(_PROMPTS):
        prompt = tuple(backend.tokenizer.encode(text, add_special_tokens=False))
        params = SamplingParams(max_tokens=12, temperature=temperature, seed=index)
        generation = asyncio.run(backend.generate(GenerationRequest(f"r{index}", prompt, params)))
        record = call_record(index, list(prompt), list(generation.completion_ids))
        calls.append(replace(record, completion_logprobs=generation.logprobs, sampling={"temperature": temperature}))
    return calls


@pytest.mark.parametrize("temperature", [0.5, 1.0, 1.4, 0.0])
def test_the_first_step_on_freshly_sampled_calls_clips_nothing(
    backend: TransformersBackend, tiny_model: Path, temperature: float
) -> None:
    samples, _ = merge_timelines(_sampled_calls(backend, temperature), match="off")
    advantages = [1.0, -1.0, 0.5]
    trainer = Trainer(tiny_model, TrainConfig(grpo=GrpoConfig(kl_coef=0.1), optim=OptimConfig(lr=1e-3)), seed=0)
    stats = trainer.step(samples, advantages)  # LoRA B starts at 0: the policy is the sampling model
    assert stats.clip_fraction == 0.0
    assert stats.kl == pytest.approx(0.0, abs=1e-6)  # policy and reference scored at the same temperature
    per_sample_tokens = [sum(s.loss_mask[1:]) for s in samples]
    expected = -sum(a * n for a, n in zip(advantages, per_sample_tokens, strict=True)) / sum(per_sample_tokens)
    assert stats.loss == pytest.approx(expected, abs=1e-4)  # ratio 1: each token's loss is -advantage


def test_each_token_keeps_its_own_calls_temperature_through_merging_and_packing() -> None:
    first = replace(call_record(0, [5, 6, 7], [8, 9]), sampling={"temperature": 0.5})
    second = replace(call_record(1, [5, 6, 7, 8, 9, 10], [11, 12, 13]), sampling={"temperature": 1.5})
    (sample,), _ = merge_timelines([first, second], match="token")
    assert sample.temperatures == (1.0, 1.0, 1.0, 0.5, 0.5, 1.0, 1.5, 1.5, 1.5)
    batch = collate([sample], [1.0], [0], "cpu")
    assert batch.temperatures[0].tolist() == [1.0, 1.0, 0.5, 0.5, 1.0, 1.5, 1.5, 1.5]  # shifted like the targets


@pytest.mark.parametrize(
    ("sampling", "expected"),
    [({"temperature": 0.7}, 0.7), ({"temperature": 0}, 1.0), ({}, 1.0), ({"temperature": None}, 1.0)],
)
def test_greedy_and_unrecorded_temperatures_score_plain_logits(sampling: dict[str, object], expected: float) -> None:
    assert sampling_temperature(replace(call_record(0, [1, 2], [3]), sampling=sampling)) == expected
