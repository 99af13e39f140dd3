"""Starting a swarm server in this process: the checks that can refuse it, one sentence each, then uvicorn.

`agentjet server start` (cli/server.py) turns its flags into `ServerSettings` and calls
`prepare_server` and `PreparedServer.serve`. `run_server` is the same start for a process without
the CLI; it is public as `agentjet.core.run_server`. Under torchrun rank 0 serves and the other ranks only train.
"""

from __future__ import annotations

import shutil
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import uvicorn

from agentjet.core.backends.factory import check_backend_settings
from agentjet.core.config import ServerSettings
from agentjet.core.errors import AgentJetError
from agentjet.core.launch.allocator import ALLOCATOR_ENV, allocator_choice, process_malloc
from agentjet.core.logs import error_line, log_to_stderr
from agentjet.core.models import check_model_class, resolve_model
from agentjet.core.placement import Placement, resolve_placement
from agentjet.core.server.app import create_app
from agentjet.core.server.http_server import uvicorn_config

__all__ = ["PreparedServer", "malloc_line", "prepare_server", "preflight", "run_server"]


def preflight(settings: ServerSettings) -> None:
    """Everything about the state dir that can refuse a start, checked before uvicorn: one sentence each."""
    from agentjet.core.config import load_train_config
    from agentjet.core.episodes.journal import Journal
    from agentjet.core.server.app import admin_token, prepare_state_dir
    from agentjet.core.state_lock import StateDirLock
    from agentjet.core.step.policy_model import check_lora_fits
    from agentjet.core.trackers.factory import check_installed

    if settings.uds is not None and not settings.uds.parent.is_dir():
        raise AgentJetError(f"cannot listen on {settings.uds}: its folder {settings.uds.parent} does not exist")
    if settings.config is not None:  # a config the lifespan or the first update would refuse: one sentence here
        config = load_train_config(settings.config)
        check_installed(config.report_to)
        check_lora_fits(config.lora, resolve_model(settings.model))
    prepare_state_dir(settings.state_dir)
    holder = StateDirLock(settings.state_dir).holder()
    if holder is not None:
        raise AgentJetError(f"another server (pid {holder or '?'}) is using the state dir {settings.state_dir}")
    admin_token(settings)
    journal_path = settings.state_dir / "journal.sqlite"
    if journal_path.exists():
        journal = Journal(journal_path)
        try:
            journal.verify()
        finally:
            journal.close()


@dataclass(frozen=True)
class PreparedServer:
    """A start that passed every check: the app's uvicorn config, ready to serve."""

    settings: ServerSettings
    where: Placement
    config: uvicorn.Config
    torchrun: bool  # started by torchrun (its other ranks exist already) rather than spawning them

    def serve(self) -> int:
        """Say what serves where on stderr, then serve until stopped: 0, or 1 when the lifespan refused to start."""
        from agentjet.core.step.distributed_trainer import backend_for

        settings, where = self.settings, self.where
        scheme = "https" if settings.ssl_certfile else "http"
        address = f"unix:{settings.uds}" if settings.uds else f"{scheme}://{settings.host}:{settings.port}"
        _say(f"agentjet server: model={settings.model} {address}  admin token: {settings.state_dir / 'token'}")
        served = "a vllm serve process" if settings.backend == "vllm" else "this process"
        _say(
            f"agentjet server: backend {settings.backend} on {where.describe()} ({served}); "
            f"trainer on {where.describe()} (LoRA weights and optimizer float32), built at the first update"
        )
        _say(f"agentjet server: malloc {malloc_line(where.device)}")
        if settings.train_procs > 1:
            n = settings.train_procs
            others = "rank 1" if n == 2 else f"ranks 1-{n - 1}"
            how = "started by torchrun" if self.torchrun else "spawned at the first update"
            _say(
                f"agentjet server: training across world_size={n} processes, backend {backend_for(where.device)} "
                f"(rank 0 is this process; {others} {how})"
            )
        server = uvicorn.Server(self.config)
        server.run()
        return 0 if server.started else 1  # not started: the lifespan refused (its one-line reason was logged)


def malloc_line(device: str) -> str:
    """Which malloc serves, and on a CPU without tcmalloc how to get one (`launch/allocator.py`)."""
    name = process_malloc()
    if name != "system" or not device.startswith("cpu") or not sys.platform.startswith("linux"):
        return name
    if allocator_choice() == "system":
        return f"system ({ALLOCATOR_ENV}=system)"
    return "system (no tcmalloc here: `apt-get install libtcmalloc-minimal4` makes a CPU update ~25% faster)"


def _say(line: str) -> None:
    sys.stderr.write(line + "\n")
    sys.stderr.flush()


def prepare_server(settings: ServerSettings, *, log_level: str = "INFO", torchrun: bool = False) -> PreparedServer:
    """Every check that can refuse the start (AgentJetError or ValueError, one sentence), then the app.

    A bad model, a device this machine lacks, backend flags that cannot work together, more GPUs
    than there are, a state dir in use or damaged: each fails before anything is served, and a
    state dir this call created is removed again."""
    from agentjet.core.step.distributed_trainer import check_world

    existed = settings.state_dir.exists()
    try:
        check_model_class(resolve_model(settings.model))  # a bad model (or transformers) fails here: nothing written
        where = resolve_placement(settings.device, settings.dtype)  # so does a device this machine lacks
        check_backend_settings(settings)  # and backend flags that cannot work together
        check_world(where.device, settings.train_procs)  # and more GPUs than there are
        preflight(settings)
        application = create_app(settings)
        config = uvicorn_config(application, host=settings.host, port=settings.port, log_level=log_level.lower())
    except (AgentJetError, ValueError):
        if not existed:
            shutil.rmtree(settings.state_dir, ignore_errors=True)  # nothing left behind by a start that never ran
        raise
    return PreparedServer(settings, where, config, torchrun)


def run_server(fields: Mapping[str, Any], *, log_level: str = "INFO") -> int:
    """Run a swarm server in this process until it stops; returns the process's exit status.

    `fields` are `ServerSettings` fields (the others from AGENTJET_* and the defaults). Logs go to
    stderr at `log_level`; a refused start is one `error: <sentence>` line there and status 2.
    Under torchrun a rank above 0 runs its training worker instead."""
    log_to_stderr(log_level)
    from agentjet.core.step.distributed_trainer import torchrun_rank

    launched = torchrun_rank()
    if launched is not None and launched[0] > 0:
        from agentjet.core.step.train_worker import main as train_worker

        return train_worker()
    given = dict(fields) if launched is None else {**fields, "train_procs": launched[1]}
    try:
        prepared = prepare_server(ServerSettings(**given), log_level=log_level, torchrun=launched is not None)
    except (AgentJetError, ValueError) as exc:
        _say(error_line(exc))
        return 2
    return prepared.serve()
