"""The playground in a real browser (Debian's chromium, headless, driven by Playwright)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from agentjet.chat.targets import ChatTarget
from tests.chat.conftest import LOGIN

LONG = "The quick brown fox jumps over the lazy dog while the cat watches from the warm window sill."
XSS = '<script>window.__xss = 1</script><img src=x onerror="window.__xss = 2"><b>bold?</b>'


def log_in(page: Any, url: str, token: str = LOGIN) -> None:
    page.goto(f"{url}/")
    page.wait_for_url(f"{url}/login")
    page.fill("#token", token)
    page.click("#login")


def send(page: Any, text: str) -> None:
    page.fill("#message", text)
    page.press("#message", "Enter")


def reply_text(page: Any, target: str, nth: int = 0) -> Any:
    return page.locator(f'.column[data-target="{target}"] .turn.assistant .text').nth(nth)


def test_log_in_and_a_reply_arrives_token_by_token(
    page: Any, policies: Callable[..., list[ChatTarget]], chat_app: Callable[..., str]
) -> None:
    url = chat_app(policies(delay_s=0.05, base=LONG))
    log_in(page, url)
    page.wait_for_url(f"{url}/")
    page.locator("#use-base").wait_for()
    page.uncheck("#show_logprobs")
    send(page, "Tell me about the fox.")
    text = reply_text(page, "base")
    partial = page.wait_for_function(  # seen part-way: streamed, not delivered at the end in one piece
        "(full) => { const t = document.querySelector('.column .turn.assistant .text');"
        " return t && t.textContent.length > 0 && t.textContent.length < full.length ? t.textContent : false; }",
        arg=LONG,
    ).json_value()
    assert LONG.startswith(partial) and partial != LONG
    page.locator('.turn.assistant[data-finish="stop"]').wait_for()
    assert text.text_content() == LONG


def test_side_by_side_and_the_token_view_shows_logprobs(
    page: Any, policies: Callable[..., list[ChatTarget]], chat_app: Callable[..., str]
) -> None:
    url = chat_app(
        policies(base="Base model says héllo — naïve café 🚀.", step6="Trained step six answers differently.")
    )
    log_in(page, url)
    page.locator("#use-step6").wait_for()
    assert page.is_checked("#use-base") and page.is_checked("#use-step6")
    send(page, "hello")
    page.locator('.column[data-target="step6"] .turn.assistant[data-finish]').wait_for()
    page.locator('.column[data-target="base"] .turn.assistant[data-finish]').wait_for()
    assert reply_text(page, "base").text_content() == "Base model says héllo — naïve café 🚀."
    assert reply_text(page, "step6").text_content() == "Trained step six answers differently."
    tokens = page.locator('.column[data-target="base"] .tok')
    assert tokens.count() > 3
    titles = [tokens.nth(i).get_attribute("title") for i in range(tokens.count())]
    assert all(t and "logprob -" in t for t in titles)
    values = [float(tokens.nth(i).get_attribute("data-logprob")) for i in range(tokens.count())]
    assert all(v <= 0 for v in values) and len(set(values)) > 1
    assert tokens.first.evaluate("(e) => getComputedStyle(e).backgroundColor") != "rgba(0, 0, 0, 0)"
    page.uncheck("#show_logprobs")  # plain text again, same words
    assert tokens.count() == 0 and reply_text(page, "base").text_content() == "Base model says héllo — naïve café 🚀."


def test_the_conversation_goes_on_with_its_history(
    page: Any, policies: Callable[..., list[ChatTarget]], chat_app: Callable[..., str]
) -> None:
    seen: list[str] = []

    def script(prompt: str) -> str:
        seen.append(prompt)
        return f"reply {len(seen)}"

    url = chat_app(policies(delay_s=0.0, base=script))
    log_in(page, url)
    page.locator("#use-base").wait_for()
    send(page, "first question")
    page.locator(".turn.assistant[data-finish]").first.wait_for()
    send(page, "second question")
    page.locator(".turn.assistant[data-finish]").nth(1).wait_for()
    assert "first question" in seen[1] and "reply 1" in seen[1] and "second question" in seen[1]
    assert page.locator(".turn.user").count() == 2


def test_model_output_is_text_never_markup(
    page: Any, policies: Callable[..., list[ChatTarget]], chat_app: Callable[..., str]
) -> None:
    url = chat_app(policies(delay_s=0.0, base=XSS))
    log_in(page, url)
    page.locator("#use-base").wait_for()
    for show_logprobs in (False, True):
        page.set_checked("#show_logprobs", show_logprobs)
        send(page, "<script>window.__xss = 3</script>")
        page.locator(".turn.assistant[data-finish]").nth(int(show_logprobs)).wait_for()
    assert page.evaluate("window.__xss") is None
    column = page.locator('.column[data-target="base"]')
    assert column.locator("img, script, b").count() == 0
    assert reply_text(page, "base").text_content() == XSS
    assert column.locator(".turn.user").first.text_content() == "<script>window.__xss = 3</script>"


def test_no_login_no_page_and_a_wrong_token_says_so(
    page: Any, policies: Callable[..., list[ChatTarget]], chat_app: Callable[..., str]
) -> None:
    url = chat_app(policies(base="private"))
    page.goto(f"{url}/")
    assert page.url == f"{url}/login"
    assert "private" not in page.content()
    log_in(page, url, token="not-the-login-token")
    page.locator("#failed").wait_for(state="visible")
    assert page.context.cookies() == []
    api = page.request.get(f"{url}/api/session")
    assert api.status == 401


def test_log_out_ends_the_session(
    page: Any, policies: Callable[..., list[ChatTarget]], chat_app: Callable[..., str]
) -> None:
    url = chat_app(policies(base="x"))
    log_in(page, url)
    page.locator("#use-base").wait_for()
    page.click("#logout")
    page.wait_for_url(f"{url}/login")
    page.goto(f"{url}/")
    assert page.url == f"{url}/login"
