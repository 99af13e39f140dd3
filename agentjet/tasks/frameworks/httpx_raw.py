"""The chat call as one raw `httpx` POST of the OpenAI wire format."""

from __future__ import annotations

import httpx

from agentjet.tasks.base import Endpoint
from agentjet.tasks.frameworks import ChatRequest

__all__ = ["complete"]


def complete(endpoint: Endpoint, request: ChatRequest) -> str:
    """POST `/chat/completions`; a non-2xx reply raises (the episode is broken, not the model)."""
    body = {
        "model": endpoint.model,
        "messages": [dict(m) for m in request.messages],
        "temperature": request.temperature,
        "max_tokens": request.max_tokens,
        "seed": request.seed,
    }
    reply = httpx.post(
        f"{endpoint.base_url.rstrip('/')}/chat/completions",
        json=body,
        headers={"Authorization": f"Bearer {endpoint.api_key}"},
        timeout=request.timeout_s,
    )
    reply.raise_for_status()
    content = reply.json()["choices"][0]["message"].get("content")
    return content if isinstance(content, str) else ""
