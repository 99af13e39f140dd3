"""One chat call, written six ways: the `openai` SDK, LangChain, LangGraph, raw `httpx`, AgentScope, AutoGen.

Each module sends the same request (`ChatRequest`: messages, temperature, max_tokens, seed) to
an episode's OpenAI-compatible endpoint and returns the reply's text. The server records the
tokens, so for the same request and seed all six give the same captured token sequences: the
framework an agent is written in does not change what is trained (tests/tasks, the identity
test). The framework libraries are imported only when their module is used (`agents` extra).

The tool-use family's turns (messages with tool calls and results, OpenAI `tools`) go through
`complete_with_tools`, which the openai SDK, AgentScope and AutoGen implement (`TOOL_FRAMEWORKS`).

agentscope_model.py The chat call through AgentScope 2's `OpenAIChatModel` (an `OpenAICredential` holds `base_url`).
autogen_client.py   The chat call through AutoGen's `OpenAIChatCompletionClient(base_url=..., model_info=...)`.
httpx_raw.py        The chat call as one raw `httpx` POST of the OpenAI wire format.
langchain_chat.py   The chat call through LangChain's `ChatOpenAI` (its `seed=` reaches the server).
langgraph_graph.py  The chat call as a LangGraph graph: one `StateGraph` node calling LangChain's `ChatOpenAI`.
openai_sdk.py       The chat call through the official `openai` SDK.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, get_args

from agentjet.tasks.base import Endpoint

__all__ = [
    "FRAMEWORKS",
    "TOOL_FRAMEWORKS",
    "ChatRequest",
    "Framework",
    "ToolTurn",
    "check_framework",
    "complete",
    "complete_with_tools",
]

Framework = Literal["openai", "langchain", "langgraph", "httpx", "agentscope", "autogen"]
FRAMEWORKS: tuple[Framework, ...] = get_args(Framework)
TOOL_FRAMEWORKS: tuple[Framework, ...] = ("openai", "agentscope", "autogen")
_MODULES: Mapping[Framework, str] = {
    "openai": "agentjet.tasks.frameworks.openai_sdk",
    "langchain": "agentjet.tasks.frameworks.langchain_chat",
    "langgraph": "agentjet.tasks.frameworks.langgraph_graph",
    "httpx": "agentjet.tasks.frameworks.httpx_raw",
    "agentscope": "agentjet.tasks.frameworks.agentscope_model",
    "autogen": "agentjet.tasks.frameworks.autogen_client",
}


@dataclass(frozen=True)
class ChatRequest:
    """What every framework sends: plain-text messages and the sampling knobs, nothing else."""

    messages: tuple[Mapping[str, str], ...]
    temperature: float
    max_tokens: int
    seed: int
    timeout_s: float = 600.0


@dataclass(frozen=True)
class ToolTurn:
    """One assistant turn of a tool-using agent: its text and its tool calls `(id, name, arguments JSON)`."""

    text: str
    calls: tuple[tuple[str, str, str], ...]


def check_framework(name: str, choices: Sequence[Framework] = FRAMEWORKS) -> Framework:
    """`name` as a `Framework` among `choices`, or a ValueError listing them."""
    for framework in choices:
        if name == framework:
            return framework
    raise ValueError(f"framework must be one of {', '.join(choices)}; got {name!r}")


def complete(framework: str, endpoint: Endpoint, request: ChatRequest) -> str:
    """Send `request` through `framework`; the reply's text ("" when it has none)."""
    module = importlib.import_module(_MODULES[check_framework(framework)])
    text: str = module.complete(endpoint, request)
    return text


def complete_with_tools(
    framework: str,
    endpoint: Endpoint,
    request: ChatRequest,
    messages: Sequence[Mapping[str, Any]],
    tools: Sequence[Mapping[str, Any]],
    tool_choice: str = "auto",
) -> ToolTurn:
    """One turn of a tool-using agent through `framework`: `messages` (OpenAI format, tool calls and
    results included) replace `request.messages`; `tools` are OpenAI function tools; `tool_choice`
    "required" asks for a tool call, in each framework's own words."""
    module = importlib.import_module(_MODULES[check_framework(framework, TOOL_FRAMEWORKS)])
    turn: ToolTurn = module.complete_with_tools(endpoint, request, messages, tools, tool_choice)
    return turn
