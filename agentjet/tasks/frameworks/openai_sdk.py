"""The chat call, and a tool-using agent's turn, through the official `openai` SDK."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

from openai import Omit, OpenAI, omit

from agentjet.tasks.base import Endpoint
from agentjet.tasks.frameworks import ChatRequest, ToolTurn

__all__ = ["complete", "complete_with_tools"]


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


def complete_with_tools(
    endpoint: Endpoint,
    request: ChatRequest,
    messages: Sequence[Mapping[str, Any]],
    tools: Sequence[Mapping[str, Any]],
    tool_choice: str = "auto",
) -> ToolTurn:
    choice: Literal["required"] | Omit = "required" if tool_choice == "required" else omit
    with OpenAI(
        base_url=endpoint.base_url, api_key=endpoint.api_key, max_retries=0, timeout=request.timeout_s
    ) as client:
        reply = client.chat.completions.create(
            model=endpoint.model,
            messages=[dict(m) for m in messages],  # type: ignore[misc]
            tools=[dict(t) for t in tools],  # type: ignore[misc]
            temperature=request.temperature,
            max_tokens=request.max_tokens,
            seed=request.seed,
            tool_choice=choice,
        )
    message = reply.choices[0].message
    functions = [c for c in message.tool_calls or [] if c.type == "function"]
    calls = tuple((c.id, c.function.name, c.function.arguments) for c in functions)
    return ToolTurn(message.content or "", calls)
