"""A swarm server whose policy is a Python function (prompt text -> reply): for dry runs and red-team policies.

The research layer plays generated clients against scripted policies before any real model runs
(vibe's validation dry runs, its red team's degenerate policies). This is the public way to get
such a server without importing the core's internals: the real server code path (episodes and
keys, the chat template, the tool-call fallback format and parsing) with `ScriptedBackend` in
place of the model. It serves only: nothing is trained (no trainer is built for a given backend).
"""

from __future__ import annotations

import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

from agentjet.core.backends.fakes import ScriptedBackend, load_tokenizer
from agentjet.core.config import ServerSettings
from agentjet.core.models import resolve_model
from agentjet.core.server.app import create_app
from agentjet.core.testing import RunningServer, serve_in_thread

__all__ = ["Reply", "serve_scripted"]

Reply = Callable[[str], str]  # the rendered prompt (chat template applied) -> the completion text


@contextmanager
def serve_scripted(
    reply: Reply, *, token: str, model: str = "tiny", timeout_s: float = 120.0
) -> Iterator[RunningServer]:
    """A scripted server on 127.0.0.1 (a free port), rolling when yielded; its state dir is removed after.

    `model` names the tokenizer and chat template the prompts are rendered with (the policy the
    scripted replies stand in for); its weights are never used."""
    tokenizer = load_tokenizer(resolve_model(model))
    state_dir = Path(tempfile.mkdtemp(prefix="agentjet-scripted-"))
    settings = ServerSettings(model=model, state_dir=state_dir, token=token, port=0)
    try:
        with serve_in_thread(create_app(settings, backend=ScriptedBackend(tokenizer, reply, name=model))) as running:
            _wait_rolling(running.url, timeout_s)
            yield running
    finally:
        shutil.rmtree(state_dir, ignore_errors=True)


def _wait_rolling(url: str, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if httpx.get(f"{url}/health", timeout=5).json().get("state") == "rolling":
            return
        time.sleep(0.05)
    raise TimeoutError(f"scripted server at {url} never reached rolling within {timeout_s}s")
