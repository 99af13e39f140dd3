"""A gathered prefill split by suffix length: the least padded tokens plus a forward's cost, and the same tokens.

Why: a batch is left-padded to its longest suffix, and on a CPU a padding token costs what a real one does
(werewolves' first round in fp32: 21% of the prefilled tokens were padding). Splitting must pick the best
groups, and every row must still sample exactly what it samples alone: a prefix-cache hit, a base row
beside an adapter row, and rows joined back in their own order for the decode steps that follow.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from agentjet.core.backends import prefix_cache
from agentjet.core.backends.prefill_gather import PrefillGather
from agentjet.core.backends.transformers_backend import TransformersBackend
from agentjet.core.types import Generation, GenerationRequest, SamplingParams
from tests.core.test_transformers_backend import _save_random_lora


def _cost(lengths: Sequence[int], groups: list[list[int]], split_tokens: int) -> int:
    return sum(max(lengths[i] for i in group) * len(group) + split_tokens for group in groups)


def _partitions(rows: list[int]) -> list[list[list[int]]]:
    """Every way to split `rows` into groups (Bell(n) of them)."""
    if not rows:
        return [[]]
    first, rest = rows[0], rows[1:]
    out = []
    for partition in _partitions(rest):
        out.append([[first], *partition])
        out.extend([*partition[:k], [first, *group], *partition[k + 1 :]] for k, group in enumerate(partition))
    return out


def _best_cost(lengths: Sequence[int], split_tokens: int) -> int:
    return min(_cost(lengths, groups, split_tokens) for groups in _partitions(list(range(len(lengths)))))


@pytest.mark.parametrize(
    ("lengths", "split_tokens", "expected"),
    [
        ([], 128, []),
        ([300], 128, [[0]]),
        ([170, 170, 170, 170], 128, [[0, 1, 2, 3]]),  # alike: one forward
        ([320, 170, 170, 170], 128, [[0], [1, 2, 3]]),  # a miss beside hits: 450 padded tokens saved
        ([170, 320, 171, 170], 128, [[1], [2, 0, 3]]),  # the rows keep their indices, longest first
        ([200, 180, 190], 128, [[0, 2, 1]]),  # 40 padded tokens are not worth a forward
        ([320, 170, 170, 170], 0, [[0, 1, 2, 3]]),  # 0 never splits
        ([900, 30, 30, 500, 480], 64, [[0], [3, 4], [1, 2]]),
    ],
)
def test_groups_table(lengths: list[int], split_tokens: int, expected: list[list[int]]) -> None:
    assert PrefillGather(split_tokens=split_tokens).groups(lengths) == expected


def test_immediate_never_splits() -> None:
    assert PrefillGather.immediate().groups([4000, 10, 10]) == [[0, 1, 2]]


def test_the_split_is_the_cheapest_of_all_partitions() -> None:
    rng = random.Random(7)
    for _ in range(150):
        lengths = [rng.choice([rng.randint(1, 40), rng.randint(100, 400)]) for _ in range(rng.randint(1, 7))]
        split_tokens = rng.choice([1, 64, 128, 500])
        groups = PrefillGather(split_tokens=split_tokens).groups(lengths)
        assert sorted(i for group in groups for i in group) == list(range(len(lengths)))  # each row once
        assert _cost(lengths, groups, split_tokens) == _best_cost(lengths, split_tokens), (lengths, split_tokens)


def _ids(backend: TransformersBackend, text: str) -> tuple[int, ...]:
    return tuple(backend.tokenizer.encode(text, add_special_tokens=False))


def _request(rid: str, ids: tuple[int, ...], *, base: bool = False, temperature: float = 0.0) -> GenerationRequest:
    return GenerationRequest(rid, ids, SamplingParams(max_tokens=12, temperature=temperature, seed=5), base=base)


_LONG = "Werewolves, 9 players: 3 werewolves, 3 villagers, a seer, a witch, a hunter. " * 6
_SHORT = ("Night 1.", "Vote a player out.", "Day 2. Alive: 1, 2, 3")


async def _gathered(backend: TransformersBackend, requests: list[GenerationRequest]) -> list[Generation]:
    """All `requests` admitted in one prefill (the loop waits until every one is in)."""
    return list(await asyncio.gather(*(backend.generate(r) for r in requests)))


@pytest.mark.asyncio
@pytest.mark.parametrize("temperature", [0.0, 1.0])
async def test_split_rows_sample_what_each_samples_alone(
    tiny_model: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, temperature: float
) -> None:
    forwards: list[int] = []
    real_prefill = prefix_cache.prefill

    def counted(model: Any, prompts: Sequence[Sequence[int]], *args: Any, **kwargs: Any) -> Any:
        forwards.append(len(prompts))
        return real_prefill(model, prompts, *args, **kwargs)

    monkeypatch.setattr(prefix_cache, "prefill", counted)
    alone_backend = TransformersBackend(tiny_model, name="alone", max_batch_size=8, prefix_cache_tokens=0)
    gather = PrefillGather(rows=1, steps=10**9, busy=0, split_tokens=8)
    backend = TransformersBackend(tiny_model, name="split", max_batch_size=8, prefill_gather=gather)
    await alone_backend.start()
    await backend.start()
    try:
        adapter = _save_random_lora(tiny_model, tmp_path / "a1", seed=1)
        await alone_backend.load_adapter(adapter, version=1)
        await backend.load_adapter(adapter, version=1)
        first = _request("first", _ids(backend, _LONG))
        answer = await backend.generate(first)  # alone (rows=1 for now): its KV goes to the prefix cache
        second = first.prompt_ids + answer.completion_ids[:-1] + _ids(backend, " Night 2.")  # a cache hit
        requests = [
            _request("long", _ids(backend, _LONG + " Night 1."), temperature=temperature),
            *(_request(f"s{i}", _ids(backend, text), temperature=temperature) for i, text in enumerate(_SHORT)),
            _request("base-long", _ids(backend, _LONG + " Day 1."), base=True, temperature=temperature),
            _request("base-short", _ids(backend, "Vote, or pass."), base=True, temperature=temperature),
            _request("hit", second, temperature=temperature),
        ]
        alone = [await alone_backend.generate(r) for r in requests]
        forwards.clear()
        gather.rows = len(requests)  # from here the loop waits for all of them, then prefills them together
        together = await _gathered(backend, requests)
    finally:
        await backend.close()
        await alone_backend.close()
    assert len(forwards) >= 3 and sum(forwards) == len(requests)  # one admission, split into several forwards
    for request, mixed, solo in zip(requests, together, alone, strict=True):
        assert mixed.completion_ids == solo.completion_ids, request.request_id
        assert mixed.logprobs == pytest.approx(solo.logprobs, abs=1e-4), request.request_id
        assert mixed.policy_version == (0 if request.base else 1)
