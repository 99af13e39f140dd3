"""The server a chaos case attacks: a subprocess we can watch (RSS, health latency) and kill -9."""

from __future__ import annotations

import contextlib
import signal
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import psutil
import yaml

from agentjet.vibe.run.swarm_server import ServerHandle, start_server, stop_server

__all__ = ["HealthProbe", "Target", "kill9", "launch", "rss_mb"]

CHAOS_CONFIG: dict[str, Any] = {
    "grpo": {"group_size": 2},
    "collect": {"strategy": "tasks", "tasks": 1},
    "optim": {"lr": 5e-3},
    "checkpoint_every": 2,
}


@dataclass
class Target:
    """A running server: its URL, admin token and process id (for RSS and kill -9)."""

    url: str
    token: str
    pid: int | None
    state_dir: Path | None = None
    handle: ServerHandle | None = None

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"}

    def status(self) -> dict[str, Any]:
        reply = httpx.get(f"{self.url}/swarm/status", headers=self.headers, timeout=30)
        reply.raise_for_status()
        body: dict[str, Any] = reply.json()
        return body

    def begin(self, task: str = "t") -> dict[str, Any]:
        reply = httpx.post(f"{self.url}/swarm/episodes", json={"task_id": task}, headers=self.headers, timeout=30)
        reply.raise_for_status()
        body: dict[str, Any] = reply.json()
        return body


def launch(
    folder: Path,
    *,
    model: str = "tiny",
    config: dict[str, Any] | None = None,
    state_dir: Path | None = None,
    extra_args: tuple[str, ...] = (),
) -> Target:
    """A `model` server on `state_dir` (default `folder/state`; reused across kill -9 rounds), rolling."""
    folder.mkdir(parents=True, exist_ok=True)
    config_path = folder / "train.yaml"
    config_path.write_text(yaml.safe_dump(config or CHAOS_CONFIG))
    state = state_dir or folder / "state"
    handle = start_server(state, folder / "server.log", model=model, config_path=config_path, extra_args=extra_args)
    return Target(handle.url, handle.token, handle.pid, state, handle)


def stop(target: Target) -> None:
    if target.handle is not None:
        stop_server(target.handle)


def kill9(target: Target) -> None:
    assert target.handle is not None and target.handle.process is not None
    target.handle.process.send_signal(signal.SIGKILL)
    target.handle.process.wait(timeout=30)


def rss_mb(pid: int | None) -> float | None:
    if pid is None:
        return None
    with contextlib.suppress(psutil.Error):
        rss: int = psutil.Process(pid).memory_info().rss
        return round(rss / 2**20, 1)
    return None


@dataclass
class HealthProbe:
    """Polls `/health` in a thread while an attack runs: the worst latency, and any failure."""

    url: str
    latencies_s: list[float] = field(default_factory=list)
    failures: int = 0
    _stop: threading.Event = field(default_factory=threading.Event)

    @contextlib.contextmanager
    def running(self) -> Iterator[HealthProbe]:
        thread = threading.Thread(target=self._poll, daemon=True)
        thread.start()
        try:
            yield self
        finally:
            self._stop.set()
            thread.join(timeout=120)

    def _poll(self) -> None:
        with httpx.Client(timeout=120) as http:
            while not self._stop.is_set():
                started = time.monotonic()
                try:
                    ok = http.get(f"{self.url}/health").status_code == 200
                except httpx.HTTPError:
                    ok = False
                self.latencies_s.append(time.monotonic() - started)
                self.failures += not ok
                time.sleep(0.05)

    def figures(self) -> dict[str, Any]:
        return {
            "health_polls": len(self.latencies_s),
            "health_max_latency_s": round(max(self.latencies_s, default=0.0), 3),
            "health_failures": self.failures,
        }
