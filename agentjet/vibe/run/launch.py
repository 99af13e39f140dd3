"""Launch a vibe run's training: the server (started, adopted or reused), the sandboxed client, its next
generations and the held-out client.

`launch` writes the run's `train.yaml` into the workspace (committed), brings a server up (takes the one
validation started, `early_server`, or reuses `--server URL`), and starts the client for the requested
steps. The base's held-out round (with `eval_episodes`) is played by a second client beside training on the
base weights (`client run --base-model`, `start_base_client`), once the first step is in, so the first
update waits for no eval; a launch from a trained policy (a reused server past step 0) instead starts that
client now, the policy held still until its round is counted. `restart_client` and `start_next_client` put
the next client generation in place (in its waiting standby); `start_eval_client` one that plays only the
held-out round. `stop` ends the client and, when this run started it, the server. A run whose policies train
apart (`LaunchOptions.policies`, e.g. the wolves and the village of a werewolves game with separate models)
gets one server per policy, all on the same train.yaml: the first policy's on `state/`, each other's on
`state/policies/NAME/`; the client reaches each as the task's server of that name. The `TrainingRun` holds
live processes: it never goes into graph state (the workspace's `state/launch.json` is what survives).
"""

from __future__ import annotations

import logging
import re
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import yaml

from agentjet.core import SwarmClient, TrainConfig
from agentjet.vibe.errors import VibeError
from agentjet.vibe.run.client_process import (
    ClientHandle,
    ClientSettings,
    Standby,
    Upstream,
    resolve_sandbox,
    spawn_standby,
    start_client,
    stop_client,
    stop_stray_client,
)
from agentjet.vibe.run.launch_options import LaunchOptions, client_settings, eval_only
from agentjet.vibe.run.recipe import default_train_config, episodes_per_step
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
    "HELD_FOR_CHECKS",
    "TrainingRun",
    "launch",
    "record_config",
    "release_checks_hold",
    "base_apart",
    "restart_client",
    "spawn_next_standby",
    "start_base_client",
    "start_eval_client",
    "start_next_client",
    "stop",
    "stop_stray_clients",
    "write_config",
]

log = logging.getLogger(__name__)

CONFIG_FILE = "train.yaml"
HELD_FOR_CHECKS = "held_for_checks"  # launch.json: the workspace commit a training held beside the checks began at


def _quiet(line: str) -> None:
    log.info("%s", line)


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
    eval_client: ClientHandle | None = None  # a held-out round's client beside the training one, until counted
    policy_servers: dict[str, ServerHandle] = field(default_factory=dict)  # policies apart: name -> server

    def upstreams(self) -> list[Upstream]:
        """The client's servers: one per policy by name when they train apart, else the one server."""
        return list(self.policy_servers.items()) or [(None, self.server)]

    def all_servers(self) -> list[ServerHandle]:
        return [server for _, server in self.upstreams()]

    def exited_server(self) -> ServerHandle | None:
        """A server this run started whose process has exited (one it reuses by URL is never counted)."""
        return next((server for server in self.all_servers() if server.is_ours and not server.is_alive()), None)

    def hold_policy(self, hold: bool) -> bool:
        """Hold (or release) every server's policy; False when one would not take it."""
        return all([server.hold_policy(hold) for server in self.all_servers()])

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


def record_config(workspace: Workspace, config: TrainConfig, message: str) -> Path:
    """Write the run's TrainConfig to train.yaml and commit it (what a restarted server reads)."""
    text = yaml.safe_dump(config.model_dump(mode="json"), sort_keys=False)
    path = workspace.write(CONFIG_FILE, f"# the run's TrainConfig (docs/training-config.md)\n{text}")
    workspace.commit(message, [CONFIG_FILE])
    return path


def write_config(workspace: Workspace, options: LaunchOptions) -> Path:
    """The run's train.yaml: written and committed from `options` at the first launch (or an early server's
    start), kept as it is once a launch recorded its target step (a resume trains on what it started with)."""
    path = workspace.path / CONFIG_FILE
    if not (path.is_file() and "target_step" in read_launch_file(workspace.path)):
        config = options.train_config or default_train_config()
        record_config(
            workspace, config, f"launch: {CONFIG_FILE} (group_size {config.grpo.group_size}, lr {config.optim.lr})"
        )
    return path


def _server_for(
    workspace: Workspace, options: LaunchOptions, progress: Progress, prepared: ServerHandle | None = None
) -> tuple[ServerHandle, dict[str, ServerHandle], int, int]:
    """(the run's server, every policy's server by name when they train apart, episodes per step, group size).

    `prepared` is the run's first server when it was started before (`early_server`)."""
    if options.server_url is not None:
        server = connect_server(options.server_url, options.token)
        progress(f"reusing the server at {server.url} (model {server.model}); its own config stays in force")
        with server.swarm() as swarm:
            pool = swarm.status().get("pool") or {}
        group = int(pool.get("group_size") or 4)
        return server, {}, group * 4, group
    path = write_config(workspace, options)
    config = TrainConfig.model_validate(yaml.safe_load(path.read_text()))
    names: list[str | None] = [None] if len(options.policies) < 2 else [None, *options.policies[1:]]
    started: list[ServerHandle] = []
    try:
        for name in names:
            if name is not None or len(names) > 1:
                progress(f"the server of policy {name or options.policies[0]!r}")
            if name is None and prepared is not None:
                progress(f"server ready (pid {prepared.pid}, {prepared.url}): started during validation")
                started.append(prepared)
                continue
            started.append(
                ensure_server(
                    workspace.path,
                    model=options.model,
                    config_path=path,
                    progress=progress,
                    ready_timeout_s=options.ready_timeout_s,
                    policy=name,
                )
            )
    except BaseException:
        for server in started:
            if server.process is not None:
                stop_server(server)
        raise
    apart = dict(zip(options.policies, started, strict=True)) if len(names) > 1 else {}
    return started[0], apart, episodes_per_step(config), config.grpo.group_size


def launch(
    workspace: Workspace,
    client: Path | None = None,
    *,
    options: LaunchOptions,
    started_at: float,
    progress: Progress = _quiet,
    server: ServerHandle | None = None,
    hold: bool = False,
) -> TrainingRun:
    """Bring the server up (or take `server`, the run's own started before) and start `client` (default:
    the workspace's client.py) for `options.steps`. With `hold` every server is held still before the client
    starts (training beside the checks, `early_server.start_beside_checks`); a launch without it releases such a hold
    that a killed process left."""
    root = workspace.path
    client = client or root / "client.py"
    sandbox = resolve_sandbox(options.sandbox, allow_unsandboxed=options.allow_unsandboxed, progress=progress)
    record = read_launch_file(root)
    stop_stray_clients(root, record)
    server, apart, per_step, group = _server_for(workspace, options, progress, server)
    upstreams: list[Upstream] = list(apart.items()) or [(None, server)]
    try:
        step = min(_step_of(s) for _, s in upstreams)
        recorded = record.get("target_step") if server.is_ours else None
        target = recorded if isinstance(recorded, int) and recorded > step else step + options.steps
        write_launch_file(root, target_step=target)
        if hold:  # no update until the checks pass; launch.json says at which commit of the files it began
            if not all([held.hold_policy(True) for _, held in upstreams]):
                raise VibeError("a server of the run would not hold its policy still")
            write_launch_file(root, **{HELD_FOR_CHECKS: workspace.head() or "uncommitted"})
        elif record.get(HELD_FOR_CHECKS):  # a killed process's training beside the checks, which passed since
            release_checks_hold(root, [held for _, held in upstreams])
        first = not hold and options.eval_episodes > 0 and "eval_before" not in record and not base_apart(record, step)
        eval_client = None
        if first:  # the launch policy's round and the training client start together, the policy held still
            for _, held in upstreams:
                held.hold_policy(True)
            settings = eval_only(client_settings(options, step, step, target, per_step, group, 1), options)
            eval_client = _start(root, upstreams, sandbox, client, settings, generation=1, pid_key="eval_client_pid")
        generation = 2 if first else 1
        settings = client_settings(options, step, step, target, per_step, group, generation)
        handle = _start(root, upstreams, sandbox, client, settings, generation=generation)
    except BaseException:
        if eval_client is not None:
            stop_client(eval_client)
        for _, started in upstreams:
            if started.process is not None:
                stop_server(started)
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
        policy_servers=apart,
        eval_client=eval_client,
    )
    run.standby = spawn_standby(root, sandbox=sandbox, generation=handle.generation + 1)
    progress(f"client started ({_where(sandbox)}): training to step {target} from step {step}")
    return run


def stop_stray_clients(root: Path, record: dict[str, Any]) -> None:
    """Stop the client processes a launch.json `record` names (a killed orchestrator's, left running)."""
    for key in ("client_pid", "eval_client_pid"):
        if isinstance(record.get(key), int):
            stop_stray_client(record[key], root)


def release_checks_hold(root: Path, servers: list[ServerHandle]) -> None:
    """Let every server train again once the checks a training was held beside have passed."""
    for server in servers:
        server.hold_policy(False)
    write_launch_file(root, **{HELD_FOR_CHECKS: None})


def _step_of(server: ServerHandle) -> int:
    with server.swarm() as swarm:
        return int(swarm.status().get("step") or 0)


def _token_name(root: Path) -> str:
    """The run's client token: one name per run folder, so a resumed run replaces its own."""
    return re.sub(r"[^A-Za-z0-9_.:-]", "-", f"vibe-{root.name}")[:64]


def _where(sandbox: str) -> str:
    return "UNSANDBOXED on the host" if sandbox == "none" else f"in the {sandbox} sandbox"


def _start(
    root: Path,
    upstreams: list[Upstream],
    sandbox: str,
    client: Path,
    settings: ClientSettings,
    *,
    generation: int,
    standby: Standby | None = None,
    pid_key: str = "client_pid",
) -> ClientHandle:
    handle = start_client(
        root,
        client,
        servers=upstreams,
        token_name=_token_name(root),
        sandbox=sandbox,
        settings=settings,
        generation=generation,
        standby=standby,
    )
    write_launch_file(root, **{pid_key: handle.process.pid}, client_file=str(client))
    return handle


def restart_client(run: TrainingRun, client: Path | None = None) -> ClientHandle:
    """Stop the current client process and start `client` (default: the same file) in its place."""
    stop_client(run.client)
    return start_next_client(run, client or run.client.path)


def start_next_client(run: TrainingRun, client: Path, *, spawn_next: bool = True) -> ClientHandle:
    """The next client generation, in the waiting standby; then (or later) a standby for the one after."""
    generation = run.client.generation + 1
    settings = run.client_settings(generation)
    standby, run.standby = run.standby, None
    run.client = _start(
        run.workspace, run.upstreams(), run.sandbox, client, settings, generation=generation, standby=standby
    )
    if spawn_next:
        spawn_next_standby(run)
    return run.client


def spawn_next_standby(run: TrainingRun) -> None:
    run.standby = spawn_standby(run.workspace, sandbox=run.sandbox, generation=run.client.generation + 1)


def base_apart(record: dict[str, Any], step: int) -> bool:
    """Is the run's "before" the base itself (launched at step 0, now or before a resume)? Then its held-out
    round runs on the base weights beside training (`start_base_client`), not on a held policy first."""
    return int(record.get("eval_launch_step", step)) == 0


def start_base_client(run: TrainingRun) -> ClientHandle:
    """A client beside the training one that plays only the held-out round, on the base weights (generation 0:
    client-0.log); the caller keeps it in `run.eval_client` until its round is counted."""
    settings = replace(eval_only(run.client_settings(0), run.options), base_model=True)
    run.eval_client = _start(
        run.workspace, run.upstreams(), run.sandbox, run.client.path, settings, generation=0, pid_key="eval_client_pid"
    )
    return run.eval_client


def start_eval_client(run: TrainingRun) -> ClientHandle:
    """Replace the client with one that plays only the held-out round (of the policy the caller holds still)."""
    stop_client(run.client)
    generation = run.client.generation + 1
    settings = eval_only(run.client_settings(generation), run.options)
    standby, run.standby = run.standby, None
    run.client = _start(
        run.workspace, run.upstreams(), run.sandbox, run.client.path, settings, generation=generation, standby=standby
    )
    return run.client


def stop(run: TrainingRun, *, keep_server: bool = False) -> None:
    """Stop the client, then the server unless it is reused (or `keep_server`)."""
    if run.standby is not None:
        run.standby.close()
        run.standby = None
    if run.eval_client is not None:
        stop_client(run.eval_client)
        run.eval_client = None
    stop_client(run.client)
    write_launch_file(run.workspace, client_pid=None, eval_client_pid=None)
    if not keep_server and run.server.is_ours:
        for server in run.all_servers():
            stop_server(server)
        write_launch_file(run.workspace, server_pid=None, policy_servers={})
