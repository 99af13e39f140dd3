"""One chat call, written four ways: the `openai` SDK, LangChain, LangGraph and raw `httpx`.

Each module sends the same request (`ChatRequest`: messages, temperature, max_tokens, seed) to
an episode's OpenAI-compatible endpoint and returns the reply's text. The server records the
tokens, so for the same request and seed all four give the same captured token sequences: the
framework an agent is written in does not change what is trained (tests/tasks, the identity
test). The framework libraries are imported only when their module is used (`agents` extra).

httpx_raw.py        The chat call as one raw `httpx` POST of the OpenAI wire format.
langchain_chat.py   The chat call through LangChain's `ChatOpenAI` (its `seed=` reaches the server).
langgraph_graph.py  The chat call as a LangGraph graph: one `StateGraph` node calling LangChain's `ChatOpenAI`.
openai_sdk.py       The chat call through the official `openai` SDK.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal, get_args

from agentjet.tasks.base import Endpoint

__all__ = ["FRAMEWORKS", "ChatRequest", "Framework", "check_framework", "complete"]

Framework = Literal["openai", "langchain", "langgraph", "httpx"]
FRAMEWORKS: tuple[Framework, ...] = get_args(Framework)
_MODULES: Mapping[Framework, str] = {
    "openai": "agentjet.tasks.frameworks.openai_sdk",
    "langchain": "agentjet.tasks.frameworks.langchain_chat",
    "langgraph": "agentjet.tasks.frameworks.langgraph_graph",
    "httpx": "agentjet.tasks.frameworks.httpx_raw",
}


@dataclass(frozen=True)
class ChatRequest:
    """What every framework sends: plain-text messages and the sampling knobs, nothing else."""

    messages: tuple[Mapping[str, str], ...]
    temperature: float
    max_tokens: int
    seed: int
    timeout_s: float = 600.0


def check_framework(name: str) -> Framework:
    """`name` as a `Framework`, or a ValueError listing the choices."""
    for framework in FRAMEWORKS:
        if name == framework:
            return framework
    raise ValueError(f"framework must be one of {', '.join(FRAMEWORKS)}; got {name!r}")


def complete(framework: str, endpoint: Endpoint, request: ChatRequest) -> str:
    """Send `request` through `framework`; the reply's text ("" when it has none)."""
    module = importlib.import_module(_MODULES[check_framework(framework)])
    text: str = module.complete(endpoint, request)
    return text
