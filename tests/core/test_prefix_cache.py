"""Prefix KV reuse: a request extending a finished sequence computes exactly what it would from scratch."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import torch

from agentjet.core.backends.prefix_cache import PrefixCache
from agentjet.core.backends.transformers_backend import TransformersBackend
from agentjet.core.errors import ConfigError
from agentjet.core.types import Generation, GenerationRequest, SamplingParams

_LOOP_LOGGER = "agentjet.core.backends.decode_loop"


def _start(tiny_model: Path, name: str, prefix_cache_tokens: int) -> TransformersBackend:
    instance = TransformersBackend(tiny_model, name=name, max_batch_size=8, prefix_cache_tokens=prefix_cache_tokens)
    asyncio.run(instance.start())
    return instance


@pytest.fixture(scope="module")
def cached(tiny_model: Path) -> Iterator[TransformersBackend]:
    instance = _start(tiny_model, "cached", 4096)
    yield instance
    asyncio.run(instance.close())


@pytest.fixture(scope="module")
def plain(tiny_model: Path) -> Iterator[TransformersBackend]:
    instance = _start(tiny_model, "plain", 0)
    yield instance
    asyncio.run(instance.close())


def _ids(backend: TransformersBackend, text: str) -> tuple[int, ...]:
    return tuple(backend.tokenizer.encode(text, add_special_tokens=False))


def _greedy(rid: str, ids: tuple[int, ...], max_tokens: int = 24) -> GenerationRequest:
    return GenerationRequest(rid, ids, SamplingParams(max_tokens=max_tokens, temperature=0.0))


def _first_round(backend: TransformersBackend, k: int) -> tuple[int, ...]:
    return _ids(backend, f"System: you are assistant number {k}, be brief and kind. User: tell me about ships {k}.")


def _second_round(
    backend: TransformersBackend, first: GenerationRequest, answer: Generation, k: int
) -> tuple[int, ...]:
    """Like a chat template re-render: the answer's last token is replaced, then a new user turn follows."""
    return first.prompt_ids + answer.completion_ids[:-1] + _ids(backend, f" User: go on {k}.")


def _assert_same(a: Generation, b: Generation) -> None:
    assert a.completion_ids == b.completion_ids
    assert max(abs(x - y) for x, y in zip(a.logprobs, b.logprobs, strict=True)) < 1e-4


async def _two_rounds(backend: TransformersBackend, ks: list[int]) -> list[GenerationRequest]:
    """Run every first round (together), return the second-round requests built from the answers."""
    firsts = [_greedy(f"a{k}", _first_round(backend, k)) for k in ks]
    answers = await asyncio.gather(*(backend.generate(r) for r in firsts))
    return [_greedy(f"b{k}", _second_round(backend, r, a, k)) for k, r, a in zip(ks, firsts, answers, strict=True)]


def _hits(caplog: pytest.LogCaptureFixture) -> int:
    return sum(r.args[0] for r in caplog.records if r.msg.startswith("prefix hits"))  # type: ignore[index,misc]


@pytest.mark.asyncio
async def test_second_round_is_identical_with_the_prefix_cache(
    cached: TransformersBackend, plain: TransformersBackend, caplog: pytest.LogCaptureFixture
) -> None:
    (second,) = await _two_rounds(cached, [1])
    caplog.set_level(logging.DEBUG, logger=_LOOP_LOGGER)
    reused = await cached.generate(second)
    assert _hits(caplog) == 1
    _assert_same(reused, await plain.generate(second))


@pytest.mark.asyncio
async def test_several_joiners_at_once_into_a_busy_batch(
    cached: TransformersBackend, plain: TransformersBackend, caplog: pytest.LogCaptureFixture
) -> None:
    seconds = await _two_rounds(cached, [2, 3, 4])
    fresh = _greedy("fresh", _ids(cached, "An unrelated prompt with no cached prefix at all"))
    busy = _greedy("busy", _ids(cached, "Keep the batch busy"), max_tokens=200)
    caplog.set_level(logging.DEBUG, logger=_LOOP_LOGGER)
    stream = cached.stream(busy)
    await anext(stream)  # the batch is running when the joiners arrive
    together = await asyncio.gather(*(cached.generate(r) for r in [*seconds, fresh]))
    busy_rest = [d async for d in stream]
    assert _hits(caplog) == 3
    for request, generation in zip([*seconds, fresh], together, strict=True):
        _assert_same(generation, await plain.generate(request))
    assert busy_rest[-1].finish_reason == "length"


@pytest.mark.asyncio
async def test_an_exact_repeat_reuses_all_but_the_last_token(
    cached: TransformersBackend, plain: TransformersBackend
) -> None:
    first = _greedy("rep", _first_round(cached, 9), max_tokens=1)
    await cached.generate(first)  # a one-token answer finishes at prefill: nothing is stored
    await cached.generate(_greedy("rep2", first.prompt_ids, max_tokens=5))
    repeat = await cached.generate(first)
    _assert_same(repeat, await plain.generate(first))


def _kv(n: int, fill: float) -> list[tuple[torch.Tensor, torch.Tensor]]:
    return [(torch.full((1, 2, n, 4), fill), torch.full((1, 2, n, 4), -fill)) for _ in range(3)]


def test_cache_keeps_within_its_token_budget_and_evicts_least_recently_used() -> None:
    cache = PrefixCache(100, min_match=4)
    a, b, c = tuple(range(40)), tuple(range(100, 140)), tuple(range(200, 240))
    cache.store(a, _kv(40, 1.0))
    cache.store(b, _kv(40, 2.0))
    assert cache.lookup(a + (7,)) is not None  # a is now the most recently used
    cache.store(c, _kv(40, 3.0))
    assert cache.n_tokens == 80 <= cache.budget_tokens and len(cache) == 2
    assert cache.lookup(b + (7,)) is None  # b was evicted
    cache.store(tuple(range(500)), _kv(500, 4.0))  # larger than the whole budget: not kept
    assert cache.n_tokens == 80


def test_lookup_finds_the_longest_common_prefix_and_slices_it() -> None:
    cache = PrefixCache(1000, min_match=4)
    cache.store(tuple(range(10)), _kv(10, 1.0))
    cache.store(tuple(range(6)) + (99, 98), _kv(8, 2.0))
    hit = cache.lookup(tuple(range(8)) + (55,))
    assert hit is not None and hit[0] == 8 and float(hit[1][0][0][0, 0, 0, 0]) == 1.0
    assert hit[1][0][0].shape == (1, 2, 8, 4)
    assert cache.lookup(tuple(range(10)))[0] == 9  # type: ignore[index]  # one token is left to prefill
    assert cache.lookup((0, 1, 2, 50)) is None  # shorter than min_match
    cache.store(tuple(range(12)), _kv(12, 3.0))  # extends the first entry, which is dropped
    assert len(cache) == 2 and cache.n_tokens == 20


def test_negative_budget_is_a_config_error(tiny_model: Path) -> None:
    with pytest.raises(ConfigError, match="prefix_cache_tokens"):
        TransformersBackend(tiny_model, name="bad", prefix_cache_tokens=-1)


@pytest.mark.asyncio
async def test_loading_an_adapter_empties_the_cache(tiny_model: Path, tmp_path: Path) -> None:
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM

    base = AutoModelForCausalLM.from_pretrained(tiny_model)
    config = LoraConfig(r=4, lora_alpha=32, target_modules=["q_proj", "v_proj"], init_lora_weights=False)
    get_peft_model(base, config).save_pretrained(str(tmp_path / "lora"))
    backend = TransformersBackend(tiny_model, name="adapted", max_batch_size=2)
    await backend.start()
    try:
        await backend.generate(_greedy("x", _first_round(backend, 5)))
        loop: Any = backend._loop
        assert len(loop._prefix) == 1
        await backend.load_adapter(tmp_path / "lora", version=1)
        assert len(loop._prefix) == 0
    finally:
        await backend.close()
