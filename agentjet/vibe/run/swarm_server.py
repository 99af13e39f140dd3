"""The swarm server of a vibe run: start one as a subprocess, adopt the one a killed run left, or reuse a URL.

A started server is the core's `ServerProcess`: a free loopback port, its own state dir in the
workspace (`state/`), a generated token in `state/token` (mode 600, handed over with
`--token-file`, never in argv) and the run's `train.yaml`. `state/launch.json` remembers its pid
and URL, so a resumed run (after `kill -9` of the orchestrator) adopts the server still running
instead of starting a second one on the same state dir: the run's own server outlives the process
that started it, a throwaway one (`start_server`'s default) does not. Only the public HTTP API is
used to talk to it.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from agentjet.core import (
    AgentJetError,
    ServerProcess,
    ServerStartFailed,
    SwarmClient,
    TokenNotFound,
    pid_alive,
    process_mentions,
    stop_process_group,
)
from agentjet.vibe.errors import VibeError

__all__ = [
    "LOGS_DIR",
    "STATE_DIR",
    "Progress",
    "ServerHandle",
    "connect_server",
    "ensure_server",
    "read_launch_file",
    "server_place",
    "start_server",
    "stop_recorded_servers",
    "stop_server",
    "write_launch_file",
]

log = logging.getLogger(__name__)

Progress = Callable[[str], None]
STATE_DIR = "state"  # the server's state dir, inside the workspace (git-ignored)
LOGS_DIR = "state/logs"  # server and client logs (run state too: ignored)
LAUNCH_FILE = "launch.json"
_PROGRESS_EVERY_S = 5.0


@dataclass
class ServerHandle:
    """A server the run trains on. `launched` is set when this process started it; `pid` when it is ours."""

    url: str
    token: str
    model: str
    pid: int | None = None
    launched: ServerProcess | None = None
    state_dir: Path | None = None
    log_path: Path | None = None
    cold_start_s: float | None = None  # process start -> rolling, when started here
    adopted: bool = False
    _client_token: str | None = None

    def client_token(self, name: str) -> str:
        """The token the run's client processes get: a client token named `name` (least privilege: it
        can begin and end only its own episodes), issued once per handle; the previous one of that name
        (a resumed run's) is revoked first. Given a token that cannot issue tokens, that token."""
        if self._client_token is None:
            with self.swarm() as swarm:
                try:
                    with contextlib.suppress(TokenNotFound):
                        swarm.revoke_token(name)
                    self._client_token = str(swarm.create_token(name)["token"])
                except AgentJetError as exc:  # a client token (403), or a server without client tokens
                    log.info("client processes use the run's token: no client token issued (%s)", exc)
                    self._client_token = self.token
        return self._client_token

    @property
    def process(self) -> subprocess.Popen[bytes] | None:
        """The server's process, when this process started it."""
        return self.launched.process if self.launched is not None else None

    @property
    def is_ours(self) -> bool:
        return self.pid is not None

    def is_alive(self) -> bool:
        if self.launched is not None:
            return self.launched.is_alive()
        return self.pid is not None and pid_alive(self.pid)

    def swarm(self, *, retries: int = 3, timeout_s: float = 30.0) -> SwarmClient:
        return SwarmClient(self.url, token=self.token, retries=retries, timeout_s=timeout_s)

    def read_config(self) -> dict[str, Any]:
        """The server's live TrainConfig (`GET /swarm/config`) as JSON; VibeError when it cannot be read."""
        headers = {"Authorization": f"Bearer {self.token}"}
        try:
            reply = httpx.get(f"{self.url}/swarm/config", headers=headers, timeout=10.0)
            reply.raise_for_status()
            config = reply.json()["config"]
        except (httpx.HTTPError, ValueError, KeyError, TypeError) as exc:
            raise VibeError(f"cannot read the server's config: {exc}") from exc
        if not isinstance(config, dict):
            raise VibeError(f"the server's config is no JSON object: {config!r}")
        return config

    def apply_config(self, changes: Mapping[str, Any]) -> dict[str, Any]:
        """Read the live config, set each dotted field (`optim.lr`), `PUT` it back; the config the server took."""
        current = self.read_config()
        for dotted, value in changes.items():
            *parents, leaf = dotted.split(".")
            node = current
            for part in parents:
                node = node[part]
            node[leaf] = value
        with self.swarm() as swarm:
            return swarm.configure(current)

    def hold_policy(self, hold: bool) -> bool:
        """Set the server's `collect.hold` (no update starts while held); False when the server would not take
        it (a reused server given a client token), which the caller reports."""
        try:
            self.apply_config({"collect.hold": hold})
        except (AgentJetError, VibeError) as exc:
            log.warning("could not %s the policy of %s: %s", "hold" if hold else "release", self.url, exc)
            return False
        return True


def read_launch_file(workspace: Path) -> dict[str, Any]:
    """What the last launch in this workspace recorded ({} if nothing)."""
    path = workspace / STATE_DIR / LAUNCH_FILE
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def write_launch_file(workspace: Path, **fields: Any) -> None:
    """Merge `fields` into `state/launch.json` (written whole, then renamed)."""
    data = {**read_launch_file(workspace), **fields}
    path = workspace / STATE_DIR / LAUNCH_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(data, indent=2))
    tmp.replace(path)


def _answers_health(url: str) -> bool:
    try:
        return httpx.get(f"{url}/health", timeout=2.0).status_code == 200
    except httpx.HTTPError:
        return False


def connect_server(url: str, token: str | None) -> ServerHandle:
    """Reuse a running server (`--server URL`): its status must answer with this token."""
    token = token or os.environ.get("AGENTJET_TOKEN")
    if not token:
        raise VibeError(f"reusing {url} needs its server token: pass --token or set AGENTJET_TOKEN")
    try:
        with SwarmClient(url, token=token, retries=2, timeout_s=10.0) as client:
            status = client.status()
    except AgentJetError as exc:
        raise VibeError(f"the server at {url} does not answer /swarm/status with this token: {exc}") from exc
    return ServerHandle(url=url.rstrip("/"), token=token, model=str(status.get("model", "?")))


def server_place(workspace: Path, policy: str | None = None) -> tuple[Path, Path]:
    """(state dir, log file) of the run's server for `policy`: `state/` for the run's (first) server,
    `state/policies/NAME/` for each further policy of a run whose policies train apart."""
    if policy is None:
        return workspace / STATE_DIR, workspace / LOGS_DIR / "server.log"
    return workspace / STATE_DIR / "policies" / policy, workspace / LOGS_DIR / f"server-{policy}.log"


def _recorded(workspace: Path, policy: str | None) -> dict[str, Any]:
    """What launch.json holds of that server: pid, url, model (the first's at the top level)."""
    record = read_launch_file(workspace)
    if policy is None:
        return {"pid": record.get("server_pid"), "url": record.get("server_url"), "model": record.get("model")}
    servers = record.get("policy_servers")
    found = servers.get(policy) if isinstance(servers, dict) else None
    return found if isinstance(found, dict) else {}


def _remember(workspace: Path, policy: str | None, handle: ServerHandle, model: str) -> None:
    if policy is None:
        write_launch_file(workspace, server_pid=handle.pid, server_url=handle.url, model=model)
        return
    servers = read_launch_file(workspace).get("policy_servers")
    servers = dict(servers) if isinstance(servers, dict) else {}
    servers[policy] = {"pid": handle.pid, "url": handle.url, "model": model}
    write_launch_file(workspace, policy_servers=servers)


def _adopt(workspace: Path, model: str, policy: str | None = None) -> ServerHandle | None:
    """The server a killed run left running on this workspace's state dir, if it still answers."""
    record = _recorded(workspace, policy)
    (state, log_path), pid, url = server_place(workspace, policy), record.get("pid"), record.get("url")
    if not isinstance(pid, int) or not isinstance(url, str) or not process_mentions(pid, str(state)):
        return None
    if not _answers_health(url):
        return None
    token = (state / "token").read_text().strip()
    log.info("adopting the running server pid=%d url=%s", pid, url)
    return ServerHandle(
        url=url,
        token=token,
        model=str(record.get("model") or model),
        pid=pid,
        state_dir=state,
        log_path=log_path,
        adopted=True,
    )


def stop_recorded_servers(workspace: Path, timeout_s: float = 30.0) -> int:
    """Stop every server launch.json records that still runs on this workspace's state dirs (the first, then each
    policy's), whether it answers or not: what a process that did not start them can stop. How many it stopped."""
    policies = read_launch_file(workspace).get("policy_servers")
    names: list[str | None] = [None, *(policies if isinstance(policies, dict) else {})]
    stopped = 0
    for name in names:
        pid, (state, _) = _recorded(workspace, name).get("pid"), server_place(workspace, name)
        if isinstance(pid, int) and pid_alive(pid) and process_mentions(pid, str(state)):
            stop_process_group(pid, grace_s=timeout_s)
            stopped += 1
    return stopped


def ensure_server(
    workspace: Path,
    *,
    model: str,
    config_path: Path,
    progress: Progress,
    ready_timeout_s: float = 600.0,
    policy: str | None = None,
) -> ServerHandle:
    """The run's own server (for `policy`, when its policies train apart): adopted if one still runs on its
    state dir, else started and waited for."""
    adopted = _adopt(workspace, model, policy)
    if adopted is not None:
        progress(f"server already running (pid {adopted.pid}, {adopted.url}): adopted, not restarted")
        return adopted
    state, log_path = server_place(workspace, policy)
    return start_server(
        state, log_path, model=model, config_path=config_path, progress=progress, ready_timeout_s=ready_timeout_s,
        on_spawn=lambda handle: _remember(workspace, policy, handle, model), die_with_parent=False,
    )  # fmt: skip


def start_server(
    state: Path,
    log_path: Path,
    *,
    model: str,
    config_path: Path | None = None,
    progress: Progress = lambda _: None,
    ready_timeout_s: float = 600.0,
    on_spawn: Callable[[ServerHandle], None] | None = None,
    extra_args: Sequence[str] = (),
    die_with_parent: bool = True,
) -> ServerHandle:
    """`agentjet server start` on a free loopback port with a fresh token in `state/token`, waited for
    until it rolls; stopped again (and VibeError with its log's tail) if it never does. `extra_args` go on
    its command line (e.g. `--idle-timeout-s 2`; never a token); `on_spawn` hears of each process started
    (a retry on a new port is a new one). With `die_with_parent=False` it outlives this process."""
    flags = ["--log-level", "WARNING", *(["--config", str(config_path)] if config_path is not None else [])]
    handle = ServerHandle("", "", model, state_dir=state, log_path=log_path)

    def started(server: ServerProcess) -> None:
        handle.url, handle.pid = server.url, server.pid
        if on_spawn is not None:
            on_spawn(handle)

    server = ServerProcess(
        model, state, log_path=log_path, flags=[*flags, *extra_args], die_with_parent=die_with_parent,
        env={**os.environ, "TOKENIZERS_PARALLELISM": "false"}, on_start=started,
    )  # fmt: skip
    handle.url, handle.token, handle.launched = server.url, server.token, server
    progress(f"starting a {model} server on {server.url} (state {state})")
    begun = time.monotonic()
    try:
        server.start()
        server.wait_ready(
            begun + ready_timeout_s,
            progress=lambda engine, waited_s: progress(f"server {engine or 'starting'}... {waited_s:.0f} s"),
            progress_every_s=_PROGRESS_EVERY_S,
        )
    except ServerStartFailed as exc:
        stop_server(handle)
        raise VibeError(str(exc)) from exc
    except BaseException:
        stop_server(handle)
        raise
    handle.cold_start_s = time.monotonic() - begun
    progress(f"server ready in {handle.cold_start_s:.1f} s")
    return handle


def stop_server(handle: ServerHandle, timeout_s: float = 30.0) -> None:
    """Stop a server this run owns (SIGTERM to its process group, then SIGKILL); a reused one is left alone."""
    if handle.pid is not None:
        stop_process_group(handle.pid, process=handle.process, grace_s=timeout_s)
