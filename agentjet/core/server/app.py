"""`create_app(settings, backend=None)`: the swarm server as a FastAPI app, built in `lifespan`.

Nothing is built at import. The lifespan makes the state dir private (0700), resolves the admin
token (`--token-file`, `AGENTJET_TOKEN`, the one already in `<state-dir>/token`, else a new one;
never logged), opens and verifies the journal (a damaged one stops the start: `JournalCorrupted`),
starts booting the backend in the background (so /health answers "booting" meanwhile) and runs
the idle-episode janitor until shutdown. `/docs` and `/openapi.json` are off unless
`api_docs`; every request body passes the size limit (`limits.BodyLimit`) before any route.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

from agentjet.core.access.keys import EpisodeKeySigner, load_or_create_secret, load_or_create_token, read_token_file
from agentjet.core.access.tokens import TokenStore, check_token_strength
from agentjet.core.backends.base import Backend
from agentjet.core.config import ServerSettings, load_train_config
from agentjet.core.engine import Engine
from agentjet.core.episodes.journal import Journal
from agentjet.core.errors import AgentJetError
from agentjet.core.placement import resolve_placement
from agentjet.core.server import client_routes, engine_routes, episode_routes, openai_routes, token_routes
from agentjet.core.server.deps import Runtime
from agentjet.core.server.errors import error_response, install_error_handlers
from agentjet.core.server.limits import BodyLimit
from agentjet.core.serving import ChatLimits, ChatService
from agentjet.core.state_lock import StateDirLock
from agentjet.core.step.step_trainer import trainer_factory
from agentjet.core.trackers.factory import check_installed
from agentjet.core.training.loop import TrainingLoop
from agentjet.core.types import ADMIN_ID

__all__ = ["admin_token", "create_app", "default_backend", "prepare_state_dir"]

log = logging.getLogger(__name__)


def default_backend(settings: ServerSettings) -> Backend:
    """The backend the settings ask for (`backends/factory.py`; the model resolved offline)."""
    from agentjet.core.backends.factory import build_backend

    return build_backend(settings)


def prepare_state_dir(state_dir: Path) -> None:
    """Create the state dir owner-only: it holds the admin token, the key secret and every prompt."""
    if state_dir.exists() and not state_dir.is_dir():
        raise AgentJetError(f"cannot use {state_dir} as the state dir: it is a file, not a folder")
    try:
        state_dir.mkdir(parents=True, exist_ok=True)
        os.chmod(state_dir, 0o700)
    except OSError as exc:
        raise AgentJetError(f"cannot use {state_dir} as the state dir: {exc.strerror or exc}") from exc


def admin_token(settings: ServerSettings) -> tuple[str, bool]:
    """(admin token, generated): from `token` (env/flag), else `token_file`, else `<state-dir>/token`."""
    given, source = settings.token, "AGENTJET_TOKEN (or --token)"
    if given is None and settings.token_file is not None:
        given, source = read_token_file(settings.token_file), str(settings.token_file)
    checked = check_token_strength(given, source=source) if given else None
    token, generated = load_or_create_token(settings.state_dir / "token", checked)
    if generated:
        log.warning("generated an admin token into %s (mode 600; it is never logged)", settings.state_dir / "token")
    return token, generated


def _build_runtime(settings: ServerSettings, backend: Backend) -> Runtime:
    state_dir = settings.state_dir
    token, _ = admin_token(settings)
    signer = EpisodeKeySigner(load_or_create_secret(state_dir / "secret"))
    config = load_train_config(settings.config) if settings.config else None
    if config is not None:
        check_installed(config.report_to)  # refuse at start, not at the first step
    journal = Journal(state_dir / "journal.sqlite")
    try:
        records = journal.verify()
    except BaseException:
        journal.close()
        raise
    log.info("journal verified records=%d path=%s", records, journal.path)
    engine = Engine(
        backend,
        journal,
        signer,
        idle_timeout_s=settings.idle_timeout_s,
        episode_ttl_s=settings.episode_ttl_s,
        train_config=config,
        end_wait_s=settings.end_wait_s,
        admission_timeout_s=settings.admission_timeout_s,
        max_metadata_bytes=settings.max_metadata_bytes,
    )
    report = getattr(backend, "memory_report", None)
    if callable(report):
        engine.memory_reports["backend"] = report
    tokens = TokenStore(state_dir)
    engine.owner_is_live = lambda owner: owner == ADMIN_ID or tokens.is_live(owner)
    limits = ChatLimits(max_messages=settings.max_messages, max_tools=settings.max_tools, max_n=settings.max_n)
    chat = ChatService(engine, limits=limits)
    return Runtime(settings=settings, engine=engine, chat=chat, token=token, tokens=tokens)


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


def _health(request: Request, settings: ServerSettings) -> dict[str, Any]:
    runtime: Runtime | None = getattr(request.app.state, "runtime", None)
    if runtime is None:
        return {"status": "starting", "state": "offline", "ready": False, "model": settings.model}
    engine = runtime.engine
    health = engine.training_health
    return {
        "status": "ok",
        "state": str(engine.state),
        "ready": engine.is_ready,
        "training": str(health.state) if health is not None else "off",
        "model": engine.backend.name,
        "policy_version": engine.backend.policy_version,
    }


def create_app(settings: ServerSettings, backend: Backend | None = None, *, model_path: Path | None = None) -> FastAPI:
    """The server app; `model_path` is the base model folder the trainer fine-tunes (see `_model_path`)."""

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        prepare_state_dir(settings.state_dir)
        lock = StateDirLock(settings.state_dir)
        lock.acquire()  # one server per state dir
        try:
            runtime = _build_runtime(settings, backend or default_backend(settings))
        except BaseException:
            lock.release()
            raise
        app.state.runtime = runtime
        trained = _model_path(settings, backend, model_path)
        loop: TrainingLoop | None = None
        async with asyncio.TaskGroup() as group:
            tasks = [
                group.create_task(_boot(runtime.engine)),
                group.create_task(_janitor(runtime.engine, settings.janitor_interval_s)),
            ]
            if trained is not None:
                placement = resolve_placement(settings.device, settings.dtype)
                # the embedded backend on the trainer's placement samples with the trainer's own forward;
                # only in float32 is that exact (bf16's cached decode is 0.04 nat a token off, docs/training-config.md)
                own = settings.backend == "transformers" and placement.dtype == "float32"
                factory = trainer_factory(placement, settings.train_procs, sampler_is_own_forward=own)
                loop = TrainingLoop(
                    runtime.engine, model_path=trained, state_dir=settings.state_dir, trainer_factory=factory
                )
                tasks.append(group.create_task(loop.run()))
            try:
                yield
            finally:
                for task in tasks:
                    task.cancel()
        if loop is not None:
            await asyncio.to_thread(loop.close)  # a distributed trainer's worker processes
        await runtime.engine.backend.close()
        runtime.chat.close()
        runtime.engine.journal.close()
        lock.release()

    docs = {} if settings.api_docs else {"docs_url": None, "redoc_url": None, "openapi_url": None}
    app = FastAPI(title="AgentJet swarm server", version="0.1.0", lifespan=lifespan, **docs)  # type: ignore[arg-type]
    app.state.settings = settings  # the HTTP server's limits come from here (http_server.py)
    app.add_middleware(BodyLimit, max_bytes=settings.max_request_bytes)
    install_error_handlers(app)
    for module in (openai_routes, episode_routes, engine_routes, client_routes, token_routes):
        app.include_router(module.router)

    @app.get("/health", tags=["health"])
    async def health(request: Request) -> dict[str, Any]:
        """Liveness, engine state and readiness; always 200 while the process serves HTTP."""
        return _health(request, settings)

    @app.get("/ready", tags=["health"], response_model=None)
    async def ready(request: Request) -> dict[str, Any] | JSONResponse:
        """200 once episodes can begin, else 503 (what `SwarmClient.wait_ready` polls)."""
        body = _health(request, settings)
        if body["ready"]:
            return body
        return error_response(503, f"not ready: engine is {body['state']}", "engine_not_ready", "engine_not_ready")

    return app
