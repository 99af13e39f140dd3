"""The fake backends obey the Backend contract the server relies on."""

from __future__ import annotations

from typing import Any

import pytest

from agentjet.core.backends.base import Backend
from agentjet.core.backends.fakes import EchoBackend, ScriptedBackend
from agentjet.core.errors import ContextLengthExceeded, InvalidRequest
from agentjet.core.types import GenerationRequest, SamplingParams


async def test_scripted_generate_matches_its_stream_and_honours_stop(tiny_tokenizer: Any) -> None:
    backend = ScriptedBackend(tiny_tokenizer, ["alpha beta STOP gamma"])
    assert isinstance(backend, Backend)
    request = GenerationRequest("r", (1, 2, 3), SamplingParams(max_tokens=50, stop=("STOP",)))
    generation = await backend.generate(request)
    assert generation.text == "alpha beta " and generation.finish_reason == "stop"
    assert tiny_tokenizer.decode(generation.completion_ids).startswith("alpha beta STOP")
    assert len(generation.logprobs) == len(generation.completion_ids)
    streamed = [d async for d in backend.stream(request)]
    assert tuple(t for d in streamed for t in d.token_ids) == generation.completion_ids


async def test_scripted_length_limit(tiny_tokenizer: Any) -> None:
    backend = ScriptedBackend(tiny_tokenizer, ["one two three four five six"])
    generation = await backend.generate(GenerationRequest("r", (1,), SamplingParams(max_tokens=2)))
    assert len(generation.completion_ids) == 2 and generation.finish_reason == "length"


async def test_echo_and_limits(tiny_tokenizer: Any) -> None:
    backend = EchoBackend(tiny_tokenizer, echo_tokens=2, max_context=10)
    generation = await backend.generate(GenerationRequest("r", (5, 6, 7), SamplingParams(max_tokens=4)))
    assert generation.completion_ids == (6, 7) and generation.finish_reason == "stop"
    with pytest.raises(ContextLengthExceeded, match="10"):
        await backend.generate(GenerationRequest("r", (1,) * 8, SamplingParams(max_tokens=4)))
    with pytest.raises(InvalidRequest):
        await backend.generate(GenerationRequest("r", (), SamplingParams()))
