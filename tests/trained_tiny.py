"""A real `tiny` server trained one GRPO step (one group of two episodes: rewards 1 and 0), for tests that need a
state dir with a trained step: the chat's checkpoint policies, `agentjet export`."""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import openai
import yaml

from agentjet.core import ServerProcess, SwarmClient

TRAIN = {
    "checkpoint_every": 1,
    "collect": {"strategy": "tasks", "tasks": 1},
    "grpo": {"group_size": 2},
    "optim": {"lr": 0.05},  # large, so one step visibly moves the policy
}


@contextmanager
def tiny_after_one_step(
    root: Path, train: Mapping[str, Any] | None = None, *, dtype: str = "auto"
) -> Iterator[tuple[ServerProcess, SwarmClient]]:
    """Start a `tiny` server on `root/state` (TRAIN, with `train`'s top-level keys on top; `--dtype dtype`), train
    one step and wait until it serves it; stop it on exit."""
    (root / "train.yaml").write_text(yaml.safe_dump({**TRAIN, **(train or {})}))
    server = ServerProcess(
        "tiny",
        root / "state",
        log_path=root / "server.log",
        flags=["--config", str(root / "train.yaml"), "--dtype", dtype],
    )
    server.start()
    try:
        server.wait_ready(time.monotonic() + 120)
        with SwarmClient(server.url, token=server.token) as client:
            for reward in (1.0, 0.0):
                with client.episode("the-task") as episode:
                    agent = openai.OpenAI(base_url=episode.base_url, api_key=episode.api_key, max_retries=0)
                    agent.chat.completions.create(
                        model="tiny", messages=[{"role": "user", "content": "hi"}], max_tokens=8
                    )
                    episode.end(reward=reward)
            deadline = time.monotonic() + 120
            while httpx.get(f"{server.url}/health").json()["policy_version"] < 1:  # step 1 trained and served
                assert time.monotonic() < deadline, "no update within 120 s"
                time.sleep(0.2)
            yield server, client
    finally:
        server.stop()
