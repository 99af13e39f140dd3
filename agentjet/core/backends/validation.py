"""What every backend shares around sampling: the checks before a sequence is admitted (so all
refuse the same requests alike) and the set of token ids that end a sequence."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agentjet.core.errors import ContextLengthExceeded, InvalidRequest
from agentjet.core.types import GenerationRequest

__all__ = ["eos_token_ids", "validate_request"]


def validate_request(request: GenerationRequest, *, max_context: int, vocab_size: int) -> None:
    """Raise `InvalidRequest` or `ContextLengthExceeded` (a 400 with the reason) for a request no backend can run."""
    params, n_prompt = request.params, len(request.prompt_ids)
    if n_prompt == 0:
        raise InvalidRequest("prompt_ids is empty; a completion needs at least one prompt token", param="messages")
    if params.max_tokens < 1:
        raise InvalidRequest(f"max_tokens={params.max_tokens} must be at least 1", param="max_tokens")
    if params.temperature < 0:
        raise InvalidRequest(f"temperature={params.temperature} must be >= 0", param="temperature")
    if not 0 < params.top_p <= 1:
        raise InvalidRequest(f"top_p={params.top_p} must be in (0, 1]", param="top_p")
    if n_prompt + params.max_tokens > max_context:
        raise ContextLengthExceeded(
            f"prompt of {n_prompt} tokens + max_tokens {params.max_tokens} = {n_prompt + params.max_tokens} "
            f"exceeds the model's context of {max_context} tokens",
            param="messages",
        )
    if not all(0 <= t < vocab_size for t in request.prompt_ids):
        raise InvalidRequest(f"prompt_ids must lie in [0, {vocab_size})", param="messages")


def eos_token_ids(tokenizer: Any, *configs: Any) -> frozenset[int]:
    """Every id that ends a sequence: the tokenizer's EOS and each config's `eos_token_id` (int or list)."""
    candidates: list[Any] = [tokenizer.eos_token_id, *(getattr(c, "eos_token_id", None) for c in configs)]
    ids: set[int] = set()
    for value in candidates:
        if isinstance(value, int):
            ids.add(value)
        elif isinstance(value, Sequence):
            ids.update(int(v) for v in value)
    return frozenset(ids)
