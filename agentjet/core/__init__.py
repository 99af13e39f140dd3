"""The swarm training core. Public API only: what vibe, a3r and users may import.

The names load on first use: `import agentjet.core.step.trainer` (the GPU check, a training
process) then needs neither httpx (the client) nor anything else the public API pulls in.

call_stats.py       Live call statistics of one server (totals, calls/s and tokens/s over a sliding window). Time is
                    an argument.
chat_format.py      Render OpenAI chat messages (and tools) into prompt token ids, and parse tool calls back.
config.py           Typed configuration: `ServerSettings` for one swarm server, `TrainConfig` for its training.
engine.py           The engine owns the episodes and the engine state machine of one swarm server.
engine_states.py    The engine state machine: legal moves (`NEXT_STATES`), which states serve, and the door new
                    calls wait at.
engine_status.py    `GET /swarm/status` as the engine answers it: state, episodes, calls, pool, training health.
errors.py           Every error AgentJet raises on purpose, classified by what the caller can do about it.
logs.py             How an agentjet process reports on stderr: its log handler and its one-line errors.
models.py           Model registry: resolve a model name or folder to a loadable local HF folder, offline.
placement.py        Where a model copy lives and in which precision: `--device` and `--dtype` resolved once.
scripted_server.py  A swarm server whose policy is a Python function (prompt text -> reply): for dry runs and
                    red-team policies.
serving.py          Serve one chat-completion call of an episode: render, sample (n choices), parse, track.
state_lock.py       One server per state dir: an exclusive flock on `<state-dir>/server.lock` for the server's
                    lifetime.
testing.py          Run a real swarm server (uvicorn on 127.0.0.1, a free port) in a background thread.
types.py            Plain values shared by every part of the core: ids, states, sampling requests and call records.
access/             Who may do what: signed episode keys, the admin token and revocable client tokens.
backends/           Inference backends behind one protocol: the in-process transformers decode loop, vLLM in its
                    own process, a fake.
episodes/           Episodes as records: the open episode in memory, timeline merging into samples, and the durable
                    journal with its salvage.
export/             Trained steps out to the tools people use: the PEFT adapter, a merged Hugging Face model,
                    GGUF for llama.cpp.
launch/             The processes the core starts: a swarm server for the layers above (`ServerProcess`), and the
                    pieces a `vllm serve` child shares with it.
sdk/                The client SDK (`SwarmClient`, `AsyncSwarmClient`): sans-IO plans and reply readers under two
                    thin I/O twins, and the status view.
server/             The swarm server over HTTP: the FastAPI app, its routes, auth dependencies, request and
                    connection limits.
step/               One GRPO/LoRA training step, in one process or data-parallel over torch.distributed ranks: pack,
                    forward, loss, backward, step.
trackers/           Experiment trackers: where each training step's scalars go besides `metrics.jsonl` (TensorBoard,
                    wandb offline, MLflow).
training/           The training loop around the step: when the pool makes a batch (C1-C5), advantages, checkpoints,
                    metrics, health, quarantine.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agentjet.core.config import ServerSettings, TrainConfig, describe_validation_error
    from agentjet.core.errors import (
        AgentJetError,
        AuthError,
        BackendError,
        ConfigError,
        ContextLengthExceeded,
        EngineNotReady,
        EpisodeBusy,
        EpisodeClosed,
        EpisodeNotFound,
        InvalidRequest,
        ModelError,
        PermissionDenied,
        RequestTooLarge,
        RewardRefused,
        ServerOffline,
        ServerStartFailed,
        StorageFull,
        TokenNotFound,
        TrainingDown,
    )
    from agentjet.core.launch.child_process import log_tail, pid_alive, process_mentions, stop_process_group
    from agentjet.core.launch.server_process import ServerProcess
    from agentjet.core.logs import error_line, log_to_stderr
    from agentjet.core.models import check_model
    from agentjet.core.placement import resolve_placement
    from agentjet.core.scripted_server import serve_scripted
    from agentjet.core.sdk.client import AsyncEpisode, AsyncSwarmClient, Episode, EpisodeReclaimed, SwarmClient
    from agentjet.core.sdk.client_core import TOKEN_ENV
    from agentjet.core.server.run import run_server

__all__ = [
    "TOKEN_ENV",
    "AgentJetError",
    "AsyncEpisode",
    "AsyncSwarmClient",
    "AuthError",
    "BackendError",
    "ConfigError",
    "ContextLengthExceeded",
    "EngineNotReady",
    "Episode",
    "EpisodeBusy",
    "EpisodeClosed",
    "EpisodeNotFound",
    "EpisodeReclaimed",
    "InvalidRequest",
    "ModelError",
    "PermissionDenied",
    "RequestTooLarge",
    "RewardRefused",
    "ServerOffline",
    "ServerProcess",
    "ServerSettings",
    "ServerStartFailed",
    "StorageFull",
    "SwarmClient",
    "TokenNotFound",
    "TrainConfig",
    "TrainingDown",
    "check_model",
    "describe_validation_error",
    "error_line",
    "log_tail",
    "log_to_stderr",
    "pid_alive",
    "process_mentions",
    "resolve_placement",
    "run_server",
    "serve_scripted",
    "stop_process_group",
]

_CLIENT = ("AsyncEpisode", "AsyncSwarmClient", "Episode", "EpisodeReclaimed", "SwarmClient")
_HOME = {name: "sdk.client" if name in _CLIENT else "errors" for name in __all__}
_HOME.update(
    ServerSettings="config", TrainConfig="config", TOKEN_ENV="sdk.client_core", serve_scripted="scripted_server"
)
_HOME.update(describe_validation_error="config")
_HOME.update(error_line="logs", log_to_stderr="logs", run_server="server.run")
_HOME.update(ServerProcess="launch.server_process", check_model="models", resolve_placement="placement")
_CHILD_PROCESS = ("log_tail", "pid_alive", "process_mentions", "stop_process_group")
_HOME.update({name: "launch.child_process" for name in _CHILD_PROCESS})


def __getattr__(name: str) -> Any:
    if name not in _HOME:
        raise AttributeError(f"module 'agentjet.core' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"agentjet.core.{_HOME[name]}"), name)
    globals()[name] = value  # later lookups skip this hook
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
