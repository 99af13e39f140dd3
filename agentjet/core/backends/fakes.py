"""Backends that stand in for a model where one cannot or need not run.

`EchoBackend` costs nothing per call (it echoes the tail of the prompt), so benchmarks of it
measure the server's own overhead. `ScriptedBackend` streams scripted completions token by
token through the same code path a real model uses, so tests can drive tool calls, stop
strings and multi-turn agents deterministically.
"""

from __future__ import annotations

import asyncio
import itertools
import threading
from collections.abc import AsyncIterator, Callable, Iterable
from pathlib import Path
from typing import Any

from agentjet.core.backends.base import collect_generation
from agentjet.core.backends.textstream import TextStream
from agentjet.core.errors import ContextLengthExceeded, InvalidRequest
from agentjet.core.types import FinishReason, Generation, GenerationRequest, TokenDelta

__all__ = ["EchoBackend", "ScriptedBackend", "load_tokenizer"]


_FIRST_IMPORT = threading.Lock()


def load_tokenizer(model_path: Path) -> Any:
    # transformers' lazy module is not thread-safe on first use: two servers starting in threads at
    # once (the red team's scripted policies) could see "cannot import name 'AutoTokenizer'".
    with _FIRST_IMPORT:
        from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(model_path)


class _FakeBase:
    """Shared plumbing: validation, `generate` as a collected `stream`, adapter versioning."""

    def __init__(self, tokenizer: Any, *, name: str, max_context: int = 2048) -> None:
        self.tokenizer = tokenizer
        self.name = name
        self.max_context = max_context
        self.policy_version = 0

    async def start(self) -> None:
        return None

    async def close(self) -> None:
        return None

    async def load_adapter(self, path: Path, version: int) -> None:
        self.policy_version = version

    def _version_for(self, request: GenerationRequest) -> int:
        """A fake has no weights: the base is told apart by its version only (0)."""
        return 0 if request.base else self.policy_version

    def _check(self, request: GenerationRequest) -> None:
        if not request.prompt_ids:
            raise InvalidRequest("prompt is empty", param="messages")
        needed = len(request.prompt_ids) + request.params.max_tokens
        if needed > self.max_context:
            raise ContextLengthExceeded(
                f"prompt has {len(request.prompt_ids)} tokens and max_tokens is {request.params.max_tokens}: "
                f"{needed} > the model's context of {self.max_context} tokens",
                param="messages",
            )

    def stream(self, request: GenerationRequest) -> AsyncIterator[TokenDelta]:
        raise NotImplementedError

    async def generate(self, request: GenerationRequest) -> Generation:
        return await collect_generation(self.stream(request), version_if_none=self.policy_version)


class EchoBackend(_FakeBase):
    """Answers every prompt at once with its last few tokens (logprob 0): zero model cost."""

    def __init__(self, tokenizer: Any, *, name: str = "echo", echo_tokens: int = 8, max_context: int = 2048) -> None:
        super().__init__(tokenizer, name=name, max_context=max_context)
        self.echo_tokens = echo_tokens

    async def stream(self, request: GenerationRequest) -> AsyncIterator[TokenDelta]:
        self._check(request)
        count = min(self.echo_tokens, request.params.max_tokens, len(request.prompt_ids))
        ids = request.prompt_ids[-count:]
        finish: FinishReason = "length" if count == request.params.max_tokens else "stop"
        yield TokenDelta(tuple(ids), (0.0,) * count, self.tokenizer.decode(ids), finish, self._version_for(request))


class ScriptedBackend(_FakeBase):
    """Streams scripted completions token by token.

    `script` is either an iterable of completion texts (used in turn, cycling) or a function
    `(prompt_text) -> completion text`. Each token is delayed `token_delay_s` so streaming and
    concurrency are observable. Logprobs are a deterministic function of the token id.
    """

    def __init__(
        self,
        tokenizer: Any,
        script: Iterable[str] | Callable[[str], str],
        *,
        name: str = "scripted",
        token_delay_s: float = 0.0,
        max_context: int = 2048,
    ) -> None:
        super().__init__(tokenizer, name=name, max_context=max_context)
        self._script: Callable[[str], str] = script if callable(script) else _cycle(script)
        self.token_delay_s = token_delay_s
        self.prompts: list[str] = []

    async def stream(self, request: GenerationRequest) -> AsyncIterator[TokenDelta]:
        self._check(request)
        prompt = self.tokenizer.decode(request.prompt_ids)
        self.prompts.append(prompt)
        text = self._script(prompt)
        ids = self.tokenizer(text, add_special_tokens=False)["input_ids"][: request.params.max_tokens]
        text_stream = TextStream(lambda part: str(self.tokenizer.decode(list(part))), request.params.stop)
        for i, token in enumerate(ids):
            if self.token_delay_s:
                await asyncio.sleep(self.token_delay_s)
            visible = text_stream.push(token)
            last = i == len(ids) - 1 or text_stream.is_stopped
            finish: FinishReason | None = None
            if text_stream.is_stopped:
                finish = "stop"
            elif last:
                visible += text_stream.flush()
                finish = "length" if len(ids) == request.params.max_tokens else "stop"
            yield TokenDelta((token,), (_fake_logprob(token),), visible, finish, self._version_for(request))
            if finish is not None:
                return
        yield TokenDelta((), (), "", "stop")  # an empty script: nothing sampled


def _cycle(texts: Iterable[str]) -> Callable[[str], str]:
    source = itertools.cycle(list(texts))
    return lambda _prompt: next(source)


def _fake_logprob(token: int) -> float:
    return -((token % 97) + 1) / 100.0
