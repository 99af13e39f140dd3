"""The chat call through LangChain's `ChatOpenAI` (its `seed=` reaches the server)."""

from __future__ import annotations

from langchain_core.messages import BaseMessage, convert_to_messages
from langchain_openai import ChatOpenAI
from pydantic import SecretStr

from agentjet.tasks.base import Endpoint
from agentjet.tasks.frameworks import ChatRequest

__all__ = ["chat_model", "complete", "reply_text", "to_messages"]


def chat_model(endpoint: Endpoint, request: ChatRequest) -> ChatOpenAI:
    """A `ChatOpenAI` bound to the episode and the request's sampling knobs (LangGraph uses it too)."""
    return ChatOpenAI(
        base_url=endpoint.base_url,
        api_key=SecretStr(endpoint.api_key),
        model=endpoint.model,
        temperature=request.temperature,
        max_tokens=request.max_tokens,  # an alias of max_completion_tokens: the server reads either
        seed=request.seed,
        max_retries=0,
        timeout=request.timeout_s,
    )


def to_messages(request: ChatRequest) -> list[BaseMessage]:
    return convert_to_messages([dict(m) for m in request.messages])


def reply_text(message: BaseMessage) -> str:
    return message.content if isinstance(message.content, str) else message.text


def complete(endpoint: Endpoint, request: ChatRequest) -> str:
    return reply_text(chat_model(endpoint, request).invoke(to_messages(request)))
