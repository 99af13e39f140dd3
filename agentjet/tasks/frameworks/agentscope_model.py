"""The chat call through AgentScope 2's `OpenAIChatModel`, its credential holding the episode's `base_url`.

AgentScope speaks to OpenAI-compatible servers with its own message type (`Msg` with content
blocks) and formatter, which sends each message's text as a content-part list with a `name`;
the server renders those to the same prompt as plain strings. `seed` is not one of the
model's `Parameters`, so it goes as a per-call keyword (AgentScope forwards those to the API).
Non-streaming, no retries: a failed call fails the episode, as with the other frameworks.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from agentscope.credential import OpenAICredential
from agentscope.message import Msg, TextBlock, ToolCallBlock, ToolResultBlock
from agentscope.model import ChatResponse, OpenAIChatModel
from agentscope.tool import ToolChoice

from agentjet.tasks.base import Endpoint
from agentjet.tasks.frameworks import ChatRequest, ToolTurn

__all__ = ["complete", "complete_with_tools", "model_for"]

_ROLES: Mapping[str, Literal["system", "user", "assistant"]] = {
    "system": "system",
    "user": "user",
    "assistant": "assistant",
}


def model_for(endpoint: Endpoint, *, temperature: float, max_tokens: int, timeout_s: float) -> OpenAIChatModel:
    """An `OpenAIChatModel` bound to the episode: its credential carries the key and `base_url`."""
    credential = OpenAICredential(api_key=endpoint.api_key, base_url=endpoint.base_url)
    parameters = OpenAIChatModel.Parameters(temperature=temperature, max_tokens=max_tokens)
    return OpenAIChatModel(
        credential, endpoint.model, parameters, stream=False, max_retries=0, client_kwargs={"timeout": timeout_s}
    )


def _to_msgs(messages: Sequence[Mapping[str, Any]]) -> list[Msg]:
    """OpenAI-format messages as AgentScope `Msg`s. AgentScope keeps a tool's result in the assistant
    message that called it (a `ToolResultBlock` after the `ToolCallBlock`s, as its ReAct agent
    does); its formatter splits that back into the assistant turn and one `tool` message per result."""
    converted: list[Msg] = []
    for message in messages:
        role = message["role"]
        if role == "tool":
            if not converted or converted[-1].role != "assistant":
                raise ValueError("a tool result must follow the assistant message that called the tool")
            result = ToolResultBlock(
                id=message["tool_call_id"], name=message.get("name", ""), output=message["content"]
            )
            converted[-1].content.append(result)
            continue
        blocks: list[Any] = [TextBlock(text=message["content"])] if message.get("content") else []
        for call in message.get("tool_calls") or []:
            function = call["function"]
            blocks.append(ToolCallBlock(id=call["id"], name=function["name"], input=function["arguments"]))
        converted.append(Msg(name=role, content=blocks, role=_ROLES[role]))
    return converted


async def _call(model: OpenAIChatModel, messages: Sequence[Mapping[str, Any]], **kwargs: Any) -> ChatResponse:
    response = await model(_to_msgs(messages), **kwargs)
    assert isinstance(response, ChatResponse)  # stream=False: one response, not a generator
    await model.client.close()
    return response


def _split(response: ChatResponse) -> ToolTurn:
    text = "".join(block.text for block in response.content if isinstance(block, TextBlock))
    calls = tuple((block.id, block.name, block.input) for block in response.content if isinstance(block, ToolCallBlock))
    return ToolTurn(text, calls)


def complete(endpoint: Endpoint, request: ChatRequest) -> str:
    model = model_for(
        endpoint, temperature=request.temperature, max_tokens=request.max_tokens, timeout_s=request.timeout_s
    )
    return _split(asyncio.run(_call(model, request.messages, seed=request.seed))).text


def complete_with_tools(
    endpoint: Endpoint,
    request: ChatRequest,
    messages: Sequence[Mapping[str, Any]],
    tools: Sequence[Mapping[str, Any]],
    tool_choice: str = "auto",
) -> ToolTurn:
    model = model_for(
        endpoint, temperature=request.temperature, max_tokens=request.max_tokens, timeout_s=request.timeout_s
    )
    schemas = [dict(tool) for tool in tools]
    choice = {"tool_choice": ToolChoice(mode="required")} if tool_choice == "required" else {}
    return _split(asyncio.run(_call(model, messages, tools=schemas, seed=request.seed, **choice)))
