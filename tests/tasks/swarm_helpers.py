"""Helpers for the runner tests: a scripted reply, test families, journals, tiny training servers."""

from __future__ import annotations

import re
import socket
import subprocess
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import yaml

from agentjet.core import SwarmClient, TrainConfig
from agentjet.core.config import ServerSettings
from agentjet.core.episodes.journal import Journal
from agentjet.core.server.app import create_app
from agentjet.core.testing import RunningServer, serve_in_thread
from agentjet.core.types import EpisodeRecord
from agentjet.tasks.base import POLICY, Endpoint, Outcome, Split, TaskItem
from tests.conftest import TOKEN, _wait_rolling
from tests.core.server_process import SERVER_TOKEN, start_training_server

__all__ = [
    "SERVER_TOKEN",
    "TOKEN",
    "ChatFamily",
    "chat",
    "journal",
    "say_the_word",
    "tiny_training_server",
    "tiny_training_server_process",
    "wait_for_step",
]

RewardFn = Callable[[str, TaskItem, str], float]  # (server name, item, reply) -> reward


def say_the_word(prompt: str) -> str:
    """A scripted policy for FirstWord: it says the asked word (so the reward is 1)."""
    match = re.search(r"the word '([a-z]+)'", prompt)
    return match.group(1) if match else "no"


def chat(endpoint: Endpoint, content: str, seed: int, max_tokens: int = 4) -> str:
    """One chat call over raw HTTP; returns the reply text."""
    reply = httpx.post(
        f"{endpoint.base_url}/chat/completions",
        json={
            "model": endpoint.model,
            "messages": [{"role": "user", "content": content}],
            "max_tokens": max_tokens,
            "seed": seed,
            "temperature": 1.0,
        },
        headers={"Authorization": f"Bearer {endpoint.api_key}"},
        timeout=120,
    )
    reply.raise_for_status()
    return str(reply.json()["choices"][0]["message"]["content"] or "")


class ChatFamily:
    """A test family: one chat call per server, a reward per server from `reward`; items in `fail` raise."""

    def __init__(
        self,
        name: str = "chat",
        servers: Sequence[str] = (POLICY,),
        reward: RewardFn = lambda server, item, reply: float(item.seed % 2),
        fail: frozenset[str] = frozenset(),
        rewards_override: Mapping[str, float] | None = None,
    ) -> None:
        self.name: str = name
        self.servers: Sequence[str] = tuple(servers)
        self.reward = reward
        self.fail, self.rewards_override = fail, rewards_override

    def items(self, split: Split, *, count: int, seed: int) -> list[TaskItem]:
        return [TaskItem(f"{self.name}-{split}-{seed}-{i}", seed * 1000 + i, {"i": i}) for i in range(count)]

    def run(self, item: TaskItem, llms: Mapping[str, Endpoint]) -> Outcome:
        replies = {server: chat(llms[server], f"{self.name} {item.task_id}", item.seed) for server in self.servers}
        if item.task_id in self.fail:
            raise RuntimeError(f"agent broke on {item.task_id}")
        rewards = self.rewards_override or {s: self.reward(s, item, replies[s]) for s in self.servers}
        return Outcome(rewards, {"seed": item.seed, "servers": sorted(replies)})


def journal(state_dir: Path) -> list[EpisodeRecord]:
    """Every closed episode a server journaled (read beside the live server: SQLite WAL)."""
    store = Journal(state_dir / "journal.sqlite")
    try:
        return [record for _, record in store.read_from(0)]
    finally:
        store.close()


@contextmanager
def tiny_training_server(state_dir: Path, config: TrainConfig, **settings: Any) -> Iterator[RunningServer]:
    """A real server on the tiny model (transformers backend, LoRA trainer) over its own state dir."""
    state_dir.mkdir(parents=True, exist_ok=True)
    config_file = state_dir / "train.yaml"
    config_file.write_text(yaml.safe_dump(config.model_dump(mode="json")))
    server_settings = ServerSettings(
        model="tiny", state_dir=state_dir, token=TOKEN, config=config_file, max_batch_size=8, **settings
    )
    with serve_in_thread(create_app(server_settings)) as running:
        _wait_rolling(running.url)
        yield running


@contextmanager
def tiny_training_server_process(state_dir: Path, config: TrainConfig) -> Iterator[str]:
    """The same as a subprocess (token SERVER_TOKEN); yields its URL. Use it for several servers at once:
    transformers' model loading is not thread-safe, so two servers in one process may race
    ("Cannot copy out of meta tensor") when both load a model at the same moment."""
    state_dir.mkdir(parents=True, exist_ok=True)
    (state_dir / "train.yaml").write_text(yaml.safe_dump(config.model_dump(mode="json")))
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = int(sock.getsockname()[1])
    proc = start_training_server(state_dir, port)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def wait_for_step(client: SwarmClient, step: int, timeout_s: float = 120.0) -> dict[str, Any]:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        status = client.status()
        if status["step"] >= step and status["state"] == "rolling":
            return status
        time.sleep(0.05)
    raise TimeoutError(f"never reached step {step}: {client.status()}")
