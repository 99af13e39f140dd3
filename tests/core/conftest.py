"""Fixtures for core tests: an Engine on the echo backend with a real journal, started."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from agentjet.core.access.keys import EpisodeKeySigner
from agentjet.core.backends.fakes import EchoBackend
from agentjet.core.engine import Engine
from agentjet.core.episodes.journal import Journal
from tests.core.factories import Clock


@pytest.fixture
def make_engine(tmp_path: Path, tiny_tokenizer: Any) -> Callable[..., Awaitable[Engine]]:
    """`await make_engine(**engine_kwargs)` -> a rolling Engine (idle timeout 10 s, TTL 100 s)."""

    async def make(**overrides: Any) -> Engine:
        options: dict[str, Any] = {"idle_timeout_s": 10.0, "episode_ttl_s": 100.0, **overrides}
        engine = Engine(
            EchoBackend(tiny_tokenizer), Journal(tmp_path / "j.sqlite"), EpisodeKeySigner(b"k" * 32), **options
        )
        await engine.start()
        return engine

    return make


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
async def engine(make_engine: Callable[..., Awaitable[Engine]], clock: Clock) -> Engine:
    """A rolling engine on the echo backend whose clock the test moves (idle timeout 10 s)."""
    return await make_engine(clock=clock)


@pytest.fixture
async def fresh_backend(tiny_model: Path) -> Any:
    """A started transformers backend of its own on `tiny`, for tests that change weights, run jobs or close it."""
    from agentjet.core.backends.transformers_backend import TransformersBackend

    instance = TransformersBackend(tiny_model, name="tiny-private", max_batch_size=4)
    await instance.start()
    yield instance
    await instance.close()
