"""The chat call through AutoGen's `OpenAIChatCompletionClient(base_url=..., model_info=...)`.

AutoGen needs `model_info` for a model name OpenAI does not know (the episode's `policy`): we
declare a text-only model with function calling. The sampling knobs (temperature, max_tokens,
seed) are the client's create arguments, so one client is made per call; tool calls come back
as `FunctionCall`s, and text said beside them as the result's `thought`, which AutoGen sends
back as the assistant message's content on the next turn.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any

from autogen_core import FunctionCall
from autogen_core.models import (
    AssistantMessage,
    CreateResult,
    FunctionExecutionResult,
    FunctionExecutionResultMessage,
    LLMMessage,
    ModelInfo,
    SystemMessage,
    UserMessage,
)
from autogen_core.tools import ToolSchema
from autogen_ext.models.openai import OpenAIChatCompletionClient

from agentjet.tasks.base import Endpoint
from agentjet.tasks.frameworks import ChatRequest, ToolTurn

__all__ = ["MODEL_INFO", "client_for", "complete", "complete_with_tools"]

MODEL_INFO = ModelInfo(
    vision=False, function_calling=True, json_output=False, family="unknown", structured_output=False
)


def client_for(endpoint: Endpoint, request: ChatRequest) -> OpenAIChatCompletionClient:
    """A client bound to the episode and the request's sampling knobs; no retries."""
    return OpenAIChatCompletionClient(
        model=endpoint.model,
        base_url=endpoint.base_url,
        api_key=endpoint.api_key,
        model_info=MODEL_INFO,
        temperature=request.temperature,
        max_tokens=request.max_tokens,
        seed=request.seed,
        timeout=request.timeout_s,
        max_retries=0,
    )


def _to_messages(messages: Sequence[Mapping[str, Any]]) -> list[LLMMessage]:
    """OpenAI-format messages as AutoGen's; consecutive tool results become one result message."""
    converted: list[LLMMessage] = []
    for message in messages:
        role, content = message["role"], message.get("content") or ""
        if role == "system":
            converted.append(SystemMessage(content=content))
        elif role == "user":
            converted.append(UserMessage(content=content, source="user"))
        elif role == "assistant" and message.get("tool_calls"):
            calls = [
                FunctionCall(id=c["id"], name=c["function"]["name"], arguments=c["function"]["arguments"])
                for c in message["tool_calls"]
            ]
            converted.append(AssistantMessage(content=calls, thought=content or None, source="assistant"))
        elif role == "assistant":
            converted.append(AssistantMessage(content=content, source="assistant"))
        elif role == "tool":
            result = FunctionExecutionResult(
                content=content, name=message.get("name", ""), call_id=message["tool_call_id"]
            )
            last = converted[-1] if converted else None
            if isinstance(last, FunctionExecutionResultMessage):
                last.content.append(result)
            else:
                converted.append(FunctionExecutionResultMessage(content=[result]))
        else:
            raise ValueError(f"no AutoGen message for role {role!r}")
    return converted


async def _create(
    endpoint: Endpoint,
    request: ChatRequest,
    messages: Sequence[Mapping[str, Any]],
    tools: Sequence[ToolSchema],
    tool_choice: str = "auto",
) -> CreateResult:
    client = client_for(endpoint, request)
    try:
        choice: dict[str, Any] = {"tool_choice": "required"} if tool_choice == "required" else {}
        return await client.create(_to_messages(messages), tools=list(tools), **choice)
    finally:
        await client.close()


def _split(result: CreateResult) -> ToolTurn:
    if isinstance(result.content, str):
        return ToolTurn(result.content, ())
    calls = tuple((call.id, call.name, call.arguments) for call in result.content)
    return ToolTurn(result.thought or "", calls)


def _schema(function: Mapping[str, Any]) -> ToolSchema:
    """AutoGen's tool schema is the OpenAI tool's inner `function` object."""
    return ToolSchema(
        name=function["name"], description=function.get("description", ""), parameters=function["parameters"]
    )


def complete(endpoint: Endpoint, request: ChatRequest) -> str:
    return _split(asyncio.run(_create(endpoint, request, request.messages, ()))).text


def complete_with_tools(
    endpoint: Endpoint,
    request: ChatRequest,
    messages: Sequence[Mapping[str, Any]],
    tools: Sequence[Mapping[str, Any]],
    tool_choice: str = "auto",
) -> ToolTurn:
    schemas = [_schema(tool["function"]) for tool in tools]
    return _split(asyncio.run(_create(endpoint, request, messages, schemas, tool_choice)))
