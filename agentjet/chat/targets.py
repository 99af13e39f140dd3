"""The policies the playground talks to, and one streamed reply from one of them.

A target is a live swarm server (`NAME=URL`, its token held here, never sent to the page). Every
playground message is one **eval** episode that is aborted when the reply ends: the server
samples it like any other call, but it is never training data. `PolicyClients.stream_reply` turns
the server's OpenAI SSE stream into the page's small event dicts: `token` (text as it is sampled),
`logprobs` (each sampled token and its logprob, at the choice's end), `done` (the finish reason),
`error`.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import httpx
from pydantic import BaseModel, Field

from agentjet.core import AgentJetError, AsyncSwarmClient

__all__ = ["ChatRequest", "ChatTarget", "Message", "PolicyClients", "parse_target", "server_error"]

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,39}$")
_TASK_ID = "chat-playground"


@dataclass(frozen=True)
class ChatTarget:
    """A live swarm server by the name the page shows; `token` stays on the chat server's side."""

    name: str
    url: str
    token: str | None = field(default=None, repr=False)

    def describe(self) -> dict[str, str]:
        """What the page may know of it: the name and the URL, never the token."""
        return {"name": self.name, "url": self.url}


def parse_target(spec: str, tokens: Mapping[str, str], default_token: str | None = None) -> ChatTarget:
    """`NAME=URL` (`base=http://127.0.0.1:8710`) -> a target whose token is `tokens[NAME]`, else
    `default_token`."""
    name, sep, url = spec.partition("=")
    name, url = name.strip(), url.strip()
    if not sep or not _NAME.match(name):
        raise ValueError(f"--server {spec!r}: expected NAME=URL with a short name (letters, digits, . _ -)")
    if not url.startswith(("http://", "https://")):
        raise ValueError(f"--server {spec!r}: the URL must start with http:// or https://")
    return ChatTarget(name=name, url=url.rstrip("/"), token=tokens.get(name, default_token))


class Message(BaseModel):
    role: str = Field(pattern="^(system|user|assistant)$")
    content: str = Field(max_length=100_000)


class ChatRequest(BaseModel):
    """One playground send: the conversation, the targets to fan it out to, the sampling."""

    targets: list[str] = Field(min_length=1, max_length=8)
    messages: list[Message] = Field(min_length=1, max_length=200)
    temperature: float = Field(1.0, ge=0.0, le=2.0)
    top_p: float = Field(1.0, gt=0.0, le=1.0)
    max_tokens: int = Field(128, ge=1, le=4096)
    seed: int | None = Field(None, ge=0, le=2**31 - 1)
    n: int = Field(1, ge=1, le=8)

    def body(self) -> dict[str, Any]:
        """The OpenAI request every target gets (streamed, with logprobs)."""
        body: dict[str, Any] = {
            "model": "policy",
            "messages": [m.model_dump() for m in self.messages],
            "temperature": self.temperature,
            "top_p": self.top_p,
            "max_tokens": self.max_tokens,
            "n": self.n,
            "stream": True,
            "logprobs": True,
        }
        if self.seed is not None:
            body["seed"] = self.seed
        return body


class PolicyClients:
    """One swarm client and one HTTP client per target for the chat's life, made on first use.

    A new pair per message cost ~45 ms here (each builds its TLS context) before the request went out:
    the first token waited for it (`agentjet bench chat`: the page's p50 was 2x the SDK's)."""

    def __init__(self, *, timeout_s: float = 600.0) -> None:
        self._timeout_s = timeout_s
        self._open: dict[str, tuple[AsyncSwarmClient, httpx.AsyncClient]] = {}

    def _clients(self, target: ChatTarget) -> tuple[AsyncSwarmClient, httpx.AsyncClient]:
        if target.name not in self._open:
            swarm = AsyncSwarmClient(target.url, token=target.token, retries=1)
            self._open[target.name] = (swarm, httpx.AsyncClient(timeout=self._timeout_s))
        return self._open[target.name]

    async def stream_reply(self, target: ChatTarget, body: dict[str, Any]) -> AsyncIterator[dict[str, Any]]:
        """The events of one target's reply to `body`, inside an eval episode that is aborted at the end."""
        swarm, http = self._clients(target)
        try:
            episode = await swarm.begin_episode(_TASK_ID, kind="eval", agent="chat")
        except AgentJetError as exc:
            yield {"type": "error", "message": f"{target.name}: {exc}"}
            return
        try:
            async for event in _events(http, episode.base_url, episode.api_key, body):
                yield event
        finally:
            try:
                await episode.abort()
            except AgentJetError:
                pass  # already closed (reclaimed, server gone): nothing of it can train either way

    async def aclose(self) -> None:
        for swarm, http in self._open.values():
            await swarm.close()
            await http.aclose()
        self._open.clear()


async def _events(
    http: httpx.AsyncClient, base_url: str, key: str, body: dict[str, Any]
) -> AsyncIterator[dict[str, Any]]:
    headers = {"Authorization": f"Bearer {key}"}
    try:
        async with http.stream("POST", f"{base_url}/chat/completions", json=body, headers=headers) as reply:
            if reply.status_code != 200:
                text = (await reply.aread()).decode("utf-8", "replace")
                yield {"type": "error", "message": f"HTTP {reply.status_code}: {server_error(text)}"}
                return
            async for line in reply.aiter_lines():
                for event in _parse_line(line):
                    yield event
    except httpx.HTTPError as exc:
        yield {"type": "error", "message": f"the server stopped answering: {exc.__class__.__name__}"}


def server_error(text: str) -> str:
    """The sentence of a server's error body (OpenAI `{"error": {"message"}}` or FastAPI `{"detail"}`),
    else the body itself; at most 300 characters."""
    try:
        body = json.loads(text)
    except ValueError:
        return text[:300]
    error = body.get("error") if isinstance(body, dict) else None
    if isinstance(error, dict):
        return str(error.get("message", error))[:300]
    return str(body.get("detail", body) if isinstance(body, dict) else body)[:300]


def _parse_line(line: str) -> Sequence[dict[str, Any]]:
    """One SSE line of the server's stream -> the page's events (none for keep-alives and `[DONE]`)."""
    if not line.startswith("data: ") or line == "data: [DONE]":
        return ()
    chunk = json.loads(line.removeprefix("data: "))
    if "error" in chunk:
        return ({"type": "error", "message": str(chunk["error"].get("message", "stream failed"))[:300]},)
    events: list[dict[str, Any]] = []
    for choice in chunk.get("choices", []):
        index = int(choice.get("index", 0))
        if text := choice.get("delta", {}).get("content"):
            events.append({"type": "token", "choice": index, "text": text})
        if logprobs := choice.get("logprobs"):
            tokens = [{"token": e["token"], "logprob": e["logprob"]} for e in logprobs.get("content") or []]
            events.append({"type": "logprobs", "choice": index, "tokens": tokens})
        if choice.get("finish_reason"):
            events.append({"type": "done", "choice": index, "finish_reason": choice["finish_reason"]})
    return events
