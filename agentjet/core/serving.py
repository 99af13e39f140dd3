"""Serve one chat-completion call of an episode: render, sample (n choices), parse, track.

This is the context tracker's write side: each finished choice becomes a `CallRecord` with
the exact prompt ids, sampled ids and logprobs, attached to its episode through the engine.
A call whose client disconnects before it finishes is not recorded (the client never saw it).

Bounded: counts of messages, tools and choices are checked first (`ChatLimits`), then a prompt
whose text alone cannot fit the context is refused before it is rendered (each token covers at
most `longest_token_chars` characters), and rendering and tokenising run on one worker thread,
never on the event loop, so one huge prompt cannot stall the server.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any

from agentjet.core.chat_format import TOOL_CALL_OPEN, RenderedPrompt, force_tool_call, parse_tool_calls, render_prompt
from agentjet.core.engine import Engine
from agentjet.core.episodes.open_episode import OpenEpisode
from agentjet.core.errors import ContextLengthExceeded, InvalidRequest
from agentjet.core.types import CallRecord, GenerationRequest, SamplingParams, TokenDelta, sampled_version

__all__ = ["ChatCall", "ChatLimits", "ChatService", "ChoiceDelta", "ChoiceResult", "text_chars"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ChatCall:
    """A validated chat request, free of HTTP and pydantic."""

    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]] | None
    n: int
    params: SamplingParams
    request_echo: dict[str, Any] = field(default_factory=dict)  # sampling fields as sent, for the record
    tool_required: bool = False  # tool_choice "required" or a named function: the reply opens a tool call
    tool_name: str | None = None  # the named function of tool_choice, if one


@dataclass(frozen=True)
class ChoiceDelta:
    """New visible content of one choice while streaming (tool-call text is held back)."""

    index: int
    content: str


@dataclass(frozen=True)
class ChoiceResult:
    index: int
    content: str | None
    tool_calls: list[dict[str, Any]]
    finish_reason: str
    record: CallRecord


@dataclass(frozen=True)
class ChatLimits:
    """What one chat request may ask for (ServerSettings max_messages, max_tools, max_n)."""

    max_messages: int = 1024
    max_tools: int = 128
    max_n: int = 16

    def check(self, call: ChatCall) -> None:
        if len(call.messages) > self.max_messages:
            raise InvalidRequest(f"{len(call.messages)} messages; at most {self.max_messages}", param="messages")
        if call.tools is not None and len(call.tools) > self.max_tools:
            raise InvalidRequest(f"{len(call.tools)} tools; at most {self.max_tools}", param="tools")
        if call.n > self.max_n:
            raise InvalidRequest(f"n={call.n}; at most {self.max_n}", param="n")


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def text_chars(call: ChatCall) -> int:
    """Characters of every string in the messages and tools: the rendered prompt holds at least these."""
    return sum(len(s) for s in _strings(call.messages)) + sum(len(s) for s in _strings(call.tools or []))


class ChatService:
    """Turns `ChatCall`s on an authorised episode into backend requests and call records."""

    def __init__(self, engine: Engine, *, limits: ChatLimits | None = None) -> None:
        self.engine = engine
        self.limits = limits or ChatLimits()
        self._renderer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="agentjet-render")

    @property
    def tokenizer(self) -> Any:
        return self.engine.backend.tokenizer

    @cached_property
    def longest_token_chars(self) -> int:
        """The longest token's text, in characters: a prompt of C characters has >= C / this tokens."""
        tokenizer = self.tokenizer
        return max(len(t) for t in tokenizer.convert_ids_to_tokens(list(range(len(tokenizer)))))

    def close(self) -> None:
        self._renderer.shutdown(wait=False, cancel_futures=True)

    async def prepare(self, call: ChatCall) -> RenderedPrompt:
        """Check, render and tokenise the prompt before anything is sampled (errors here are 4xx)."""
        self.limits.check(call)
        loop = asyncio.get_running_loop()
        limit = self.engine.backend.max_context
        chars = text_chars(call)
        longest = await loop.run_in_executor(self._renderer, lambda: self.longest_token_chars)  # once: the vocab
        if chars > limit * longest:
            raise ContextLengthExceeded(
                f"this model's maximum context length is {limit} tokens; the messages hold {chars} characters, "
                f"more than {limit} tokens can cover: shorten the messages",
                param="messages",
            )
        prompt = await loop.run_in_executor(self._renderer, render_prompt, self.tokenizer, call.messages, call.tools)
        if call.tool_required and call.tools:
            force = (self.tokenizer, call.messages, call.tools, prompt, call.tool_name)
            prompt = await loop.run_in_executor(self._renderer, force_tool_call, *force)
        if len(prompt.ids) + call.params.max_tokens > limit:
            raise ContextLengthExceeded(
                f"this model's maximum context length is {limit} tokens; the messages use "
                f"{len(prompt.ids)} tokens and max_tokens asks for {call.params.max_tokens}: "
                "shorten the messages or lower max_tokens",
                param="messages",
            )
        return prompt

    async def stream(
        self, episode: OpenEpisode, call: ChatCall, prompt: RenderedPrompt
    ) -> AsyncIterator[ChoiceDelta | ChoiceResult]:
        """Yield content deltas of all n choices as they are sampled, then each choice's result.

        The call waits at the engine's door while an update drains or runs (`Engine.admit_call`)."""
        call_index = await self.engine.admit_call(episode)
        queue: asyncio.Queue[ChoiceDelta | ChoiceResult | BaseException] = asyncio.Queue()
        tasks = [
            asyncio.create_task(self._run_choice(episode, call, prompt, call_index, i, queue)) for i in range(call.n)
        ]
        results: list[ChoiceResult] = []
        try:
            while len(results) < call.n:
                item = await queue.get()
                if isinstance(item, BaseException):
                    raise item
                if isinstance(item, ChoiceResult):
                    results.append(item)
                yield item
        except BaseException:
            for task in tasks:
                task.cancel()
            self.engine.call_failed(episode)
            raise
        self.engine.call_finished(episode, [r.record for r in sorted(results, key=lambda r: r.index)])

    async def complete(self, episode: OpenEpisode, call: ChatCall, prompt: RenderedPrompt) -> list[ChoiceResult]:
        results = [item async for item in self.stream(episode, call, prompt) if isinstance(item, ChoiceResult)]
        return sorted(results, key=lambda r: r.index)

    async def _run_choice(
        self,
        episode: OpenEpisode,
        call: ChatCall,
        prompt: RenderedPrompt,
        call_index: int,
        index: int,
        queue: asyncio.Queue[ChoiceDelta | ChoiceResult | BaseException],
    ) -> None:
        params = call.params
        if params.seed is not None and index:
            params = replace(params, seed=params.seed + index)  # n seeded choices must differ
        request = GenerationRequest(
            f"{episode.episode_id}:{call_index}:{index}", prompt.ids, params, episode.base_model
        )
        holdback = _ToolTextGate(enabled=bool(call.tools), closed=bool(prompt.forced_text))
        started = time.time()
        first_token_s: float | None = None
        deltas: list[TokenDelta] = []
        try:
            async for delta in self.engine.backend.stream(request):
                if first_token_s is None and delta.token_ids:
                    first_token_s = time.time() - started
                deltas.append(delta)
                visible = holdback.feed(delta.text)
                if visible:
                    queue.put_nowait(ChoiceDelta(index, visible))
        except BaseException as exc:  # delivered to the consumer, which re-raises it
            queue.put_nowait(exc)
            return
        timing = (started, first_token_s)
        version = sampled_version(deltas)  # the weights that sampled it, as the backend saw them
        if version is None:  # nothing sampled: tag it with the weights serving it now
            version = 0 if episode.base_model else self.engine.backend.policy_version
        queue.put_nowait(self._result(episode, call, prompt, (call_index, index, version), deltas, timing))

    def _result(
        self,
        episode: OpenEpisode,
        call: ChatCall,
        prompt: RenderedPrompt,
        position: tuple[int, int, int],
        deltas: list[TokenDelta],
        timing: tuple[float, float | None],
    ) -> ChoiceResult:
        """Parse the finished choice and build its CallRecord. `position` = (call, choice, policy version)."""
        call_index, index, version = position
        started, first_token_s = timing
        text = "".join(d.text for d in deltas)
        finish = next((d.finish_reason for d in reversed(deltas) if d.finish_reason), "stop")
        content: str | None = text
        tool_calls: list[dict[str, Any]] = []
        if call.tools:  # a forced tool call's opening is the prompt's, but part of the reply to parse
            content, tool_calls = parse_tool_calls(prompt.forced_text + text)
            if tool_calls and finish == "stop":
                finish = "tool_calls"
        record = CallRecord(
            episode_id=episode.episode_id,
            call_index=call_index,
            choice_index=index,
            agent=episode.agent,
            messages=call.messages,
            tools=call.tools,
            sampling=call.request_echo,
            prompt_text=prompt.text,
            prompt_ids=prompt.ids,
            completion_ids=tuple(t for d in deltas for t in d.token_ids),
            completion_logprobs=tuple(lp for d in deltas for lp in d.logprobs),
            completion_text=text,
            tool_calls=tool_calls or None,
            finish_reason=finish,
            policy_version=version,
            tool_format=prompt.tool_format,
            last_assistant_end=prompt.last_assistant_end,
            forced_text=prompt.forced_text,
            started_at=started,
            first_token_s=first_token_s,
            finished_at=time.time(),
        )
        return ChoiceResult(index, content, tool_calls, finish, record)


class _ToolTextGate:
    """When tools are offered, stream content only up to a `<tool_call>` marker (held back whole).

    `closed`: nothing streams (a forced tool call: the whole reply is the call)."""

    def __init__(self, *, enabled: bool, closed: bool = False) -> None:
        self.enabled = enabled
        self._pending = ""
        self._closed = closed

    def feed(self, text: str) -> str:
        if not self.enabled:
            return text
        if self._closed:
            return ""
        self._pending += text
        marker = self._pending.find(TOOL_CALL_OPEN)
        if marker >= 0:
            out, self._pending, self._closed = self._pending[:marker], "", True
            return out
        keep = _partial_marker_len(self._pending)
        out = self._pending[: len(self._pending) - keep]
        self._pending = self._pending[len(self._pending) - keep :]
        return out


def _partial_marker_len(text: str) -> int:
    for size in range(min(len(TOOL_CALL_OPEN) - 1, len(text)), 0, -1):
        if TOOL_CALL_OPEN.startswith(text[-size:]):
            return size
    return 0
