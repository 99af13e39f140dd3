"""The research assistant with an LLM (a scripted fake OpenAI endpoint): the LangGraph agent's turns."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from agentjet.chat.assistant import Assistant
from agentjet.chat.assistant_llm import LLMAssistant
from agentjet.chat.security import Sessions
from agentjet.chat.tools import Jobs
from agentjet.chat.web import create_chat_app
from agentjet.core.testing import serve_in_thread
from agentjet.llm.chat import resolve_llm
from tests.chat.test_assistant import DOCS, converse, session
from tests.vibe.fake_llm import FakeFailure, FakeLLM, serve_fake_llm


@pytest.fixture
def fake() -> Iterator[FakeLLM]:
    with serve_fake_llm() as running:
        yield running


@pytest.fixture
def url(fake: FakeLLM, tmp_path: Path) -> Iterator[str]:
    for name in ("arith-a", "arith-b"):
        (tmp_path / "vibe-runs" / name).mkdir(parents=True)
        for file in ("task.yaml", "run.json", "report.md"):
            shutil.copy(DOCS / "vibe-arithmetic" / file, tmp_path / "vibe-runs" / name / file)
    llm = resolve_llm(fake.url)
    assert llm is not None
    tools = Assistant(tmp_path, Jobs(tmp_path / "jobs", tmp_path), vibe_args=("--model", "tiny"))
    with serve_in_thread(
        create_chat_app([], Sessions("chat-login-token-0123456789"), assistant=LLMAssistant(tools, llm))
    ) as s:
        yield s.url
    tools.jobs.stop_all()


def call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"tool_calls": [{"name": name, "arguments": arguments}]}


def test_a_tool_result_goes_back_to_the_llm_which_answers(fake: FakeLLM, url: str) -> None:
    fake.push(call("compare_runs", a="arith-a", b="arith-b"), "Both runs went from 24/64 to 39/64: improved.")
    client, csrf = session(url)
    assert client.get("/api/session").json()["assistant"] == "llm"
    events = converse(client, csrf, "/api/assistant", {"message": "did my two arithmetic runs do the same?"})
    assert [e["type"] for e in events] == ["block", "say", "all_done"]
    assert "+23.4 (+6.1..+38.9)" in events[0]["text"] and events[1]["text"].startswith("Both runs")
    first, second = fake.requests
    assert {t["function"]["name"] for t in first["tools"]} >= {"vibe_plan", "campaign_status", "compare_runs"}
    tool_message = second["messages"][-1]
    assert tool_message["role"] == "tool" and "39/64" in tool_message["content"]


def test_an_action_that_changes_something_waits_for_the_users_yes(fake: FakeLLM, url: str, tmp_path: Path) -> None:
    fake.push(call("vibe_plan", sentence="train a small model to solve countdown"))
    client, csrf = session(url)
    events = converse(client, csrf, "/api/assistant", {"message": "I'd like a countdown solver, small"})
    assert [e["type"] for e in events] == ["say", "block", "confirm", "all_done"]
    assert "family         countdown" in events[1]["text"]
    assert len(fake.requests) == 1  # the turn ended on the question: the LLM did not go on without the user
    no = converse(client, csrf, "/api/assistant/confirm", {"action_id": events[2]["action_id"], "approve": False})
    assert "nothing was started" in no[0]["text"] and not (tmp_path / "jobs").exists()


def test_the_conversation_is_remembered_per_session(fake: FakeLLM, url: str) -> None:
    fake.push("Hello! I can plan runs.", "You asked me to say hello.")
    client, csrf = session(url)
    converse(client, csrf, "/api/assistant", {"message": "say hello"})
    converse(client, csrf, "/api/assistant", {"message": "what did I ask?"})
    contents = [m["content"] for m in fake.requests[1]["messages"]]
    assert contents[1:] == ["say hello", "Hello! I can plan runs.", "what did I ask?"]
    other, other_csrf = session(url)
    fake.push("A new conversation.")
    converse(other, other_csrf, "/api/assistant", {"message": "hi"})
    assert [m["content"] for m in fake.requests[2]["messages"]][1:] == ["hi"]


def test_an_llm_failure_or_an_unknown_tool_is_a_sentence(fake: FakeLLM, url: str) -> None:
    client, csrf = session(url)
    fake.push(FakeFailure(500, "provider down"))
    (failed, _) = converse(client, csrf, "/api/assistant", {"message": "hi"})
    assert failed["type"] == "say" and failed["text"].startswith("The LLM failed")
    fake.push(call("rm_rf", path="/"), "Sorry, I cannot do that.")
    events = converse(client, csrf, "/api/assistant", {"message": "delete everything"})
    assert "unknown tool 'rm_rf'" in events[0]["text"] and events[1]["text"] == "Sorry, I cannot do that."
    told = fake.requests[-1]["messages"][-1]
    assert told["role"] == "tool" and "unknown tool" in told["content"]  # the LLM hears it did not exist
    assert httpx.get(f"{url}/api/session").status_code == 401
