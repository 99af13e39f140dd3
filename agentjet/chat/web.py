"""`agentjet chat`'s web app: the login, playground and inspector pages and their API routes.

Pages are static files (`static/`): the page script builds every reply with `textContent`, so model
output is text, never markup, and the Content-Security-Policy allows scripts from this origin only
(no inline script, no other host). `/api/session` hands the page its CSRF token and the targets'
names; `/api/chat` fans one conversation out to the chosen targets and streams their events back
as one SSE stream, each event tagged with its target; `/api/episodes/{target}[/{id}]` read a
server's journal for the inspector (with the token held here).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from importlib import resources
from typing import Any
from urllib.parse import parse_qs

from fastapi import FastAPI, HTTPException, Request, Response
from fastapi.responses import FileResponse, JSONResponse, RedirectResponse, StreamingResponse
from pydantic import BaseModel, Field

from agentjet.chat.assistant import Assistant
from agentjet.chat.assistant_llm import LLMAssistant
from agentjet.chat.episodes import InspectorError, get_episode, list_episodes
from agentjet.chat.guards import LoginThrottle, refuse
from agentjet.chat.security import CSRF_HEADER, SESSION_COOKIE, Session, Sessions
from agentjet.chat.targets import ChatRequest, ChatTarget, PolicyClients

__all__ = ["create_chat_app"]

_STATIC = resources.files("agentjet.chat") / "static"
_SSE = "text/event-stream"
_STATIC_FILES = {
    "common.js": "text/javascript",
    "playground.js": "text/javascript",
    "inspector.js": "text/javascript",
    "assistant.js": "text/javascript",
    "chat.css": "text/css",
}
_HEADERS = {
    "Content-Security-Policy": "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; "
    "connect-src 'self'; frame-ancestors 'none'; form-action 'self'; base-uri 'none'",
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "same-origin",  # with no-referrer, Chromium sends `Origin: null` on a form POST
    "Cache-Control": "no-store",
}


class AssistantMessage(BaseModel):
    message: str = Field(min_length=1, max_length=4000)


class AssistantAnswer(BaseModel):
    action_id: str = Field(min_length=1, max_length=64)
    approve: bool


def create_chat_app(
    targets: Sequence[ChatTarget],
    sessions: Sessions,
    *,
    assistant: Assistant | LLMAssistant | None = None,
    secure_cookie: bool = False,
    loopback: bool = True,
    max_body_bytes: int = 1 << 20,
) -> FastAPI:
    """The chat app over `targets` (by name), behind `sessions`' login; `assistant` answers `/assistant`.
    `loopback`: answer only loopback Host names (False when bound to another interface, `guards.py`)."""
    by_name = {t.name: t for t in targets}
    clients = PolicyClients()
    throttle = LoginThrottle()

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        yield
        await clients.aclose()

    app = FastAPI(title="agentjet chat", docs_url=None, redoc_url=None, openapi_url=None, lifespan=lifespan)

    @app.middleware("http")
    async def security_headers(request: Request, call_next: Callable[[Request], Awaitable[Response]]) -> Response:
        refused = refuse(request, loopback=loopback, max_body_bytes=max_body_bytes)
        if refused is not None:
            refused.headers.update(_HEADERS)
            return refused
        response = await call_next(request)
        response.headers.update(_HEADERS)
        return response

    def session_of(request: Request) -> Session | None:
        return sessions.find(request.cookies.get(SESSION_COOKIE))

    def page_for(request: Request, name: str) -> Response:
        """A page for a logged-in session, else the login page."""
        if session_of(request) is None:
            return RedirectResponse("/login", status_code=303)
        return _static_page(name)

    def require(request: Request, *, changes: bool) -> Session:
        session = session_of(request)
        if session is None:
            raise HTTPException(401, "log in first")
        if changes and not sessions.csrf_ok(session, request.headers.get(CSRF_HEADER)):
            raise HTTPException(403, f"missing or wrong {CSRF_HEADER}")
        return session

    @app.get("/login", response_model=None)
    async def login_page() -> FileResponse:
        return _static_page("login.html")

    @app.post("/login", response_model=None)
    async def login(request: Request) -> Response:
        client = request.client.host if request.client else "?"
        if throttle.blocked(client):
            raise HTTPException(429, "too many wrong login tokens: wait a minute")
        session = sessions.login(await _form_token(request))
        if session is None:
            throttle.failed(client)
            return RedirectResponse("/login?failed=1", status_code=303)
        response = RedirectResponse("/", status_code=303)
        response.set_cookie(
            SESSION_COOKIE, session.session_id, httponly=True, samesite="strict", secure=secure_cookie, path="/"
        )
        return response

    @app.post("/logout")
    async def logout(request: Request) -> Response:
        require(request, changes=True)
        sessions.logout(request.cookies.get(SESSION_COOKIE))
        response = JSONResponse({"logged_out": True})
        response.delete_cookie(SESSION_COOKIE, path="/")
        return response

    @app.get("/", response_model=None)
    async def playground_page(request: Request) -> Response:
        return page_for(request, "playground.html")

    @app.get("/inspector", response_model=None)
    async def inspector_page(request: Request) -> Response:
        return page_for(request, "inspector.html")

    @app.get("/assistant", response_model=None)
    async def assistant_page(request: Request) -> Response:
        return page_for(request, "assistant.html")

    @app.post("/api/assistant", response_model=None)
    async def ask(request: Request, body: AssistantMessage) -> StreamingResponse:
        session = require(request, changes=True)
        return StreamingResponse(_events(_assistant().answer(session.session_id, body.message)), media_type=_SSE)

    @app.post("/api/assistant/confirm", response_model=None)
    async def answer(request: Request, body: AssistantAnswer) -> StreamingResponse:
        session = require(request, changes=True)
        events = _assistant().confirm(session.session_id, body.action_id, body.approve)
        return StreamingResponse(_events(events), media_type=_SSE)

    @app.get("/api/assistant/figure", response_model=None)
    async def figure(request: Request, path: str) -> Response:
        require(request, changes=False)
        found = _assistant().figure(path)
        if found is None:
            raise HTTPException(404, "no such figure")
        return FileResponse(str(found), media_type="image/png")

    def _assistant() -> Assistant | LLMAssistant:
        if assistant is None:
            raise HTTPException(404, "this chat has no research assistant")
        return assistant

    @app.get("/api/episodes/{target}")
    async def episodes(request: Request, target: str) -> dict[str, Any]:
        require(request, changes=False)
        return await _inspect(list_episodes(_target(target), dict(request.query_params)))

    @app.get("/api/episodes/{target}/{episode_id}")
    async def episode(request: Request, target: str, episode_id: str) -> dict[str, Any]:
        require(request, changes=False)
        return await _inspect(get_episode(_target(target), episode_id))

    def _target(name: str) -> ChatTarget:
        if name not in by_name:
            raise HTTPException(404, f"unknown target {name[:40]!r}; known: {', '.join(by_name)}")
        return by_name[name]

    @app.get("/static/{name}", response_model=None)
    async def static_file(name: str) -> Response:
        if name not in _STATIC_FILES:
            raise HTTPException(404, "no such file")
        return Response((_STATIC / name).read_bytes(), media_type=_STATIC_FILES[name])

    @app.get("/favicon.ico", response_model=None)
    async def favicon() -> Response:
        return Response(status_code=204)

    @app.get("/api/session")
    async def session_info(request: Request) -> dict[str, Any]:
        session = require(request, changes=False)
        mode = None if assistant is None else "offline" if assistant.offline else "llm"
        return {"csrf": session.csrf, "targets": [t.describe() for t in targets], "assistant": mode}

    @app.post("/api/chat", response_model=None)
    async def chat(request: Request, body: ChatRequest) -> StreamingResponse:
        require(request, changes=True)
        if unknown := sorted(set(body.targets) - set(by_name)):
            raise HTTPException(422, f"unknown target {', '.join(unknown)}; known: {', '.join(by_name)}")
        chosen = [by_name[name] for name in dict.fromkeys(body.targets)]
        return StreamingResponse(_fan_out(clients, chosen, body.body()), media_type=_SSE)

    return app


async def _inspect(read: Awaitable[dict[str, Any]]) -> dict[str, Any]:
    try:
        return await read
    except InspectorError as exc:
        raise HTTPException(exc.status if 400 <= exc.status < 500 else 502, str(exc)) from exc


async def _form_token(request: Request) -> str:
    """The `token` field of the login form (urlencoded; no multipart parser needed for one field)."""
    body = await request.body()
    if len(body) > 4096:
        raise HTTPException(413, "the login form is too large")
    values = parse_qs(body.decode("utf-8", "replace"), max_num_fields=4).get("token", [""])
    return values[0]


def _static_page(name: str) -> FileResponse:
    return FileResponse(str(_STATIC / name), media_type="text/html")


async def _fan_out(clients: PolicyClients, targets: Sequence[ChatTarget], body: dict[str, Any]) -> AsyncIterator[bytes]:
    """Every target's events as they come, tagged `target`, then one `all_done` event."""
    queue: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue()

    async def pump(target: ChatTarget) -> None:
        try:
            async for event in clients.stream_reply(target, body):
                await queue.put({"target": target.name, **event})
        finally:
            await queue.put(None)

    tasks = [asyncio.create_task(pump(t)) for t in targets]
    try:
        running = len(tasks)
        while running:
            event = await queue.get()
            if event is None:
                running -= 1
                continue
            yield _sse(event)
        yield _sse({"type": "all_done"})
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


async def _events(source: AsyncIterator[dict[str, Any]]) -> AsyncIterator[bytes]:
    async for event in source:
        yield _sse(event)
    yield _sse({"type": "all_done"})


def _sse(event: dict[str, Any]) -> bytes:
    return f"data: {json.dumps(event, ensure_ascii=False)}\n\n".encode()
