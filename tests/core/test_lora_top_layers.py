"""`lora.layers`: the adapter on the top N transformer layers only.

Why: an update's backward pass runs down to the lowest adapted layer, so an adapter on the top half of the
layers makes a CPU update about a third cheaper (docs/training-config.md). The trained adapter must serve as
trained, a checkpoint must not load into an adapter of another shape, and nothing below the adapter may
take part in the backward pass.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
import torch

from agentjet.core.backends.transformers_backend import TransformersBackend
from agentjet.core.config import LoraConfig, OptimConfig, TrainConfig
from agentjet.core.errors import ConfigError
from agentjet.core.step.policy_model import to_peft, top_layers
from agentjet.core.step.trainer import Trainer, sequence_logprobs
from agentjet.core.types import GenerationRequest, SamplingParams
from tests.core.test_trainer import _eight_samples, _step


def _trainer(model: Path, layers: int | float | None) -> Trainer:
    config = TrainConfig(lora=LoraConfig(layers=layers), optim=OptimConfig(lr=1e-2, micro_batch_tokens=4096))
    return Trainer(model, config, seed=0)


@pytest.mark.parametrize(
    ("count", "depth", "picked"),
    [(1, 2, [1]), (2, 2, [0, 1]), (15, 30, list(range(15, 30))), (1, 30, [29]), (3, 2, "at most 2"),
     (1, None, "depth"),
     # a share of the model's layers: the same recipe fits any depth, at least one layer
     (0.5, 30, list(range(15, 30))), (0.5, 2, [1]), (0.5, 24, list(range(12, 24))), (0.25, 30, list(range(22, 30))),
     (0.01, 30, [29]), (0.99, 2, [0, 1]), (0.5, None, "depth")],
)  # fmt: skip
def test_the_top_layers_are_the_last_indices_and_too_many_is_a_config_error(
    count: int | float, depth: int | None, picked: list[int] | str
) -> None:
    if isinstance(picked, str):
        with pytest.raises(ConfigError, match=picked):
            top_layers(count, depth)
    else:
        assert top_layers(count, depth) == picked
        assert to_peft(LoraConfig(layers=count), depth).layers_to_transform == picked
    assert to_peft(LoraConfig(), depth).layers_to_transform is None  # the default: every layer


@pytest.mark.parametrize(
    ("given", "message"),
    [(0, "greater than 0"), (-2, "greater than 0"), (0.0, "greater than 0"), (1.5, "a share below 1"),
     (30.2, "a share below 1"), ("half", "lora.layers")],
)  # fmt: skip
def test_lora_layers_is_a_positive_count_or_a_share_below_one(given: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        TrainConfig.model_validate({"lora": {"layers": given}})


@pytest.mark.parametrize(("given", "kept"), [(15, 15), (15.0, 15), (1.0, 1), (0.5, 0.5), (None, None)])
def test_a_whole_float_is_a_count_and_a_fraction_a_share(given: object, kept: object) -> None:
    layers = TrainConfig.model_validate({"lora": {"layers": given}}).lora.layers
    assert layers == kept and type(layers) is type(kept)


@pytest.mark.parametrize("layers", [1, 0.5])  # one layer of tiny's two, as a count and as a share
def test_an_adapter_on_the_top_layer_trains_only_there_and_nothing_below_joins_the_backward(
    tiny_model: Path, layers: int | float
) -> None:
    trainer = _trainer(tiny_model, layers=layers)
    adapted = {name for name, p in trainer.model.named_parameters() if p.requires_grad}
    assert adapted and all(".layers.1." in name for name in adapted), adapted  # tiny has 2 layers: 0 and 1
    below: list[bool] = []  # each training forward (with grad enabled): does the layer's output need a gradient?
    above: list[bool] = []
    layers: Any = trainer.model.get_base_model().model.layers
    hook = layers[0].register_forward_hook(lambda module, args, out: _note(below, out))
    hook_above = layers[1].register_forward_hook(lambda module, args, out: _note(above, out))
    before = {name: p.detach().clone() for name, p in trainer.model.named_parameters()}
    samples, advantages = _eight_samples()
    try:
        for _ in range(2):  # B starts at 0: A moves from the second step
            stats = _step(trainer, samples, advantages)
    finally:
        hook.remove()
        hook_above.remove()
    assert stats.grad_norm > 0 and below and not any(below) and all(above)  # layer 0 runs without autograd
    for name, param in trainer.model.named_parameters():
        assert (not torch.equal(param.detach(), before[name])) == (name in adapted), name


def _note(seen: list[bool], output: Any) -> None:
    if torch.is_grad_enabled():  # not the behaviour logprobs' no-grad forwards
        seen.append((output[0] if isinstance(output, tuple) else output).requires_grad)


def test_a_top_layer_adapter_serves_as_trained_and_loads_only_into_its_own_shape(
    tiny_model: Path, tmp_path: Path
) -> None:
    trainer = _trainer(tiny_model, layers=1)
    samples, advantages = _eight_samples()
    for _ in range(2):
        _step(trainer, samples, advantages)
    trainer.save_adapter(tmp_path / "adapter")
    prompt = list(samples[0].token_ids[:8])
    served = asyncio.run(_served_logprobs(tiny_model, tmp_path / "adapter", prompt))
    completion = prompt + list(served[0])
    ids = torch.tensor([completion])
    with torch.no_grad():
        want = sequence_logprobs(trainer.model, ids, torch.ones_like(ids))[0, len(prompt) - 1 :].tolist()
    assert served[1] == pytest.approx(want, abs=1e-4)  # the server samples the trained top-layer adapter

    same = _trainer(tiny_model, layers=1)
    same.load_adapter(tmp_path / "adapter")  # a resume with the same settings
    with torch.no_grad():
        assert sequence_logprobs(same.model, ids, torch.ones_like(ids))[0, len(prompt) - 1 :].tolist() == (
            pytest.approx(want, abs=1e-6)
        )
    with pytest.raises(ConfigError, match="lora.layers must stay as they were"):
        _trainer(tiny_model, layers=None).load_adapter(tmp_path / "adapter")  # every layer now: it would not fit


async def _served_logprobs(model: Path, adapter: Path, prompt: list[int]) -> tuple[list[int], list[float]]:
    backend = TransformersBackend(model, name="top", max_batch_size=4)
    await backend.start()
    try:
        await backend.load_adapter(adapter, version=2)
        request = GenerationRequest("r", tuple(prompt), SamplingParams(max_tokens=6, temperature=0))
        result = await backend.generate(request)
    finally:
        await backend.close()
    return list(result.completion_ids), list(result.logprobs)
