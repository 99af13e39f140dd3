"""The chat app over HTTP, as a script (or an attacker) would use it: login, sessions, CSRF, the stream."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from agentjet.chat.security import CSRF_HEADER, SESSION_COOKIE, Sessions
from agentjet.chat.targets import ChatTarget, _parse_line, parse_target, server_error
from tests.chat.conftest import LOGIN

MESSAGE = {"role": "user", "content": "hello"}


def logged_in(url: str) -> tuple[httpx.Client, str]:
    client = httpx.Client(base_url=url, timeout=30)
    reply = client.post("/login", data={"token": LOGIN})
    assert reply.status_code == 303 and reply.headers["location"] == "/"
    return client, client.get("/api/session").json()["csrf"]


def events(reply: httpx.Response) -> list[dict[str, Any]]:
    return [json.loads(line[6:]) for line in reply.text.split("\n\n") if line.startswith("data: ")]


def test_a_reply_streams_from_two_policies_at_once_and_never_trains(
    policies: Callable[..., list[ChatTarget]], chat_app: Callable[..., str]
) -> None:
    targets = policies(base="Paris is the capital.", trained="It is Paris, of course!")
    client, csrf = logged_in(chat_app(targets))
    body = {"targets": ["base", "trained"], "messages": [MESSAGE], "temperature": 0.7, "max_tokens": 32, "seed": 3}
    reply = client.post("/api/chat", json=body, headers={CSRF_HEADER: csrf})
    assert reply.status_code == 200, reply.text
    got = events(reply)
    assert got[-1] == {"type": "all_done"}
    for target, text in (("base", "Paris is the capital."), ("trained", "It is Paris, of course!")):
        mine = [e for e in got if e.get("target") == target]
        tokens = [e["text"] for e in mine if e["type"] == "token"]
        assert len(tokens) > 1 and "".join(tokens) == text  # token by token, not one block
        (logprobs,) = [e for e in mine if e["type"] == "logprobs"]
        assert len(logprobs["tokens"]) == len(tokens) and all(t["logprob"] <= 0 for t in logprobs["tokens"])
        assert mine[-1] == {"target": target, "type": "done", "choice": 0, "finish_reason": "stop"}
    for target in targets:  # each call was an eval episode, aborted: nothing waits to be trained
        status = httpx.get(f"{target.url}/swarm/status", headers={"Authorization": f"Bearer {target.token}"}).json()
        assert status["episodes"] == {"in_flight": 0, "finished": 0, "aborted": 1, "reclaimed": 0}, status
        assert status["pool"]["open_tasks"] == 0 and status["calls_total"] == 1


def test_n_choices_stream_side_by_side(policies: Callable[..., list[ChatTarget]], chat_app: Callable[..., str]) -> None:
    client, csrf = logged_in(chat_app(policies(delay_s=0.0, base="one reply")))
    reply = client.post(
        "/api/chat", json={"targets": ["base"], "messages": [MESSAGE], "n": 3}, headers={CSRF_HEADER: csrf}
    )
    done = [e for e in events(reply) if e["type"] == "done"]
    assert sorted(e["choice"] for e in done) == [0, 1, 2]


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("get", "/api/session", None),
        ("post", "/api/chat", {"targets": ["base"], "messages": [MESSAGE]}),
        ("post", "/logout", None),
    ],
)
def test_no_login_no_data(
    policies: Callable[..., list[ChatTarget]], chat_app: Callable[..., str], method: str, path: str, body: Any
) -> None:
    url = chat_app(policies(base="secret reply"))
    reply = httpx.request(method, f"{url}{path}", json=body)
    assert reply.status_code == 401 and "secret" not in reply.text
    forged = httpx.request(method, f"{url}{path}", json=body, cookies={SESSION_COOKIE: "made-up"})
    assert forged.status_code == 401
    page = httpx.get(url)
    assert page.status_code == 303 and page.headers["location"] == "/login"


def test_a_wrong_login_token_gets_no_session(
    policies: Callable[..., list[ChatTarget]], chat_app: Callable[..., str]
) -> None:
    url = chat_app(policies(base="x"))
    reply = httpx.post(f"{url}/login", data={"token": LOGIN + "x"})
    assert reply.status_code == 303 and reply.headers["location"] == "/login?failed=1"
    assert SESSION_COOKIE not in reply.cookies and LOGIN not in reply.headers["location"]


def test_the_session_cookie_is_httponly_and_samesite_strict(
    policies: Callable[..., list[ChatTarget]], chat_app: Callable[..., str]
) -> None:
    reply = httpx.post(f"{chat_app(policies(base='x'))}/login", data={"token": LOGIN})
    cookie = reply.headers["set-cookie"].lower()
    assert "httponly" in cookie and "samesite=strict" in cookie and LOGIN.lower() not in cookie


@pytest.mark.parametrize("csrf", [None, "", "wrong-token"])
def test_a_mutating_request_without_the_csrf_token_is_refused(
    policies: Callable[..., list[ChatTarget]], chat_app: Callable[..., str], csrf: str | None
) -> None:
    client, _ = logged_in(chat_app(policies(base="x")))
    headers = {} if csrf is None else {CSRF_HEADER: csrf}
    reply = client.post("/api/chat", json={"targets": ["base"], "messages": [MESSAGE]}, headers=headers)
    assert reply.status_code == 403 and "data:" not in reply.text
    assert client.post("/logout", headers=headers).status_code == 403


def test_a_post_from_another_origin_is_refused(
    policies: Callable[..., list[ChatTarget]], chat_app: Callable[..., str]
) -> None:
    client, csrf = logged_in(chat_app(policies(base="x")))
    headers = {CSRF_HEADER: csrf, "Origin": "http://evil.example"}
    assert (
        client.post("/api/chat", json={"targets": ["base"], "messages": [MESSAGE]}, headers=headers).status_code == 403
    )
    assert (
        httpx.post(
            f"{client.base_url}/login", data={"token": LOGIN}, headers={"Origin": "http://evil.example"}
        ).status_code
        == 403
    )


@pytest.mark.parametrize(
    "body",
    [
        {"targets": ["nope"], "messages": [MESSAGE]},
        {"targets": [], "messages": [MESSAGE]},
        {"targets": ["base"], "messages": []},
        {"targets": ["base"], "messages": [{"role": "tool", "content": "x"}]},
        {"targets": ["base"], "messages": [MESSAGE], "temperature": -1},
        {"targets": ["base"], "messages": [MESSAGE], "n": 99},
        {"targets": ["base"], "messages": [MESSAGE], "max_tokens": 0},
        {"targets": "base", "messages": "hi"},
    ],
)
def test_bad_chat_requests_get_a_4xx(
    policies: Callable[..., list[ChatTarget]], chat_app: Callable[..., str], body: dict[str, Any]
) -> None:
    client, csrf = logged_in(chat_app(policies(base="x")))
    reply = client.post("/api/chat", json=body, headers={CSRF_HEADER: csrf})
    assert reply.status_code == 422, reply.text
    assert (
        client.post(
            "/api/chat", content=b"{not json", headers={CSRF_HEADER: csrf, "Content-Type": "application/json"}
        ).status_code
        == 422
    )


def test_a_server_that_is_down_is_one_error_event(chat_app: Callable[..., str], free_port: int) -> None:
    client, csrf = logged_in(chat_app([ChatTarget("gone", f"http://127.0.0.1:{free_port}", "t" * 24)]))
    got = events(
        client.post("/api/chat", json={"targets": ["gone"], "messages": [MESSAGE]}, headers={CSRF_HEADER: csrf})
    )
    assert [e["type"] for e in got] == ["error", "all_done"] and got[0]["message"].startswith("gone: ")


def test_pages_carry_a_strict_content_security_policy(
    policies: Callable[..., list[ChatTarget]], chat_app: Callable[..., str]
) -> None:
    url = chat_app(policies(base="x"))
    headers = httpx.get(f"{url}/login").headers
    assert "script-src 'self'" in headers["content-security-policy"] and headers["x-frame-options"] == "DENY"
    assert httpx.get(f"{url}/static/../web.py").status_code == 404


def test_the_page_never_sees_a_server_token(
    policies: Callable[..., list[ChatTarget]], chat_app: Callable[..., str]
) -> None:
    targets = policies(base="x")
    client, _ = logged_in(chat_app(targets))
    session = client.get("/api/session").text
    assert targets[0].token is not None and targets[0].token not in session and targets[0].url in session


@pytest.mark.parametrize(
    ("spec", "error"),
    [
        ("base", "NAME=URL"),
        ("=http://x", "NAME=URL"),
        ("a b=http://x", "NAME=URL"),
        ("base=ftp://x", "http://"),
        ("base=127.0.0.1:8710", "http://"),
    ],
)
def test_bad_server_specs_are_one_sentence(spec: str, error: str) -> None:
    with pytest.raises(ValueError, match=error):
        parse_target(spec, {})


def test_a_server_spec_takes_its_own_token_else_the_default() -> None:
    assert parse_target("a=http://h:1/", {"a": "mine"}, "default") == ChatTarget("a", "http://h:1", "mine")
    assert parse_target("b=https://h", {"a": "mine"}, "default").token == "default"


@pytest.mark.parametrize(
    ("line", "types"),
    [
        ("", []),
        (": keep-alive", []),
        ("data: [DONE]", []),
        ('data: {"error": {"message": "boom"}}', ["error"]),
        ('data: {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop", "logprobs": null}]}', ["done"]),
        ('data: {"choices": [{"index": 1, "delta": {"content": "hi"}, "finish_reason": null}]}', ["token"]),
        (
            'data: {"choices": [{"index": 0, "delta": {}, "finish_reason": "length", "logprobs": {"content": []}}]}',
            ["logprobs", "done"],
        ),
        (
            'data: {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop",'
            ' "logprobs": {"content": [{"token": "a", "logprob": -0.5}]}}]}',
            ["logprobs", "done"],
        ),
    ],
)
def test_stream_lines_become_page_events(line: str, types: list[str]) -> None:
    assert [e["type"] for e in _parse_line(line)] == types


def test_sessions_expire_and_are_bounded() -> None:
    sessions = Sessions(LOGIN, ttl_s=0.0, limit=2)
    first = sessions.login(LOGIN)
    assert first is not None and sessions.find(first.session_id) is None  # expired at once
    sessions = Sessions(LOGIN, limit=2)
    made = [sessions.login(LOGIN) for _ in range(3)]
    assert sessions.find(made[0].session_id) is None and sessions.find(made[2].session_id) is not None  # type: ignore[union-attr]
    with pytest.raises(ValueError, match="16 characters"):
        Sessions("short")


@pytest.mark.parametrize("host", ["evil.example", "evil.example:8720", "10.0.0.1:8720", "127.0.0.1.evil.example"])
def test_only_loopback_host_names_are_answered(
    policies: Callable[..., list[ChatTarget]], chat_app: Callable[..., str], host: str
) -> None:
    url = chat_app(policies(base="x"))
    assert httpx.get(f"{url}/login", headers={"Host": host}).status_code == 400  # a DNS-rebinding page gets nothing
    port = url.rsplit(":", 1)[1]
    assert httpx.get(f"{url}/login", headers={"Host": f"localhost:{port}"}).status_code == 200


def test_login_guessing_is_throttled(policies: Callable[..., list[ChatTarget]], chat_app: Callable[..., str]) -> None:
    url = chat_app(policies(base="x"))
    for _ in range(10):
        assert httpx.post(f"{url}/login", data={"token": "guess-guess-guess"}).status_code == 303
    assert httpx.post(f"{url}/login", data={"token": "guess-guess-guess"}).status_code == 429
    assert httpx.post(f"{url}/login", data={"token": LOGIN}).status_code == 429  # even the right one, for a minute


def test_large_or_undeclared_bodies_are_refused(
    policies: Callable[..., list[ChatTarget]], chat_app: Callable[..., str]
) -> None:
    client, csrf = logged_in(chat_app(policies(base="x")))
    huge = {"targets": ["base"], "messages": [{"role": "user", "content": "x" * 90_000}] * 20}
    assert client.post("/api/chat", json=huge, headers={CSRF_HEADER: csrf}).status_code == 413

    def chunks() -> Any:
        yield b'{"targets": ["base"], '
        yield b'"messages": [{"role": "user", "content": "hi"}]}'

    chunked = client.post(
        "/api/chat", content=chunks(), headers={CSRF_HEADER: csrf, "Content-Type": "application/json"}
    )
    assert chunked.status_code == 411


@pytest.mark.parametrize(
    ("body", "sentence"),
    [
        (
            '{"error": {"message": "context_length_exceeded: too long", "type": "invalid_request_error"}}',
            "context_length_exceeded: too long",
        ),
        ('{"detail": "log in first"}', "log in first"),
        ("<html>bad gateway</html>", "<html>bad gateway</html>"),
        ('["odd"]', "['odd']"),
        ("x" * 500, "x" * 300),
    ],
)
def test_a_servers_error_body_becomes_its_sentence(body: str, sentence: str) -> None:
    assert server_error(body) == sentence
