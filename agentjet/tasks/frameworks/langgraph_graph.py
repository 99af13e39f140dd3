"""The chat call as a LangGraph graph: one `StateGraph` node calling LangChain's `ChatOpenAI`."""

from __future__ import annotations

from typing import Any, cast

from langchain_core.messages import AnyMessage
from langgraph.graph import END, START, MessagesState, StateGraph

from agentjet.tasks.base import Endpoint
from agentjet.tasks.frameworks import ChatRequest
from agentjet.tasks.frameworks.langchain_chat import chat_model, reply_text, to_messages

__all__ = ["complete"]


def complete(endpoint: Endpoint, request: ChatRequest) -> str:
    model = chat_model(endpoint, request)

    def llm(state: MessagesState) -> dict[str, Any]:
        return {"messages": [model.invoke(state["messages"])]}

    graph = StateGraph(MessagesState)
    graph.add_node("llm", llm)
    graph.add_edge(START, "llm")
    graph.add_edge("llm", END)
    messages = cast(list[AnyMessage], to_messages(request))  # convert_to_messages returns concrete types
    final = graph.compile().invoke(MessagesState(messages=messages))
    return reply_text(final["messages"][-1])
