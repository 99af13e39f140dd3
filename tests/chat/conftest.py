"""Fixtures of the chat tests: scripted swarm servers as policies, the chat app on loopback, a browser.

The browser is Debian's chromium driven by Playwright through `executable_path` (no browser
download works here). Without it the browser tests skip, except under AGENTJET_REQUIRE_BROWSER=1
(`make test` as root installs chromium and sets it), where they fail instead.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from typing import Any

import pytest

from agentjet.bench.chat_latency import CHROMIUM, CHROMIUM_ARGS
from agentjet.chat.security import Sessions
from agentjet.chat.targets import ChatTarget
from agentjet.chat.web import create_chat_app
from agentjet.core.testing import RunningServer, serve_in_thread
from tests.conftest import TOKEN

LOGIN = "chat-login-token-0123456789"


@pytest.fixture
def policies(
    live_server: Callable[..., RunningServer], scripted_backend: Callable[..., Any]
) -> Callable[..., list[ChatTarget]]:
    """`policies(name=script, ...)` -> scripted swarm servers as chat targets (a token delay of 20 ms);
    a script is a reply text, a list of them (in turn) or a function of the rendered prompt."""

    def start(delay_s: float = 0.02, **scripts: Any) -> list[ChatTarget]:
        targets = []
        for name, script in scripts.items():
            script = [script] if isinstance(script, str) else script
            running = live_server(scripted_backend(script, token_delay_s=delay_s))
            targets.append(ChatTarget(name=name, url=running.url, token=TOKEN))
        return targets

    return start


@pytest.fixture
def chat_app() -> Iterator[Callable[[list[ChatTarget]], str]]:
    """`chat_app(targets)` -> the URL of the chat page over them, served on loopback."""
    with ExitStack() as stack:

        def start(targets: list[ChatTarget]) -> str:
            app = create_chat_app(targets, Sessions(LOGIN))
            return stack.enter_context(serve_in_thread(app)).url

        yield start


@pytest.fixture(scope="module")  # closed after each module: a second sync Playwright (bench chat's) may not overlap it
def browser() -> Iterator[Any]:
    if not CHROMIUM.exists():
        message = f"no browser: {CHROMIUM} is missing (apt-get install chromium)"
        if os.environ.get("AGENTJET_REQUIRE_BROWSER") == "1":
            pytest.fail(message + " (AGENTJET_REQUIRE_BROWSER=1)")
        pytest.skip(message)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True)
        yield launched
        launched.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    context = browser.new_context()
    yield context.new_page()
    context.close()
