"""A scripted fake OpenAI-compatible LLM server on loopback, for the vibe LLM paths.

Real HTTP (FastAPI + uvicorn through `serve_in_thread`), so litellm's `openai/<model>` provider
with `api_base=fake.url` exercises the same code path as a real endpoint; nothing leaves the
machine. Replies come from a queue, in order; each entry is the reply text, a function of the
request's messages returning the text, or a `FakeFailure` (an HTTP error status). Every request
body is recorded in `fake.requests` so tests can assert what the prompt said.

    with serve_fake_llm(['{"family": "countdown"}']) as fake:
        llm = resolve_llm(fake.url)           # http://127.0.0.1:PORT/v1
        ...
        assert "TaskSpec" in fake.requests[0]["messages"][0]["content"]
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

from agentjet.core.testing import serve_in_thread

__all__ = ["FakeFailure", "FakeLLM", "Reply", "serve_fake_llm"]

Messages = list[dict[str, Any]]


@dataclass(frozen=True)
class FakeFailure:
    """A scripted HTTP error instead of a reply (e.g. 500, or 401 for a bad key)."""

    status: int = 500
    message: str = "scripted failure"


Reply = str | Callable[[Messages], str] | FakeFailure | dict[str, Any]  # a dict: {"tool_calls": [...]} (see _message)


@dataclass
class FakeLLM:
    """The running fake: its base URL (ending in /v1), the scripted queue and the recorded requests."""

    url: str = ""
    replies: deque[Reply] = field(default_factory=deque)
    requests: list[dict[str, Any]] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)
    default: Reply | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def push(self, *replies: Reply) -> None:
        """Queue more replies (answered after those already queued)."""
        with self._lock:
            self.replies.extend(replies)

    @property
    def prompts(self) -> list[str]:
        """The text of every request's messages joined, one string per request (for `in` asserts)."""
        return ["\n".join(str(m.get("content", "")) for m in r.get("messages", [])) for r in self.requests]

    def _next(self, body: dict[str, Any], headers: dict[str, str]) -> Reply | None:
        with self._lock:
            self.requests.append(body)
            self.headers.append(headers)
            if self.replies:
                return self.replies.popleft()
            return self.default


def _message(reply: str | dict[str, Any], n: int) -> tuple[dict[str, Any], str]:
    """A text reply, or `{"content": ..., "tool_calls": [{"name": ..., "arguments": {...}}]}` as OpenAI tool calls."""
    if isinstance(reply, str):
        return {"role": "assistant", "content": reply}, "stop"
    calls = [
        {
            "id": f"call-{n}-{i}",
            "type": "function",
            "function": {"name": c["name"], "arguments": json.dumps(c["arguments"])},
        }
        for i, c in enumerate(reply.get("tool_calls", []))
    ]
    message = {"role": "assistant", "content": reply.get("content"), "tool_calls": calls or None}
    return message, "tool_calls" if calls else "stop"


def _completion(model: str, reply: str | dict[str, Any], n: int) -> dict[str, Any]:
    message, finish = _message(reply, n)
    text = str(message.get("content") or "")
    prompt_tokens, completion_tokens = 10, max(1, len(text.split()))
    return {
        "id": f"chatcmpl-fake-{n}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }


def _app(fake: FakeLLM) -> FastAPI:
    app = FastAPI()

    @app.get("/v1/models")
    async def models() -> dict[str, Any]:
        return {"object": "list", "data": [{"id": "default", "object": "model", "owned_by": "fake"}]}

    @app.post("/v1/chat/completions")
    async def chat(request: Request) -> JSONResponse:
        body = await request.json()
        reply = fake._next(body, {k.lower(): v for k, v in request.headers.items()})
        if reply is None:
            return _error(500, "fake LLM: no scripted reply left (the test queued too few)")
        if isinstance(reply, FakeFailure):
            return _error(reply.status, reply.message)
        text = reply(body.get("messages", [])) if callable(reply) else reply
        return JSONResponse(_completion(str(body.get("model", "default")), text, len(fake.requests)))

    return app


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": {"message": message, "type": "fake_error", "code": status}}, status_code=status)


@contextmanager
def serve_fake_llm(replies: Iterable[Reply] = (), *, default: Reply | None = None) -> Iterator[FakeLLM]:
    """Serve a fake LLM answering `replies` in order (then `default`, else HTTP 500) on 127.0.0.1."""
    fake = FakeLLM(replies=deque(replies), default=default)
    with serve_in_thread(_app(fake)) as server:
        fake.url = f"{server.url}/v1"
        yield fake
