"""The chat call through the official `openai` SDK."""

from __future__ import annotations

from typing import Any

from openai import OpenAI

from agentjet.tasks.base import Endpoint
from agentjet.tasks.frameworks import ChatRequest

__all__ = ["complete"]


def complete(endpoint: Endpoint, request: ChatRequest) -> str:
    messages: list[Any] = [dict(m) for m in request.messages]
    with OpenAI(
        base_url=endpoint.base_url, api_key=endpoint.api_key, max_retries=0, timeout=request.timeout_s
    ) as client:
        reply = client.chat.completions.create(
            model=endpoint.model,
            messages=messages,
            temperature=request.temperature,
            max_tokens=request.max_tokens,
            seed=request.seed,
        )
    return reply.choices[0].message.content or ""
