"""The episode inspector: a server's journal through the chat, in HTTP and in the browser (fork included)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx
import pytest

from agentjet.chat.targets import ChatTarget
from agentjet.core import SwarmClient
from tests.chat.conftest import LOGIN
from tests.chat.test_chat_browser import log_in
from tests.chat.test_chat_http import logged_in

XSS_USER = '<script>window.__xss = 1</script><img src=x onerror="window.__xss = 2">question one'


def record_episode(target: ChatTarget, questions: list[str], *, reward: float = 1.0) -> str:
    """A multi-turn train episode on `target`: each question after the replies so far; ended with `reward`."""
    with SwarmClient(target.url, token=target.token) as client:
        episode = client.begin_episode("inspected-task")
        messages: list[dict[str, Any]] = []
        for question in questions:
            messages.append({"role": "user", "content": question})
            reply = httpx.post(
                f"{episode.base_url}/chat/completions",
                json={"model": "tiny", "messages": messages, "max_tokens": 12},
                headers={"Authorization": f"Bearer {episode.api_key}"},
            ).json()
            messages.append(reply["choices"][0]["message"])
        episode.end(reward)
    return episode.episode_id


def fork_scene(
    policies: Callable[..., list[ChatTarget]], first_question: str
) -> tuple[ChatTarget, ChatTarget, str, list[str]]:
    """A 3-turn episode recorded on `recorded`, and `other`, whose prompts land in the list returned."""
    seen: list[str] = []

    def other_policy(prompt: str) -> str:
        seen.append(prompt)
        return "The other policy's turn two."

    recorded, other = policies(delay_s=0.0, recorded=["First answer.", "Second answer.", "Third."], other=other_policy)
    episode_id = record_episode(recorded, [first_question, "question two", "question three"])
    return recorded, other, episode_id, seen


def test_the_inspector_reads_a_servers_journal(
    policies: Callable[..., list[ChatTarget]], chat_app: Callable[..., str]
) -> None:
    (target,) = policies(delay_s=0.0, recorded="A reply of the policy.")
    episode_id = record_episode(target, ["one", "two", "three"])
    client, _ = logged_in(chat_app([target]))
    listed = client.get("/api/episodes/recorded", params={"kind": "train", "min_reward": "0.5"}).json()
    assert [e["episode_id"] for e in listed["episodes"]] == [episode_id]
    assert client.get("/api/episodes/recorded", params={"min_reward": "2"}).json()["episodes"] == []
    full = client.get(f"/api/episodes/recorded/{episode_id}").json()
    assert len(full["calls"]) == 3 and full["merge"]["samples"] == 1
    assert sum(full["merge"]["sample_tokens"][0]["loss_mask"]) == sum(len(c["completion_ids"]) for c in full["calls"])


@pytest.mark.parametrize(
    ("path", "status"),
    [
        ("/api/episodes/nope", 404),
        ("/api/episodes/recorded/..%2Ftokens", 404),  # never reaches the server's /swarm/tokens
        ("/api/episodes/recorded/ep;drop", 422),
        ("/api/episodes/recorded/no-such-episode", 404),
        ("/api/episodes/recorded?limit=0", 422),
    ],
)
def test_bad_inspector_requests_are_4xx(
    policies: Callable[..., list[ChatTarget]], chat_app: Callable[..., str], path: str, status: int
) -> None:
    client, _ = logged_in(chat_app(policies(recorded="x")))
    assert client.get(path).status_code == status


def test_without_login_or_an_admin_token_the_inspector_shows_nothing(
    policies: Callable[..., list[ChatTarget]], chat_app: Callable[..., str]
) -> None:
    (admin,) = policies(recorded="secret words")
    record_episode(admin, ["hi"])
    client_token = httpx.post(
        f"{admin.url}/swarm/tokens", json={"name": "chat-user"}, headers={"Authorization": f"Bearer {admin.token}"}
    ).json()["token"]
    weak = ChatTarget("weak", admin.url, client_token)
    url = chat_app([admin, weak])
    assert httpx.get(f"{url}/api/episodes/recorded").status_code == 401
    assert httpx.get(f"{url}/inspector").status_code == 303
    client, _ = logged_in(url)
    refused = client.get("/api/episodes/weak")
    assert refused.status_code == 403 and "not its admin token" in refused.json()["detail"]


def test_the_inspector_page_marks_trained_tokens_escapes_text_and_forks(
    page: Any, policies: Callable[..., list[ChatTarget]], chat_app: Callable[..., str]
) -> None:
    recorded, other, episode_id, seen = fork_scene(policies, XSS_USER)
    url = chat_app([recorded, other])
    log_in(page, url)
    page.locator("#use-recorded").wait_for()
    page.goto(f"{url}/inspector")
    row = page.locator(f'tr[data-episode="{episode_id}"]')
    row.locator("button.open").click()
    page.locator(".call").nth(2).wait_for()
    assert page.locator(".call").count() == 3
    trained = page.locator(".sample .tok.trained")
    context = page.locator(".sample .tok.context")
    assert trained.count() > 0 and context.count() > 0
    completion_tokens = page.evaluate(
        "() => [...document.querySelectorAll('.call h3')]"
        ".map((h) => Number(h.textContent.match(/\\+ (\\d+) completion/)[1]))"
    )
    assert trained.count() == sum(completion_tokens)
    assert "(trained)" in (trained.first.get_attribute("title") or "")
    assert page.evaluate("window.__xss") is None and page.locator("#calls img, #calls script").count() == 0
    assert XSS_USER in page.locator(".call").first.text_content()

    page.locator('.call[data-call="1"] button.fork').click()  # fork at turn 2, replay it on the other policy
    page.wait_for_url(f"{url}/")
    page.locator("#fork-note").wait_for(state="visible")
    page.uncheck("#use-recorded")
    page.check("#use-other")
    page.click("#replay")
    page.locator('.column[data-target="other"] .turn.assistant[data-finish]').wait_for()
    assert page.locator('.column[data-target="other"] .turn.assistant .text').last.text_content() == (
        "The other policy's turn two."
    )
    (prompt,) = seen
    assert "question one" in prompt and "First answer." in prompt and "question two" in prompt
    assert "question three" not in prompt and "Second answer." not in prompt
    page.fill("#message", "and a follow-up")  # the forked conversation goes on in the playground
    page.press("#message", "Enter")
    page.locator('.column[data-target="other"] .turn.assistant[data-finish]').nth(1).wait_for()
    assert "The other policy's turn two." in seen[1] and "and a follow-up" in seen[1]
    assert LOGIN not in page.content()
