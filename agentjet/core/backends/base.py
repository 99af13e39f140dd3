"""The inference backend seam: what the server needs from anything that samples tokens.

Implementations: `TransformersBackend` (CPU/GPU, embedded default), `EchoBackend` (zero-cost,
for overhead benchmarks and tests), `ScriptedBackend` (replays scripted completions through
the real code path), and later vLLM (GPU) behind the same contract.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from agentjet.core.types import FinishReason, Generation, GenerationRequest, TokenDelta, sampled_version

__all__ = ["Backend", "collect_generation"]


@runtime_checkable
class Backend(Protocol):
    """Samples token completions for rendered prompts.

    Contract:
    - `start()` loads what it needs (may take seconds; call once, from the event loop);
      `close()` stops background work and cancels open streams (they end with "abort").
    - `stream(request)` yields `TokenDelta`s as tokens are sampled; the last delta has a
      `finish_reason`. Many streams may be open at once: they share one batching loop.
      Cancelling the consumer (closing the async iterator) frees the sequence's slot.
    - `generate(request)` is `stream` collected into one `Generation`.
    - Token ids returned are exactly those sampled; logprobs are log-softmax of the
      temperature-scaled logits (plain logits when temperature == 0) at each sampled token.
    - `tokenizer` is a Hugging Face tokenizer with a chat template; `max_context` in tokens.
    - Raises `BackendError` (never raw torch/vLLM errors); `ContextLengthExceeded` for prompts
      that cannot fit.
    - `load_adapter(path, version)` swaps in trained weights; afterwards new tokens are sampled
      from them and tagged with `version`.
    """

    name: str
    policy_version: int
    max_context: int
    tokenizer: Any

    async def start(self) -> None: ...

    async def close(self) -> None: ...

    def stream(self, request: GenerationRequest) -> AsyncIterator[TokenDelta]: ...

    async def generate(self, request: GenerationRequest) -> Generation: ...

    async def load_adapter(self, path: Path, version: int) -> None: ...


async def collect_generation(
    deltas: AsyncIterator[TokenDelta], *, version_if_none: int, finish_if_none: FinishReason = "stop"
) -> Generation:
    """Fold a delta stream into one `Generation`: how every backend implements `generate`.

    Its version is what the deltas carry (`sampled_version`); `version_if_none` only tags a sequence
    that sampled no token."""
    seen: list[TokenDelta] = []
    finish = finish_if_none
    async for delta in deltas:
        seen.append(delta)
        finish = delta.finish_reason or finish
    ids = tuple(t for d in seen for t in d.token_ids)
    logprobs = tuple(lp for d in seen for lp in d.logprobs)
    version = sampled_version(seen)
    text = "".join(d.text for d in seen)
    return Generation(ids, logprobs, text, finish, version_if_none if version is None else version)
