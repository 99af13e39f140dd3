"""Pydantic models of the OpenAI Chat Completions wire format (request in, response out).

Requests accept and ignore OpenAI fields we do not use (`user`, `parallel_tool_calls`, ...)
so any OpenAI client works; fields we do use are validated strictly.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from agentjet.core.errors import InvalidRequest
from agentjet.core.server.wire import Utf8Body
from agentjet.core.serving import ChatCall
from agentjet.core.types import SamplingParams

__all__ = ["ChatCompletionIn", "to_chat_call"]

_MAX_N = 16


class _Lenient(BaseModel):
    model_config = ConfigDict(extra="allow")


class FunctionCallIn(_Lenient):
    name: str
    arguments: str | dict[str, Any] = "{}"


class ToolCallIn(_Lenient):
    id: str | None = None
    type: Literal["function"] = "function"
    function: FunctionCallIn


class ContentPartIn(_Lenient):
    type: str
    text: str | None = None


class MessageIn(_Lenient):
    role: Literal["system", "developer", "user", "assistant", "tool"]
    content: str | list[ContentPartIn] | None = None
    name: str | None = None
    tool_calls: list[ToolCallIn] | None = None
    tool_call_id: str | None = None


class FunctionDefIn(_Lenient):
    name: str = Field(min_length=1, max_length=256)
    description: str | None = None
    parameters: dict[str, Any] | None = None
    # OpenAI's switch for schema-constrained arguments: an instruction to the API, not part of the tool
    # the model reads, so it is not rendered (AutoGen sends `strict: false` where the SDK sends nothing)
    strict: bool | None = None


class ToolIn(_Lenient):
    type: Literal["function"] = "function"
    function: FunctionDefIn


class StreamOptionsIn(_Lenient):
    include_usage: bool = False


class ChatCompletionIn(Utf8Body):
    model_config = ConfigDict(extra="allow")

    model: str = Field(min_length=1, max_length=512)
    messages: list[MessageIn] = Field(min_length=1)
    tools: list[ToolIn] | None = None
    tool_choice: Literal["none", "auto", "required"] | dict[str, Any] | None = None
    n: int = Field(1, ge=1, le=_MAX_N)
    max_tokens: int | None = Field(None, ge=1)
    max_completion_tokens: int | None = Field(None, ge=1)
    temperature: float | None = Field(None, ge=0, le=2)
    top_p: float | None = Field(None, gt=0, le=1)
    stop: str | list[str] | None = None
    seed: int | None = Field(None, ge=-(2**63), lt=2**63)
    logprobs: bool | None = None
    top_logprobs: int | None = Field(None, ge=0, le=20)
    stream: bool | None = False
    stream_options: StreamOptionsIn | None = None

    @field_validator("stop")
    @classmethod
    def _at_most_four(cls, value: str | list[str] | None) -> str | list[str] | None:
        if isinstance(value, list) and len(value) > 4:
            raise ValueError("at most 4 stop sequences")
        return value


def to_chat_call(body: ChatCompletionIn, *, default_max_tokens: int) -> ChatCall:
    """Map the wire request onto the core's `ChatCall` (the one place OpenAI names are read)."""
    stop = (body.stop,) if isinstance(body.stop, str) else tuple(body.stop or ())
    max_tokens = body.max_completion_tokens or body.max_tokens or default_max_tokens
    params = SamplingParams(
        max_tokens=max_tokens,
        temperature=1.0 if body.temperature is None else body.temperature,
        top_p=1.0 if body.top_p is None else body.top_p,
        stop=tuple(s for s in stop if s),
        seed=body.seed,
    )
    tools = (
        [t.model_dump(exclude_none=True, exclude={"function": {"strict"}}) for t in body.tools] if body.tools else None
    )
    if body.tool_choice == "none":
        tools = None
    tool_required, tool_name = _tool_choice(body.tool_choice, tools)
    messages = [m.model_dump(exclude_none=True) for m in body.messages]
    echo = {
        "model": body.model,
        "n": body.n,
        "max_tokens": max_tokens,
        "temperature": params.temperature,
        "top_p": params.top_p,
        "stop": list(params.stop),
        "seed": body.seed,
        "stream": bool(body.stream),
        "tool_choice": body.tool_choice,
    }
    return ChatCall(messages, tools, body.n, params, echo, tool_required=tool_required, tool_name=tool_name)


def _tool_choice(choice: str | dict[str, Any] | None, tools: list[dict[str, Any]] | None) -> tuple[bool, str | None]:
    """(a tool call is required, the function it must call) from `tool_choice`, checked against `tools`."""
    if choice is None or choice in ("auto", "none"):
        return False, None
    if not tools:
        raise InvalidRequest("tool_choice 'required' or a named function needs tools", param="tool_choice")
    if choice == "required":
        return True, None
    function = choice.get("function") if isinstance(choice, dict) and choice.get("type") == "function" else None
    name = function.get("name") if isinstance(function, dict) else None
    if not isinstance(name, str):
        raise InvalidRequest(
            'tool_choice must be "none", "auto", "required" or {"type": "function", "function": {"name": ...}}',
            param="tool_choice",
        )
    names = [t["function"]["name"] for t in tools]
    if name not in names:
        raise InvalidRequest(f"tool_choice names {name[:64]!r}, which is not among the tools", param="tool_choice")
    return True, name
