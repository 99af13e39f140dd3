"""`agentjet bench chat`: time to the first streamed token in the chat page, against the openai SDK directly.

One real swarm server (uvicorn on loopback, the embedded transformers backend) and the `agentjet chat`
app over it run in this process. Each message is timed two ways, interleaved (direct, page, direct,
page...) so that machine noise hits both alike, after one warm-up of each:

- direct: the openai SDK streams the chat call inside a fresh eval episode; from just before
  `create()` to the first chunk whose delta has text.
- page: headless Debian chromium (Playwright), logged in through the form; measured in the page with
  `performance.now()`, from the composer's submit event to the first text node appended to the
  reply (a MutationObserver). That span holds what a user waits for on top of the call itself: the
  page's fetch, the chat app's session checks, its own eval episode and the SSE relay.

Both ask for the same message, seed i, temperature 1, logprobs and `max_tokens`, one turn each (the
page starts a new conversation before every message). The target is page p50 <= 1.2 x direct p50 +
20 ms. The chat app is built by the caller (`chat_app`): chat sits above bench in the layers, so
the CLI wires it in.

JSON: model, messages, max_tokens, direct_first_token_ms and page_first_token_ms (p50, p90,
samples), ratio_p50, overhead_p50_ms, target, met.
"""

from __future__ import annotations

import secrets
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import openai
from fastapi import FastAPI
from playwright.sync_api import Page, sync_playwright

from agentjet.bench.output import print_result
from agentjet.core import SwarmClient
from agentjet.core.access.tokens import new_admin_token
from agentjet.core.config import ServerSettings
from agentjet.core.errors import ConfigError
from agentjet.core.server.app import create_app
from agentjet.core.testing import serve_in_thread
from agentjet.tasks.play.rounds import wait_until_rolling

__all__ = ["CHROMIUM", "CHROMIUM_ARGS", "TARGET", "ChatAppFactory", "figures", "main", "run_chat_bench"]

ChatAppFactory = Callable[[str, str, str], FastAPI]
"""(swarm server URL, its admin token, the chat's login token) -> the chat app with that server as `policy`."""
Progress = Callable[[str], None]

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
TARGET = "page p50 <= 1.2 x direct p50 + 20 ms"
_MESSAGE = "Write one short sentence about the sea."
_TARGET_NAME = "policy"
_WARM_UP_SEED = 100_000
_PAGE_TIMEOUT_MS = 300_000

# Installed before each send: a capture listener on window fires before the page's own submit
# handler starts the fetch; the observer keeps the time the reply first shows text.
_WATCH_FIRST_TOKEN = """() => {
  window.__firstTokenMs = null;
  let sent = null;
  window.addEventListener("submit", () => { sent = performance.now(); }, { capture: true, once: true });
  const columns = document.getElementById("columns");
  // any DOM change after the submit: the first time an assistant turn holds text, however it got there
  // (a text node added, a span added with its text, or a text node grown)
  const observer = new MutationObserver(() => {
    if (sent === null) return;
    for (const text of columns.querySelectorAll(".turn.assistant .text")) {
      if (text.textContent.length) {
        window.__firstTokenMs = performance.now() - sent;
        observer.disconnect();
        return;
      }
    }
  });
  observer.observe(columns, { childList: true, subtree: true, characterData: true });
}"""


def _stderr(message: str) -> None:
    sys.stderr.write(f"[bench chat] {message}\n")
    sys.stderr.flush()


def _direct_first_token_ms(client: SwarmClient, seed: int, max_tokens: int) -> float:
    """One streamed call through the openai SDK in its own eval episode, read to the end."""
    episode = client.begin_episode("bench-chat", kind="eval")
    first: float | None = None
    try:
        with openai.OpenAI(base_url=episode.base_url, api_key=episode.api_key, max_retries=0) as sdk:
            started = time.perf_counter()
            stream = sdk.chat.completions.create(
                model=_TARGET_NAME, messages=[{"role": "user", "content": _MESSAGE}], stream=True,
                logprobs=True, temperature=1.0, seed=seed, max_tokens=max_tokens,
            )  # fmt: skip
            with stream:
                for chunk in stream:
                    if first is None and any(choice.delta.content for choice in chunk.choices):
                        first = time.perf_counter()
    finally:
        episode.abort()
    if first is None:
        raise RuntimeError(f"the direct reply with seed {seed} streamed no text; try more --max-tokens")
    return (first - started) * 1000


def _log_in(page: Page, url: str, login: str, max_tokens: int) -> None:
    """Through the login form, as a user would; then the sampling fields every message shares."""
    page.goto(f"{url}/")
    page.wait_for_url(f"{url}/login")
    page.fill("#token", login)
    page.click("#login")
    page.wait_for_url(f"{url}/")
    page.locator(f"#use-{_TARGET_NAME}").wait_for()
    page.fill("#temperature", "1")
    page.fill("#n", "1")
    page.fill("#max_tokens", str(max_tokens))


def _page_first_token_ms(page: Page, seed: int) -> float:
    """One message as a one-turn conversation; waits for the reply to finish before returning."""
    page.click("#reset")
    page.fill("#seed", str(seed))
    page.fill("#message", _MESSAGE)
    page.evaluate(_WATCH_FIRST_TOKEN)
    page.click("#send")
    page.locator(".turn.assistant[data-finish]").first.wait_for()
    errors = page.locator(".turn.error")
    if errors.count():
        raise RuntimeError(f"the page showed an error for seed {seed}: {errors.first.text_content()}")
    figure = page.evaluate("() => window.__firstTokenMs")
    if figure is None:
        raise RuntimeError(f"the page reply with seed {seed} streamed no text; try more --max-tokens")
    return float(figure)


@contextmanager
def _chat_page(chromium: Path, url: str, login: str, max_tokens: int) -> Iterator[Page]:
    """A logged-in playground page in headless chromium, closed on exit."""
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(chromium), args=CHROMIUM_ARGS, headless=True)
        try:
            page = browser.new_context().new_page()
            page.set_default_timeout(_PAGE_TIMEOUT_MS)
            _log_in(page, url, login, max_tokens)
            yield page
        finally:
            browser.close()


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def _summary(samples_ms: list[float]) -> dict[str, Any]:
    return {
        "p50": round(statistics.median(samples_ms), 2),
        "p90": round(_percentile(samples_ms, 0.9), 2),
        "samples": [round(s, 2) for s in samples_ms],
    }


def figures(model: str, max_tokens: int, direct_ms: list[float], page_ms: list[float]) -> dict[str, Any]:
    """The result from the two sample lists (message i's figures at index i)."""
    direct, page = _summary(direct_ms), _summary(page_ms)
    return {
        "model": model,
        "messages": len(direct_ms),
        "max_tokens": max_tokens,
        "direct_first_token_ms": direct,
        "page_first_token_ms": page,
        "ratio_p50": round(page["p50"] / direct["p50"], 3),
        "overhead_p50_ms": round(page["p50"] - direct["p50"], 2),
        "target": TARGET,
        "met": bool(page["p50"] <= 1.2 * direct["p50"] + 20.0),
    }


def run_chat_bench(
    chat_app: ChatAppFactory,
    *,
    model: str = "smollm2-135m",
    messages: int = 20,
    max_tokens: int = 16,
    chromium: Path = CHROMIUM,
    progress: Progress = _stderr,
) -> dict[str, Any]:
    """Start the server and the chat app, time `messages` messages each way (interleaved), return the figures."""
    if messages < 1 or max_tokens < 1:
        raise ConfigError(f"messages={messages} and max_tokens={max_tokens} must both be >= 1")
    if not chromium.exists():
        raise ConfigError(f"no browser: {chromium} is missing (apt-get install chromium); the page is timed in it")
    token, login = new_admin_token(), secrets.token_urlsafe(24)
    direct_ms: list[float] = []
    page_ms: list[float] = []
    with tempfile.TemporaryDirectory(prefix="agentjet-bench-chat-") as tmp:
        settings = ServerSettings(model=model, state_dir=Path(tmp) / "state", token=token)
        progress(f"starting a {model} server and the chat app on loopback")
        with (
            serve_in_thread(create_app(settings)) as server,
            SwarmClient(server.url, token=token) as client,
        ):
            wait_until_rolling(client)
            with (
                serve_in_thread(chat_app(server.url, token, login)) as chat,
                _chat_page(chromium, chat.url, login, max_tokens) as page,
            ):
                _direct_first_token_ms(client, _WARM_UP_SEED, max_tokens)  # warm-up: connections, kernels, JIT
                _page_first_token_ms(page, _WARM_UP_SEED)
                for seed in range(messages):
                    direct_ms.append(_direct_first_token_ms(client, seed, max_tokens))
                    page_ms.append(_page_first_token_ms(page, seed))
                    progress(f"message {seed + 1}/{messages}: direct {direct_ms[-1]:.1f} ms, page {page_ms[-1]:.1f} ms")
    return figures(model, max_tokens, direct_ms, page_ms)


def _table(result: Mapping[str, Any]) -> dict[str, Any]:
    """The result with each side's p50/p90 as rows of their own (the samples stay in --json)."""
    rows: dict[str, Any] = {}
    for key, value in result.items():
        if isinstance(value, Mapping):
            rows.update({f"{key}_{stat}": value[stat] for stat in ("p50", "p90")})
        else:
            rows[key] = value
    return rows


def main(
    chat_app: ChatAppFactory, *, model: str, messages: int, max_tokens: int, as_json: bool, chromium: Path = CHROMIUM
) -> int:
    """`agentjet bench chat`: the figures as JSON or a table on stdout; 0 whether or not the target is met."""
    result = run_chat_bench(chat_app, model=model, messages=messages, max_tokens=max_tokens, chromium=chromium)
    print_result(result if as_json else _table(result), as_json=as_json)
    return 0
