"""TransformersBackend on the tiny model: continuous batching is exact, streams are live, errors are typed."""

from __future__ import annotations

import asyncio
import json
import logging
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import torch

from agentjet.core.backends.base import Backend
from agentjet.core.backends.prefill_gather import PrefillGather
from agentjet.core.backends.transformers_backend import TransformersBackend
from agentjet.core.errors import BackendError, ContextLengthExceeded, InvalidRequest
from agentjet.core.types import Generation, GenerationRequest, SamplingParams, TokenDelta

_LOOP_LOGGER = "agentjet.core.backends.decode_loop"


def _run(coro: Any) -> Any:
    return asyncio.run(coro)


@pytest.fixture(scope="module")
def backend(tiny_model: Path) -> Iterator[TransformersBackend]:
    """One started backend for the module: its loop thread serves any test's event loop."""
    instance = TransformersBackend(tiny_model, name="tiny", max_batch_size=8)
    _run(instance.start())
    yield instance
    _run(instance.close())


def _request(backend: TransformersBackend, text: str, rid: str = "r", **params: Any) -> GenerationRequest:
    ids = tuple(backend.tokenizer.encode(text, add_special_tokens=False))
    return GenerationRequest(rid, ids, SamplingParams(**params))


async def _collect(stream: Any) -> list[TokenDelta]:
    return [delta async for delta in stream]


def test_implements_the_backend_protocol(backend: TransformersBackend) -> None:
    assert isinstance(backend, Backend)
    assert backend.max_context == 2048
    assert backend.policy_version == 0


@pytest.mark.asyncio
async def test_greedy_is_identical_while_others_join_and_leave(
    backend: TransformersBackend, caplog: pytest.LogCaptureFixture
) -> None:
    target = _request(backend, "The quick brown fox", "target", max_tokens=120, temperature=0.0)
    alone = await backend.generate(target)
    assert len(alone.completion_ids) == 120 and alone.finish_reason == "length"

    caplog.set_level(logging.DEBUG, logger=_LOOP_LOGGER)
    early = asyncio.create_task(  # already running when the target joins; leaves mid-way
        backend.generate(_request(backend, "A much longer prompt " * 6, "early", max_tokens=10, temperature=0.0))
    )
    await asyncio.sleep(0)
    joiners: list[asyncio.Task[Generation]] = []
    deltas: list[TokenDelta] = []
    async for delta in backend.stream(target):
        deltas.append(delta)
        if len(deltas) in (3, 30):  # later requests join the running batch, longer and shorter prompts
            for k, (text, n) in enumerate([("x " * (25 + len(deltas)), 15), ("Hi", 40), ("one two three", 5)]):
                req = _request(backend, text, f"join{len(deltas)}-{k}", max_tokens=n, temperature=0.7, seed=k)
                joiners.append(asyncio.create_task(backend.generate(req)))
    await asyncio.gather(early, *joiners)

    assert tuple(t for d in deltas for t in d.token_ids) == alone.completion_ids
    together = [lp for d in deltas for lp in d.logprobs]
    assert max(abs(a - b) for a, b in zip(together, alone.logprobs, strict=True)) < 1e-4
    admitted = [r.args for r in caplog.records if r.msg.startswith("admitted")]
    assert any(n > 1 for n, running, _ in admitted)  # a batched prefill
    assert any(running > n for n, running, _ in admitted)  # merged into a running batch
    assert any(r.msg.startswith("retired") and r.args[1] > 0 for r in caplog.records)  # left a running batch


@pytest.mark.asyncio
@pytest.mark.parametrize(("max_batch_size", "max_prefill_tokens"), [(2, 8192), (8, 1)])
async def test_slot_and_prefill_limits_queue_requests_without_changing_them(
    tiny_model: Path, caplog: pytest.LogCaptureFixture, max_batch_size: int, max_prefill_tokens: int
) -> None:
    small = TransformersBackend(
        tiny_model, name="small", max_batch_size=max_batch_size, max_prefill_tokens=max_prefill_tokens
    )
    await small.start()
    try:
        requests = [_request(small, "w " * (i + 1), f"q{i}", max_tokens=8 + 3 * i, temperature=0.0) for i in range(5)]
        solo = [await small.generate(r) for r in requests]
        caplog.set_level(logging.DEBUG, logger=_LOOP_LOGGER)
        batched = await asyncio.gather(*(small.generate(r) for r in requests))
    finally:
        await small.close()
    assert [g.completion_ids for g in batched] == [g.completion_ids for g in solo]
    admitted = [r.args for r in caplog.records if r.msg.startswith("admitted")]
    assert sum(n for n, _, _ in admitted) == 5
    assert all(running <= max_batch_size for _, running, _ in admitted)
    if max_prefill_tokens == 1:  # any two prompts pad to more than one token: one prefill each
        assert all(n == 1 for n, _, _ in admitted)


@pytest.mark.asyncio
async def test_a_busy_loop_gathers_newcomers_into_one_prefill_without_changing_them(
    tiny_model: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """With 8+ rows decoding on a CPU, newcomers arriving a step apart wait for each other (prefill_gather.py; here up
    to 40 steps, so that a slow event loop under a loaded CI machine still delivers all three within the window)."""
    busy = TransformersBackend(tiny_model, name="busy", max_batch_size=16, prefill_gather=PrefillGather(steps=40))
    await busy.start()
    try:
        late = [_request(busy, "late " * (i + 1), f"late{i}", max_tokens=6, temperature=0.0) for i in range(3)]
        solo = [await busy.generate(r) for r in late]
        caplog.set_level(logging.DEBUG, logger=_LOOP_LOGGER)
        rows = [_request(busy, f"row {i} " * 3, f"row{i}", max_tokens=300, temperature=0.0) for i in range(9)]
        decoding = [asyncio.Event() for _ in rows[1:]]

        async def decode(request: GenerationRequest, started: asyncio.Event) -> None:
            async for _delta in busy.stream(request):
                started.set()

        others = [asyncio.create_task(decode(r, e)) for r, e in zip(rows[1:], decoding, strict=True)]
        await asyncio.gather(*(e.wait() for e in decoding))  # 8 rows decode before the 9th and the newcomers come
        joined: list[asyncio.Task[Generation]] = []
        async for _delta in busy.stream(rows[0]):
            if len(joined) < len(late):  # one newcomer a step, each while 9 rows decode
                joined.append(asyncio.create_task(busy.generate(late[len(joined)])))
        together = await asyncio.gather(*joined)
        await asyncio.gather(*others)
    finally:
        await busy.close()
    assert [g.completion_ids for g in together] == [g.completion_ids for g in solo]
    admitted = [r.args for r in caplog.records if r.msg.startswith("admitted")]
    assert sum(n for n, _, _ in admitted) == 12
    assert [n for n, running, _ in admitted if running - n >= 9] == [3]  # the newcomers: one prefill, joining 9 rows


@pytest.mark.asyncio
async def test_seeded_sampling_ignores_batch_neighbours(backend: TransformersBackend) -> None:
    seeded = _request(backend, "Once upon a time", "seeded", max_tokens=40, temperature=1.0, seed=123)
    alone = await backend.generate(seeded)
    noise = [_request(backend, "noise " * (i + 2), f"n{i}", max_tokens=30, temperature=1.0) for i in range(3)]
    together, *_ = await asyncio.gather(backend.generate(seeded), *(backend.generate(r) for r in noise))
    other_seed = await backend.generate(_request(backend, "Once upon a time", "s2", max_tokens=40, seed=124))
    assert together.completion_ids == alone.completion_ids
    assert other_seed.completion_ids != alone.completion_ids


@pytest.mark.asyncio
async def test_logprobs_are_temperature_scaled_log_softmax(backend: TransformersBackend, tiny_model: Path) -> None:
    from transformers import AutoModelForCausalLM

    request = _request(backend, "Compute logprobs for", max_tokens=12, temperature=0.7, seed=5)
    generation = await backend.generate(request)
    model = AutoModelForCausalLM.from_pretrained(tiny_model).eval()
    ids = torch.tensor([request.prompt_ids + generation.completion_ids])
    with torch.inference_mode():
        logits = model(input_ids=ids).logits[0, len(request.prompt_ids) - 1 : -1]  # (T, V)
    expected = torch.log_softmax(logits / 0.7, dim=-1).gather(1, ids[0, len(request.prompt_ids) :, None])[:, 0]
    torch.testing.assert_close(torch.tensor(generation.logprobs), expected, atol=1e-4, rtol=0)


@pytest.mark.asyncio
async def test_top_p_tiny_is_greedy(backend: TransformersBackend) -> None:
    greedy = await backend.generate(_request(backend, "Nucleus", max_tokens=20, temperature=0.0))
    nucleus = await backend.generate(_request(backend, "Nucleus", max_tokens=20, temperature=1.0, top_p=1e-6, seed=1))
    assert nucleus.completion_ids == greedy.completion_ids


@pytest.mark.asyncio
async def test_stream_yields_before_the_sequence_finishes(backend: TransformersBackend) -> None:
    stream = backend.stream(_request(backend, "Stream me", max_tokens=200, temperature=0.0))
    first = await anext(stream)
    assert first.finish_reason is None and len(first.token_ids) == 1
    rest = await _collect(stream)
    assert len(rest) == 199 and rest[-1].finish_reason == "length"
    assert all(d.finish_reason is None for d in rest[:-1])


@pytest.mark.asyncio
async def test_closing_a_stream_frees_its_slot(tiny_model: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger=_LOOP_LOGGER)
    single = TransformersBackend(tiny_model, name="tiny-1", max_batch_size=1)
    await single.start()
    try:
        stream = single.stream(_request(single, "Long one", "long", max_tokens=2000, temperature=0.0))
        await anext(stream)
        await stream.aclose()  # type: ignore[attr-defined]
        after = await single.generate(_request(single, "Short", "short", max_tokens=3, temperature=0.0))
    finally:
        await single.close()
    assert after.finish_reason == "length"
    assert any(r.msg.startswith("cancelled") and r.args[1] == 0 for r in caplog.records)  # left before "short"


@pytest.mark.asyncio
async def test_cancelling_the_consumer_task_frees_its_slot(
    backend: TransformersBackend, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger=_LOOP_LOGGER)
    started = asyncio.Event()

    async def consume() -> None:
        async for _ in backend.stream(_request(backend, "Cancel me", "c", max_tokens=1500, temperature=0.0)):
            started.set()

    task = asyncio.create_task(consume())
    await started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await backend.generate(_request(backend, "Next", "next", max_tokens=2))  # queued behind the cancel
    assert any(r.msg.startswith("cancelled") for r in caplog.records)


@pytest.mark.asyncio
async def test_stop_string_cuts_text_and_keeps_sampled_tokens(backend: TransformersBackend) -> None:
    reference = await backend.generate(_request(backend, "Stop strings", max_tokens=60, temperature=0.0))
    decode = backend.tokenizer.decode
    stop = decode(list(reference.completion_ids[10:12]))
    assert stop.strip(), "the reference text must have something to stop on"
    stopped = await backend.generate(_request(backend, "Stop strings", max_tokens=60, temperature=0.0, stop=(stop,)))
    cut = reference.text.find(stop)
    assert stopped.finish_reason == "stop"
    assert stopped.text == reference.text[:cut]
    assert stopped.completion_ids == reference.completion_ids[: len(stopped.completion_ids)]
    assert stop in decode(list(stopped.completion_ids)) and stop not in decode(list(stopped.completion_ids[:-1]))


@pytest.mark.asyncio
async def test_generation_config_eos_ends_with_stop(tiny_model: Path, tmp_path: Path) -> None:
    folder = tmp_path / "tiny-eos"
    shutil.copytree(tiny_model, folder)
    plain = TransformersBackend(folder, name="plain")
    await plain.start()
    reference = await plain.generate(_request(plain, "Find the end", max_tokens=30, temperature=0.0))
    await plain.close()
    eos = reference.completion_ids[5]
    config = json.loads((folder / "generation_config.json").read_text())
    config["eos_token_id"] = [config["eos_token_id"], eos]
    (folder / "generation_config.json").write_text(json.dumps(config))

    with_eos = TransformersBackend(folder, name="eos")
    await with_eos.start()
    generation = await with_eos.generate(_request(with_eos, "Find the end", max_tokens=30, temperature=0.0))
    await with_eos.close()
    end = reference.completion_ids.index(eos) + 1
    assert generation.finish_reason == "stop"
    assert generation.completion_ids == reference.completion_ids[:end]  # the EOS token is kept
    assert generation.text == with_eos.tokenizer.decode(list(reference.completion_ids[: end - 1]))


@pytest.mark.asyncio
async def test_context_length_is_checked_before_batching(backend: TransformersBackend) -> None:
    request = _request(backend, "ten tokens or so", max_tokens=2048)
    total = len(request.prompt_ids) + 2048
    with pytest.raises(ContextLengthExceeded, match=rf"{total}.*2048"):
        backend.stream(request)
    with pytest.raises(ContextLengthExceeded):
        await backend.generate(request)
    fits = _request(backend, "ten tokens or so", max_tokens=2048 - len(request.prompt_ids), temperature=0.0)
    assert backend.stream(fits) is not None  # exactly at the limit is allowed (not iterated)


@pytest.mark.asyncio
@pytest.mark.parametrize(
    "request_",
    [
        GenerationRequest("e", (), SamplingParams()),
        GenerationRequest("t", (1, 2), SamplingParams(temperature=-1.0)),
        GenerationRequest("p", (1, 2), SamplingParams(top_p=0.0)),
        GenerationRequest("m", (1, 2), SamplingParams(max_tokens=0)),
        GenerationRequest("v", (1, 10**9), SamplingParams()),
    ],
)
async def test_invalid_requests_are_rejected(backend: TransformersBackend, request_: GenerationRequest) -> None:
    with pytest.raises(InvalidRequest):
        await backend.generate(request_)


@pytest.mark.asyncio
async def test_a_failing_step_fails_its_rows_and_the_loop_survives(fresh_backend: TransformersBackend) -> None:
    loop = fresh_backend._loop
    assert loop is not None
    model = loop._model
    calls = {"n": 0}

    def flaky(**kwargs: Any) -> Any:
        calls["n"] += 1
        if calls["n"] == 3:
            raise RuntimeError("boom")
        return model(**kwargs)

    loop._model = flaky  # type: ignore[assignment]
    with pytest.raises(BackendError) as info:
        await fresh_backend.generate(_request(fresh_backend, "Explode", max_tokens=10, temperature=0.0))
    assert isinstance(info.value.__cause__, RuntimeError)
    after = await fresh_backend.generate(_request(fresh_backend, "Survive", max_tokens=5, temperature=0.0))
    assert len(after.completion_ids) == 5


@pytest.mark.asyncio
async def test_close_aborts_open_streams_and_refuses_new_ones(fresh_backend: TransformersBackend) -> None:
    stream = fresh_backend.stream(_request(fresh_backend, "Forever", max_tokens=2000, temperature=0.0))
    await anext(stream)
    await fresh_backend.close()
    rest = await _collect(stream)
    assert rest[-1].finish_reason == "abort"
    with pytest.raises(BackendError, match="closed"):
        await fresh_backend.generate(_request(fresh_backend, "Late", max_tokens=2))


def _save_random_lora(tiny_model: Path, out: Path, seed: int) -> Path:
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM

    torch.manual_seed(seed)
    base = AutoModelForCausalLM.from_pretrained(tiny_model)
    config = LoraConfig(r=4, lora_alpha=32, target_modules=["q_proj", "v_proj", "o_proj"], init_lora_weights=False)
    get_peft_model(base, config).save_pretrained(out)
    return out


@pytest.mark.asyncio
async def test_load_adapter_changes_weights_and_version(
    fresh_backend: TransformersBackend, tiny_model: Path, tmp_path: Path
) -> None:
    request = _request(fresh_backend, "Adapters change outputs", max_tokens=25, temperature=0.0)
    before = await fresh_backend.generate(request)
    await fresh_backend.load_adapter(_save_random_lora(tiny_model, tmp_path / "a1", seed=1), version=1)
    first = await fresh_backend.generate(request)
    await fresh_backend.load_adapter(_save_random_lora(tiny_model, tmp_path / "a2", seed=2), version=2)
    second = await fresh_backend.generate(request)
    assert (before.policy_version, first.policy_version, second.policy_version) == (0, 1, 2)
    assert fresh_backend.policy_version == 2
    assert len({before.completion_ids, first.completion_ids, second.completion_ids}) == 3
    layers = [m for m in fresh_backend._peft.modules() if type(m).__name__ == "Linear" and hasattr(m, "lora_A")]
    assert layers and all(m.forward.__func__.__module__.endswith("lora_layers") for m in layers)  # the trainer's
    with pytest.raises(BackendError, match="adapter"):
        await fresh_backend.load_adapter(tmp_path / "missing", version=3)
    assert fresh_backend.policy_version == 2


@pytest.mark.asyncio
async def test_the_memory_report_counts_the_loaded_adapter_once_per_load_not_per_report(
    fresh_backend: TransformersBackend, tiny_model: Path, tmp_path: Path
) -> None:
    """A status poll reads `memory_report` often: it must not walk the model (that slowed a CPU update by a
    third), yet its parameter bytes follow each hot-loaded adapter."""
    base_bytes = fresh_backend.memory_report()["param_bytes"]
    await fresh_backend.load_adapter(_save_random_lora(tiny_model, tmp_path / "a1", seed=1), version=1)
    model = fresh_backend._peft.get_base_model()
    walked = sum(p.numel() * p.element_size() for p in model.parameters())
    assert fresh_backend.memory_report()["param_bytes"] == walked > base_bytes > 0

    def no_walk(*args: object, **kwargs: object) -> None:
        raise AssertionError("memory_report walked the parameters")

    model.parameters = no_walk  # type: ignore[method-assign]
    try:
        assert fresh_backend.memory_report()["param_bytes"] == walked
    finally:
        del model.parameters  # the instance attribute; the module's own method again
