"""Launch a vibe run's training: the server (started, adopted or reused), the sandboxed client, and hot-swaps.

`launch` writes the run's `train.yaml` into the workspace (committed), brings a server up (or
reuses `--server URL`), and starts the client for the requested steps. `hot_swap` replaces the
client process with a new client file while the server keeps running and keeps its step count;
it returns the latency from the edit of the file to the first episode the new client began on
the server (the episode's `created_at`, read back through `GET /swarm/episodes/{id}`). `stop`
ends the client and, when this run started it, the server. The `TrainingRun` holds live
processes: it never goes into graph state (the workspace's `state/launch.json` is what survives).
"""

from __future__ import annotations

import logging
import math
import re
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from agentjet.core import AgentJetError, SwarmClient, TrainConfig
from agentjet.vibe.errors import VibeError
from agentjet.vibe.run.client_process import (
    ClientHandle,
    ClientSettings,
    Standby,
    resolve_sandbox,
    spawn_standby,
    start_client,
    stop_client,
    stop_stray_client,
)
from agentjet.vibe.run.episode_tap import TappedEpisode
from agentjet.vibe.run.swarm_server import (
    Progress,
    ServerHandle,
    connect_server,
    ensure_server,
    read_launch_file,
    stop_server,
    write_launch_file,
)
from agentjet.vibe.workspace import Workspace

__all__ = [
    "CONFIG_FILE",
    "LaunchOptions",
    "TrainingRun",
    "default_train_config",
    "episodes_per_step",
    "hot_swap",
    "launch",
    "record_config",
    "client_settings",
    "restart_client",
    "stop",
]

log = logging.getLogger(__name__)

CONFIG_FILE = "train.yaml"
_EPISODE_MARGIN = 3  # a client runs this many times the episodes its steps need; the watcher stops it at the target


def _quiet(line: str) -> None:
    log.info("%s", line)


@dataclass(frozen=True)
class LaunchOptions:
    """What to train and where. `sandbox="none"` or a missing sandbox needs `allow_unsandboxed`."""

    model: str = "smollm2-135m"
    steps: int = 10
    server_url: str | None = None  # reuse this server instead of starting one
    token: str | None = None  # its token (else AGENTJET_TOKEN)
    sandbox: str = "auto"  # auto, docker, bwrap, none
    allow_unsandboxed: bool = False  # the explicit opt-out: run the generated client on the host
    concurrency: int = 4
    params: tuple[str, ...] = ()  # `--param key=value` for the client's make_task
    train_config: TrainConfig | None = None  # None: default_train_config()
    eval_rounds: int = 4  # eval rounds spread over the run (0: none)
    eval_episodes: int = 4
    seed: int = 0
    ready_timeout_s: float = 600.0
    client_memory: str = "2g"

    def __post_init__(self) -> None:
        if self.steps < 1:
            raise VibeError(f"steps must be >= 1, got {self.steps}")


def default_train_config() -> TrainConfig:
    """Small GRPO steps (2 tasks x 4 episodes) so a CPU run shows its first step soon; LoRA lr of bench learn."""
    return TrainConfig.model_validate(
        {"grpo": {"group_size": 4}, "collect": {"strategy": "tasks", "tasks": 2}, "optim": {"lr": 2e-4}}
    )


def episodes_per_step(config: TrainConfig) -> int:
    """Train episodes one update consumes under the config's collection strategy (at least)."""
    if config.collect.strategy == "episodes":
        return config.collect.episodes
    return config.collect.tasks * config.grpo.group_size


@dataclass
class TrainingRun:
    """One launched training: live processes, so never part of graph state."""

    workspace: Path
    options: LaunchOptions
    server: ServerHandle
    client: ClientHandle
    sandbox: str
    started_at: float  # the vibe run's start (wall clock), given by the caller
    step_at_launch: int
    target_step: int
    per_step: int  # train episodes per step
    group_size: int
    first_step_at: float | None = None
    last_step: int = 0
    hot_swaps: list[dict[str, Any]] = field(default_factory=list)
    restarts: int = 0
    progress: Progress = _quiet
    standby: Standby | None = None  # the next client process, already started and waiting

    def swarm(self) -> SwarmClient:
        """A fresh SDK client for the server (close it after use)."""
        return self.server.swarm()

    @property
    def time_to_first_step_s(self) -> float | None:
        return None if self.first_step_at is None else self.first_step_at - self.started_at

    def note_step(self, step: int) -> None:
        """Record the server's step (the first one past the launch step fixes the time to first step)."""
        if step > self.step_at_launch and self.first_step_at is None:
            self.first_step_at = time.time()
            self.progress(f"first training step after {self.time_to_first_step_s:.1f} s")
        self.last_step = max(self.last_step, step)

    def client_settings(self, generation: int) -> ClientSettings:
        return client_settings(
            self.options,
            self.step_at_launch,
            max(self.last_step, self.step_at_launch),
            self.target_step,
            self.per_step,
            self.group_size,
            generation,
        )


def client_settings(
    options: LaunchOptions, launch_step: int, step: int, target: int, per_step: int, group: int, generation: int
) -> ClientSettings:
    """Enough episodes for the steps left (with a margin, whole groups), evals spread over the run."""
    left = max(1, target - step)
    episodes = math.ceil(left * per_step * _EPISODE_MARGIN / group) * group
    rounds = options.eval_rounds
    eval_every = per_step * max(1, (target - launch_step) // rounds) if rounds else None
    return ClientSettings(
        episodes=episodes,
        concurrency=options.concurrency,
        group_size=group,
        eval_every=eval_every,
        eval_episodes=options.eval_episodes,
        seed=options.seed + generation - 1,  # a new client process draws fresh items
        params=options.params,
        memory=options.client_memory,
    )


def record_config(workspace: Workspace, config: TrainConfig, message: str) -> Path:
    """Write the run's TrainConfig to train.yaml and commit it (what a restarted server reads)."""
    text = yaml.safe_dump(config.model_dump(mode="json"), sort_keys=False)
    path = workspace.write(CONFIG_FILE, f"# the run's TrainConfig (docs/training-config.md)\n{text}")
    workspace.commit(message, [CONFIG_FILE])
    return path


def _server_for(workspace: Workspace, options: LaunchOptions, progress: Progress) -> tuple[ServerHandle, int, int]:
    """(server, episodes per step, group size) for the run."""
    if options.server_url is not None:
        server = connect_server(options.server_url, options.token)
        progress(f"reusing the server at {server.url} (model {server.model}); its own config stays in force")
        with server.swarm() as swarm:
            pool = swarm.status().get("pool") or {}
        group = int(pool.get("group_size") or 4)
        return server, group * 4, group
    path = workspace.path / CONFIG_FILE
    if not (path.is_file() and "target_step" in read_launch_file(workspace.path)):  # a resume keeps its config
        config = options.train_config or default_train_config()
        record_config(
            workspace, config, f"launch: {CONFIG_FILE} (group_size {config.grpo.group_size}, lr {config.optim.lr})"
        )
    config = TrainConfig.model_validate(yaml.safe_load(path.read_text()))
    server = ensure_server(
        workspace.path,
        model=options.model,
        config_path=path,
        progress=progress,
        ready_timeout_s=options.ready_timeout_s,
    )
    return server, episodes_per_step(config), config.grpo.group_size


def launch(
    workspace: Workspace,
    client: Path | None = None,
    *,
    options: LaunchOptions,
    started_at: float,
    progress: Progress = _quiet,
) -> TrainingRun:
    """Bring the server up and start `client` (default: the workspace's client.py) for `options.steps`."""
    root = workspace.path
    client = client or root / "client.py"
    sandbox = resolve_sandbox(options.sandbox, allow_unsandboxed=options.allow_unsandboxed, progress=progress)
    record = read_launch_file(root)
    if isinstance(record.get("client_pid"), int):
        stop_stray_client(record["client_pid"], root)
    server, per_step, group = _server_for(workspace, options, progress)
    try:
        with server.swarm() as swarm:
            step = int(swarm.status().get("step") or 0)
        recorded = record.get("target_step") if server.is_ours else None
        target = recorded if isinstance(recorded, int) and recorded > step else step + options.steps
        write_launch_file(root, target_step=target)
        settings = client_settings(options, step, step, target, per_step, group, generation=1)
        handle = _start(root, server, sandbox, client, settings, generation=1)
    except BaseException:
        if server.process is not None:
            stop_server(server)
        raise
    run = TrainingRun(
        root,
        options,
        server,
        handle,
        sandbox,
        started_at,
        step,
        target,
        per_step,
        group,
        last_step=step,
        progress=progress,
    )
    run.standby = spawn_standby(root, token=server.client_token(_token_name(root)), sandbox=sandbox, generation=2)
    progress(f"client started ({_where(sandbox)}): training to step {target} from step {step}")
    return run


def _token_name(root: Path) -> str:
    """The run's client token: one name per run folder, so a resumed run replaces its own."""
    return re.sub(r"[^A-Za-z0-9_.:-]", "-", f"vibe-{root.name}")[:64]


def _where(sandbox: str) -> str:
    return "UNSANDBOXED on the host" if sandbox == "none" else f"in the {sandbox} sandbox"


def _start(
    root: Path,
    server: ServerHandle,
    sandbox: str,
    client: Path,
    settings: ClientSettings,
    *,
    generation: int,
    standby: Standby | None = None,
) -> ClientHandle:
    handle = start_client(
        root,
        client,
        server_url=server.url,
        token=server.client_token(_token_name(root)),
        sandbox=sandbox,
        settings=settings,
        generation=generation,
        standby=standby,
    )
    write_launch_file(root, client_pid=handle.process.pid, client_file=str(client))
    return handle


def restart_client(run: TrainingRun, client: Path | None = None) -> ClientHandle:
    """Stop the current client process and start `client` (default: the same file) in its place."""
    stop_client(run.client, run.server)
    return _start_next(run, client or run.client.path)


def _start_next(run: TrainingRun, client: Path, *, spawn_next: bool = True) -> ClientHandle:
    """The next client generation, in the waiting standby; then (or later) a standby for the one after."""
    generation = run.client.generation + 1
    settings = run.client_settings(generation)
    standby, run.standby = run.standby, None
    run.client = _start(
        run.workspace, run.server, run.sandbox, client, settings, generation=generation, standby=standby
    )
    if spawn_next:
        _spawn_next(run)
    return run.client


def _spawn_next(run: TrainingRun) -> None:
    generation = run.client.generation + 1
    token = run.server.client_token(_token_name(run.workspace))
    run.standby = spawn_standby(run.workspace, token=token, sandbox=run.sandbox, generation=generation)


def hot_swap(
    run: TrainingRun, new_client_path: Path, *, edited_at: float | None = None, timeout_s: float = 300.0
) -> float:
    """Replace the client with `new_client_path`; the server is untouched. Returns seconds from the
    edit (`edited_at`, default the file's mtime) to the new client's first episode begun on the server.

    The old process is stopped while the new one starts (its interpreter and sandbox take the
    longest), so the swap costs the slower of the two, not their sum."""
    edited = edited_at if edited_at is not None else new_client_path.stat().st_mtime
    old = run.client
    stopping = threading.Thread(target=stop_client, args=(old, run.server), name="vibe-stop-old-client")
    stopping.start()
    started = time.time()
    handle = _start_next(run, new_client_path, spawn_next=False)  # nothing else competes for the CPU now
    try:
        first = _first_episode(handle, timeout_s)
    finally:
        stopping.join()
        _spawn_next(run)
    begun = first.begun_at
    try:
        with run.swarm() as swarm:
            begun = float(swarm.get_episode(first.episode_id)["created_at"])
    except (AgentJetError, KeyError, TypeError, ValueError) as exc:  # fall back to the time the tap saw it
        log.warning("could not read episode %s back: %s", first.episode_id, exc)
    latency = max(0.0, begun - edited)
    run.hot_swaps.append(
        {
            "from_generation": old.generation,
            "generation": handle.generation,
            "client": str(new_client_path),
            "latency_s": round(latency, 3),
            "process_to_episode_s": round(begun - started, 3),
            "first_episode": first.episode_id,
        }
    )
    run.progress(f"hot-swapped the client (generation {handle.generation}) in {latency:.2f} s; server not restarted")
    return latency


def _first_episode(handle: ClientHandle, timeout_s: float) -> TappedEpisode:
    deadline = time.monotonic() + timeout_s
    while True:
        first = handle.tap.wait_first(0.05)
        if first is not None:
            return first
        if handle.exit_code is not None:
            raise VibeError(
                f"the new client exited ({handle.exit_code}) before its first episode:\n{handle.log_tail()}"
            )
        if time.monotonic() > deadline:
            raise VibeError(f"the new client began no episode within {timeout_s:.0f} s:\n{handle.log_tail()}")


def stop(run: TrainingRun, *, keep_server: bool = False) -> None:
    """Stop the client, then the server unless it is reused (or `keep_server`)."""
    if run.standby is not None:
        run.standby.close()
        run.standby = None
    stop_client(run.client, run.server)
    write_launch_file(run.workspace, client_pid=None)
    if not keep_server and run.server.is_ours:
        stop_server(run.server)
        write_launch_file(run.workspace, server_pid=None)
