"""A call's policy version has one source: the deltas, stamped by the backend as it samples."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

from agentjet.core import SwarmClient
from agentjet.core.backends.fakes import ScriptedBackend
from agentjet.core.testing import RunningServer
from agentjet.core.types import GenerationRequest, SamplingParams, TokenDelta, sampled_version
from tests.conftest import TOKEN
from tests.tasks.swarm_helpers import journal


def _delta(tokens: int, version: int | None) -> TokenDelta:
    return TokenDelta((7,) * tokens, (0.0,) * tokens, "x" * tokens, None, version)


def test_the_sampled_version_is_the_oldest_that_sampled_a_token() -> None:
    assert sampled_version([_delta(1, 3), _delta(2, 4), _delta(0, 2)]) == 3  # a bare finish samples nothing
    assert sampled_version([_delta(1, 5)]) == 5
    assert sampled_version([_delta(0, 1), _delta(2, None)]) is None
    assert sampled_version([]) is None


def test_a_fake_stamps_each_delta_with_the_version_sampling_it(tiny_tokenizer: Any) -> None:
    backend = ScriptedBackend(tiny_tokenizer, ["alpha beta gamma delta epsilon"])
    request = GenerationRequest("r", tuple(tiny_tokenizer("hi")["input_ids"]), SamplingParams(max_tokens=8))

    async def straddle() -> list[TokenDelta]:
        deltas = []
        async for delta in backend.stream(request):
            deltas.append(delta)
            if len(deltas) == 2:
                await backend.load_adapter(Path("unused-by-a-fake"), 1)
        return deltas

    deltas = asyncio.run(straddle())
    assert [d.policy_version for d in deltas[:2]] == [0, 0] and {d.policy_version for d in deltas[2:]} == {1}
    assert asyncio.run(backend.generate(request)).policy_version == 1


def test_a_call_records_the_version_that_sampled_it_not_the_one_serving_when_it_started(
    live_server: Callable[..., RunningServer], tiny_tokenizer: Any, tmp_path: Path
) -> None:
    """The adapter changes after the call is admitted but before its first token: the record says 1."""
    admitted = threading.Event()
    backend = ScriptedBackend(tiny_tokenizer, ["one two three"], token_delay_s=0.3)
    original = backend.stream

    def stream(request: GenerationRequest) -> Any:
        admitted.set()
        return original(request)

    backend.stream = stream  # type: ignore[method-assign]
    server = live_server(backend)
    with SwarmClient(server.url, TOKEN) as client:
        episode = client.begin_episode("t-version")
        swap = threading.Thread(target=lambda: admitted.wait(10) and setattr(backend, "policy_version", 1))
        swap.start()
        reply = httpx.post(
            f"{episode.base_url}/chat/completions",
            json={"model": "policy", "messages": [{"role": "user", "content": "go"}], "max_tokens": 4},
            headers={"Authorization": f"Bearer {episode.api_key}"},
            timeout=30,
        )
        swap.join()
        assert reply.status_code == 200, reply.text
        episode.end(1.0)
    (record,) = journal(tmp_path / "state")
    assert [call.policy_version for call in record.calls] == [1]
