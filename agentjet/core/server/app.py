"""`create_app(settings, backend=None)`: the swarm server as a FastAPI app, built in `lifespan`.

Nothing is built at import. The lifespan opens the journal, loads or creates the token and
the key secret in the state dir, starts booting the backend in the background (so /health
answers "booting" meanwhile) and runs the idle-episode janitor until shutdown.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request

from agentjet.core.backends.base import Backend
from agentjet.core.config import ServerSettings, load_train_config
from agentjet.core.engine import Engine
from agentjet.core.journal import Journal
from agentjet.core.keys import EpisodeKeySigner, load_or_create_secret, load_or_create_token
from agentjet.core.server import client_routes, engine_routes, episode_routes, openai_routes
from agentjet.core.server.deps import Runtime
from agentjet.core.server.errors import install_error_handlers
from agentjet.core.serving import ChatService
from agentjet.core.training_loop import TrainingLoop

__all__ = ["create_app", "default_backend"]

log = logging.getLogger(__name__)


def default_backend(settings: ServerSettings) -> Backend:
    """The embedded transformers backend for the configured model (resolved offline)."""
    from agentjet.core.backends.transformers_backend import TransformersBackend
    from agentjet.core.models import resolve_model

    path = resolve_model(settings.model)
    name = settings.model if "/" not in settings.model else path.name
    return TransformersBackend(path, name=name, max_batch_size=settings.max_batch_size)


def _build_runtime(settings: ServerSettings, backend: Backend) -> Runtime:
    state_dir = settings.state_dir
    state_dir.mkdir(parents=True, exist_ok=True)
    token, generated = load_or_create_token(state_dir / "token", settings.token)
    if generated:
        log.warning("generated server token %s (also in %s)", token, state_dir / "token")
    signer = EpisodeKeySigner(load_or_create_secret(state_dir / "secret"))
    config = load_train_config(settings.config) if settings.config else None
    engine = Engine(
        backend,
        Journal(state_dir / "journal.sqlite"),
        signer,
        idle_timeout_s=settings.idle_timeout_s,
        episode_ttl_s=settings.episode_ttl_s,
        train_config=config,
    )
    return Runtime(settings=settings, engine=engine, chat=ChatService(engine), token=token)


async def _janitor(engine: Engine, interval_s: float) -> None:
    """Reclaim abandoned episodes forever; one failed sweep is logged, never fatal to the server."""
    while True:
        await asyncio.sleep(interval_s)
        try:
            await engine.reclaim_idle_episodes()
        except Exception:
            log.exception("idle-episode sweep failed; retrying in %.1fs", interval_s)


async def _boot(engine: Engine) -> None:
    try:
        await engine.start()
    except Exception:
        log.exception("backend failed to start; engine stays offline")


def _model_path(settings: ServerSettings, backend: Backend | None, model_path: Path | None) -> Path | None:
    """The folder the trainer loads: given, or the one `default_backend` serves; None = serve only.

    A caller-supplied backend without a `model_path` (fakes in tests) gets no training loop, so
    serving-only tests never load a trainer.
    """
    if model_path is not None or backend is not None:
        return model_path
    from agentjet.core.models import resolve_model

    return resolve_model(settings.model)


def create_app(settings: ServerSettings, backend: Backend | None = None, *, model_path: Path | None = None) -> FastAPI:
    """The server app; `model_path` is the base model folder the trainer fine-tunes (see `_model_path`)."""

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        runtime = _build_runtime(settings, backend or default_backend(settings))
        app.state.runtime = runtime
        trained = _model_path(settings, backend, model_path)
        async with asyncio.TaskGroup() as group:
            tasks = [
                group.create_task(_boot(runtime.engine)),
                group.create_task(_janitor(runtime.engine, settings.janitor_interval_s)),
            ]
            if trained is not None:
                loop = TrainingLoop(runtime.engine, model_path=trained, state_dir=settings.state_dir)
                tasks.append(group.create_task(loop.run()))
            try:
                yield
            finally:
                for task in tasks:
                    task.cancel()
        await runtime.engine.backend.close()
        runtime.engine.journal.close()

    app = FastAPI(title="AgentJet swarm server", version="0.1.0", lifespan=lifespan)
    install_error_handlers(app)
    app.include_router(openai_routes.router)
    app.include_router(episode_routes.router)
    app.include_router(engine_routes.router)
    app.include_router(client_routes.router)

    @app.get("/health", tags=["health"])
    async def health(request: Request) -> dict[str, Any]:
        runtime: Runtime | None = getattr(request.app.state, "runtime", None)
        if runtime is None:
            return {"status": "starting", "state": "offline", "model": settings.model}
        return {
            "status": "ok",
            "state": str(runtime.engine.state),
            "model": runtime.engine.backend.name,
            "policy_version": runtime.engine.backend.policy_version,
        }

    return app
