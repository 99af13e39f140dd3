"""`/v1/models` and `/v1/chat/completions`: the OpenAI-compatible surface agents talk to.

A streamed choice asked for `logprobs` gets them all in its closing chunk (the one with its
`finish_reason`), not spread over its deltas: the chat playground colours a reply once it ends.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import orjson
from fastapi import APIRouter, Depends, Request
from fastapi.responses import Response, StreamingResponse

from agentjet.core.chat_format import RenderedPrompt
from agentjet.core.episodes.open_episode import OpenEpisode
from agentjet.core.errors import AgentJetError
from agentjet.core.server import openai_shapes as shapes
from agentjet.core.server.deps import ChatDep, EngineDep, EpisodeDep, require_any_credential
from agentjet.core.server.openai_models import ChatCompletionIn, to_chat_call
from agentjet.core.serving import ChatCall, ChatService, ChoiceDelta, ChoiceResult

__all__ = ["router"]

log = logging.getLogger(__name__)
router = APIRouter(prefix="/v1", tags=["openai"])


@router.get("/models", dependencies=[Depends(require_any_credential)])
async def list_models(engine: EngineDep) -> dict[str, Any]:
    model = {
        "id": engine.backend.name,
        "object": "model",
        "created": 0,
        "owned_by": "agentjet",
        "policy_version": engine.backend.policy_version,
        "max_context": engine.backend.max_context,
    }
    return {"object": "list", "data": [model]}


@router.post("/chat/completions", response_model=None)
async def chat_completions(body: ChatCompletionIn, episode: EpisodeDep, chat: ChatDep, request: Request) -> Response:
    call = to_chat_call(body, default_max_tokens=request.app.state.runtime.settings.max_tokens_default)
    prompt = await chat.prepare(call)
    completion_id, created = f"chatcmpl-{uuid.uuid4().hex}", int(time.time())
    if body.stream:
        include_usage = bool(body.stream_options and body.stream_options.include_usage)
        meta = _StreamMeta(completion_id, created, body.model, include_usage, with_logprobs=bool(body.logprobs))
        events = _stream_events(chat, episode, call, prompt, meta)
        return StreamingResponse(events, media_type="text/event-stream")
    results = await chat.complete(episode, call, prompt)
    reply = shapes.completion(
        completion_id, created, body.model, results, tokenizer=chat.tokenizer, with_logprobs=bool(body.logprobs)
    )
    return Response(orjson.dumps(reply), media_type="application/json")  # skips FastAPI's generic encoder


@dataclass(frozen=True)
class _StreamMeta:
    completion_id: str
    created: int
    model: str
    include_usage: bool
    with_logprobs: bool


async def _stream_events(
    chat: ChatService, episode: OpenEpisode, call: ChatCall, prompt: RenderedPrompt, meta: _StreamMeta
) -> AsyncIterator[bytes]:
    """SSE chunks as tokens are sampled; tool calls, held-back text and (when asked) the choice's
    token logprobs arrive with each choice's end."""

    def emit(choices: list[dict[str, Any]], usage: dict[str, int] | None = None) -> bytes:
        return shapes.sse(shapes.chunk(meta.completion_id, meta.created, meta.model, choices, usage))

    streamed = ["" for _ in range(call.n)]
    for index in range(call.n):
        yield emit([{"index": index, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}])
    results: list[ChoiceResult] = []
    try:
        async for item in chat.stream(episode, call, prompt):
            if isinstance(item, ChoiceDelta):
                streamed[item.index] += item.content
                yield emit([{"index": item.index, "delta": {"content": item.content}, "finish_reason": None}])
                continue
            results.append(item)
            for delta in _closing_deltas(item, streamed[item.index]):
                yield emit([{"index": item.index, "delta": delta, "finish_reason": None}])
            last: dict[str, Any] = {"index": item.index, "delta": {}, "finish_reason": item.finish_reason}
            if meta.with_logprobs:
                last["logprobs"] = shapes.logprobs_block(chat.tokenizer, item)
            yield emit([last])
    except AgentJetError as exc:  # headers are sent: the error travels as the last event
        log.error("stream failed mid-way id=%s: %s", episode.episode_id, exc)
        yield shapes.sse({"error": {"message": str(exc), "type": "server_error", "code": "stream_failed"}})
        return
    if meta.include_usage:
        yield emit([], shapes.usage(results))
    yield shapes.sse("[DONE]")


def _closing_deltas(result: ChoiceResult, streamed: str) -> list[dict[str, Any]]:
    deltas: list[dict[str, Any]] = []
    content = result.content or ""
    if content.startswith(streamed) and len(content) > len(streamed):
        deltas.append({"content": content[len(streamed) :]})
    for position, call in enumerate(result.tool_calls):
        deltas.append({"tool_calls": [{"index": position, **call}]})
    return deltas
