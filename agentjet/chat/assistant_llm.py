"""The research assistant with an LLM: a LangGraph tool-calling agent over the offline assistant's tools.

The tools are the offline assistant's (`Assistant.answer_intent`: the CLI's own commands), so an
LLM changes how a message is understood, never what an action does: anything that changes
something still ends the turn with a `confirm` event, and only the user's yes runs it
(`Assistant.confirm`, the same path as offline). The graph: `agent` (one `complete_with_tools`
call) -> `tools` (run each call, its output back to the agent as the tool result) -> `agent` ...,
at most `max_rounds` times; it ends on a reply without tool calls or on a question to confirm.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, TypedDict

from agentjet.chat.assistant import HELP, Assistant, Event, Intent
from agentjet.llm.chat import ChatLLM, LLMError, ToolCall

__all__ = ["TOOLS", "LLMAssistant"]


def _tool(tool: str, description: str, properties: dict[str, str] | None = None) -> dict[str, Any]:
    props = properties or {}
    schema = {"type": "object", "properties": {k: {"type": "string", "description": v} for k, v in props.items()}}
    schema["required"] = list(props)
    return {"type": "function", "function": {"name": tool, "description": description, "parameters": schema}}


_NAME = {"name": "part of its name, or empty for the newest"}
TOOLS = [
    _tool(
        "vibe_plan",
        "Plan a vibe training run for a sentence and ask the user to start it.",
        {"sentence": "the request"},
    ),
    _tool("vibe_status", "How the vibe run started from this chat is going: state and latest output."),
    _tool("vibe_stop", "Ask the user to stop the vibe run started from this chat (it stays resumable)."),
    _tool("campaign_status", "The trial table of a campaign.", _NAME),
    _tool("campaign_stop", "Ask the user to stop a campaign.", _NAME),
    _tool("campaign_resume", "Ask the user to resume a campaign.", _NAME),
    _tool("campaign_report", "Ask the user to write a campaign's report.", _NAME),
    _tool("show_report", "Show a vibe run's report.md.", _NAME),
    _tool("compare_runs", "Compare two vibe runs' before/after outcomes.", {"a": "first run", "b": "second run"}),
    _tool("list_runs", "List the vibe runs and campaigns on disk."),
]
_NAMES = {t["function"]["name"] for t in TOOLS}
SYSTEM = (
    "You are AgentJet's research assistant. You help a researcher run vibe training runs and A3R campaigns "
    "through tools. Call a tool when the user asks for something a tool does; actions that change something "
    "are confirmed by the user after your turn, so call them directly. Answer briefly. " + HELP
)


class _State(TypedDict):
    session: str
    messages: list[dict[str, Any]]
    events: list[Event]
    rounds: int
    confirm: bool


class LLMAssistant:
    """The assistant of one chat when an LLM is configured; history kept per session."""

    offline = False

    def __init__(self, tools: Assistant, llm: ChatLLM, *, max_rounds: int = 4) -> None:
        self.tools, self.llm, self.max_rounds = tools, llm, max_rounds
        self._histories: dict[str, list[dict[str, Any]]] = {}
        self._graph = self._build()

    async def answer(self, session: str, message: str) -> AsyncIterator[Event]:
        history = self._histories.setdefault(session, [{"role": "system", "content": SYSTEM}])
        history.append({"role": "user", "content": message})
        try:
            final = await self._graph.ainvoke(
                {"session": session, "messages": list(history), "events": [], "rounds": 0, "confirm": False}
            )
        except LLMError as exc:
            yield {"type": "say", "text": f"The LLM failed: {exc}"}
            return
        self._histories[session] = final["messages"]
        for event in final["events"]:
            yield event

    def confirm(self, session: str, action_id: str, approve: bool) -> AsyncIterator[Event]:
        return self.tools.confirm(session, action_id, approve)

    def figure(self, relative: str) -> Path | None:
        return self.tools.figure(relative)

    def _build(self) -> Any:
        from langgraph.graph import END, START, StateGraph

        graph: Any = StateGraph(_State)
        graph.add_node("agent", self._agent)
        graph.add_node("tools", self._tools)
        graph.add_edge(START, "agent")
        graph.add_conditional_edges("agent", self._after_agent, {"tools": "tools", "end": END})
        graph.add_conditional_edges("tools", self._after_tools, {"agent": "agent", "end": END})
        return graph.compile()

    async def _agent(self, state: _State) -> dict[str, Any]:
        text, calls = await asyncio.to_thread(self.llm.complete_with_tools, state["messages"], TOOLS)
        message: dict[str, Any] = {"role": "assistant", "content": text}
        if calls:
            message["tool_calls"] = [_wire(c) for c in calls]
        events = [*state["events"], {"type": "say", "text": text}] if text else state["events"]
        return {"messages": [*state["messages"], message], "events": events, "rounds": state["rounds"] + 1}

    async def _tools(self, state: _State) -> dict[str, Any]:
        session = state["session"]
        messages, events, confirm = list(state["messages"]), list(state["events"]), False
        for call in state["messages"][-1].get("tool_calls", []):
            name, args = call["function"]["name"], json.loads(call["function"]["arguments"])
            produced: list[Event] = []
            if name in _NAMES:
                intent = Intent(name, {k: str(v) for k, v in args.items()})
                async for event in self.tools.answer_intent(session, _defaults(intent)):
                    produced.append(event)
            else:
                produced.append({"type": "say", "text": f"(the LLM asked for an unknown tool {name!r})"})
            events += produced
            confirm = confirm or any(e["type"] == "confirm" for e in produced)
            result = "\n".join(str(e.get("text") or e.get("question") or e.get("path", "")) for e in produced)[:8000]
            messages.append({"role": "tool", "tool_call_id": call["id"], "content": result or "(no output)"})
        return {"messages": messages, "events": events, "confirm": confirm}

    def _after_agent(self, state: _State) -> str:
        return "tools" if state["messages"][-1].get("tool_calls") else "end"

    def _after_tools(self, state: _State) -> str:
        return "end" if state["confirm"] or state["rounds"] >= self.max_rounds else "agent"


def _wire(call: ToolCall) -> dict[str, Any]:
    function = {"name": call.name, "arguments": json.dumps(call.arguments)}
    return {"id": call.call_id, "type": "function", "function": function}


_REQUIRED = {t["function"]["name"]: t["function"]["parameters"]["required"] for t in TOOLS}


def _defaults(intent: Intent) -> Intent:
    """The arguments a tool needs, empty where the LLM left one out."""
    return Intent(intent.tool, {**{k: "" for k in _REQUIRED.get(intent.tool, [])}, **intent.args})
