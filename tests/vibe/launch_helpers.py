"""Workspaces for the launch/watch tests: a client file standing in for a generated one, on `tiny`.

The client follows the workspace contract (make_task, items from data/*.jsonl beside it, the
reward from reward.py) with knobs for what the tests need: a crash after N episodes (the whole
process exits), a scripted reward, a temperature (0 gives identical completions).
"""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

import httpx

from agentjet.core import TrainConfig
from agentjet.vibe.run.launch_options import LaunchOptions
from agentjet.vibe.workspace import Workspace

__all__ = ["TWO_SIDES_CLIENT", "StepRecorder", "client_source", "make_workspace", "tiny_options"]

_CLIENT = '''"""A test client standing in for a generated one: one chat call per item, reward from reward.py."""
import json
import os
import sys
import threading
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from reward import score  # noqa: E402

from agentjet.tasks.base import Outcome, TaskItem  # noqa: E402

CRASH_AFTER = {crash_after!r}
TEMPERATURE = {temperature!r}
PROMPT = {prompt!r}  # None: the item's own prompt
BROKEN = {broken!r}  # every episode raises (the runner aborts it)
_lock = threading.Lock()
_played = 0


class Task:
    name = "vibe-test"
    servers = ("policy",)

    def items(self, split, *, count, seed):
        rows = [json.loads(line) for line in (HERE / "data" / f"{{split}}.jsonl").read_text().splitlines() if line]
        return [TaskItem(rows[(seed + i) % len(rows)]["task_id"], seed * 1000 + i, rows[(seed + i) % len(rows)])
                for i in range(count)]

    def run(self, item, llms):
        global _played
        with _lock:
            _played += 1
            if CRASH_AFTER is not None and _played > CRASH_AFTER:
                os._exit(3)
        if BROKEN:
            raise RuntimeError("the tool this client needs is broken")
        from openai import OpenAI

        endpoint = llms["policy"]
        llm = OpenAI(base_url=endpoint.base_url, api_key=endpoint.api_key, max_retries=0)
        reply = llm.chat.completions.create(
            model=endpoint.model, messages=[{{"role": "user", "content": PROMPT or item.data["prompt"]}}],
            max_tokens=4, temperature=TEMPERATURE, seed=item.seed,
        )
        text = reply.choices[0].message.content or ""
        return Outcome.single(score(dict(item.data), text), reply=text)


def make_task(**params):
    return Task()
'''

TWO_SIDES_CLIENT = '''"""A test client whose two sides train apart: one chat call per side and server, each scored."""
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from reward import score  # noqa: E402

from agentjet.tasks.base import Outcome, TaskItem  # noqa: E402


class Task:
    name = "vibe-two-sides"
    servers = ("wolves", "village")

    def items(self, split, *, count, seed):
        rows = [json.loads(line) for line in (HERE / "data" / f"{split}.jsonl").read_text().splitlines() if line]
        return [TaskItem(rows[(seed + i) % len(rows)]["task_id"], seed * 1000 + i, rows[(seed + i) % len(rows)])
                for i in range(count)]

    def run(self, item, llms):
        from openai import OpenAI

        rewards = {}
        for side in self.servers:
            endpoint = llms[side]
            llm = OpenAI(base_url=endpoint.base_url, api_key=endpoint.api_key, max_retries=0)
            reply = llm.chat.completions.create(
                model=endpoint.model, messages=[{"role": "user", "content": f"{side}: {item.data['prompt']}"}],
                max_tokens=4, temperature=0 if item.data.get("greedy") else 1.0, seed=item.seed,
            )
            rewards[side] = score(dict(item.data), reply.choices[0].message.content or "")
        return Outcome(rewards)


def make_task(**params):
    return Task()
'''

VARIED_REWARD = "def score(item, answer):\n    return float(len(answer) % 3) / 2.0\n"
CONSTANT_REWARD = "def score(item, answer):\n    return 0.5\n"


def client_source(
    *, crash_after: int | None = None, temperature: float = 1.0, prompt: str | None = None, broken: bool = False
) -> str:
    return _CLIENT.format(crash_after=crash_after, temperature=temperature, prompt=prompt, broken=broken)


def make_workspace(root: Path, *, client: str | None = None, reward: str = VARIED_REWARD) -> Workspace:
    """A committed workspace with client.py, reward.py and data/{train,eval}.jsonl."""
    workspace = Workspace(root).init()
    workspace.write("client.py", client or client_source())
    workspace.write("reward.py", reward)
    for split, count in (("train", 8), ("eval", 4)):
        rows = [{"task_id": f"{split}-{i}", "prompt": f"Say the number {i}."} for i in range(count)]
        workspace.write(f"data/{split}.jsonl", "".join(json.dumps(row) + "\n" for row in rows))
    workspace.commit("test: client, reward and data")
    return workspace


def tiny_options(**overrides: Any) -> LaunchOptions:
    """Small steps on `tiny`: groups of 2, one task per step, no evals unless asked."""
    config = TrainConfig.model_validate({"grpo": {"group_size": 2}, "collect": {"tasks": 1}, "optim": {"lr": 1e-4}})
    settings: dict[str, Any] = {
        "model": "tiny",
        "steps": 3,
        "sandbox": "none",
        "allow_unsandboxed": True,
        "concurrency": 2,
        "train_config": config,
        "eval_rounds": 0,
        "ready_timeout_s": 120.0,
    }
    settings.update(overrides)
    return LaunchOptions(**settings)


class StepRecorder:
    """Polls `/swarm/status` in a thread: every step seen and the server's pid-independent uptime."""

    def __init__(self, url: str, token: str) -> None:
        self.url, self.token = url, token
        self.steps: list[int] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def _poll(self) -> None:
        headers = {"Authorization": f"Bearer {self.token}"}
        try:
            body = httpx.get(f"{self.url}/swarm/status", headers=headers, timeout=5).json()
            self.steps.append(int(body["step"]))
        except (httpx.HTTPError, ValueError, KeyError):
            pass

    def _loop(self) -> None:
        while not self._stop.is_set():
            self._poll()
            time.sleep(0.05)

    def __enter__(self) -> StepRecorder:
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._stop.set()
        self._thread.join(timeout=10)
        self._poll()  # the step the run ended at: a step reached in the last poll interval counts too


def swarm_status(url: str, token: str) -> dict[str, Any]:
    """GET /swarm/status of a run's server, as a test reads it beside the run."""
    body: dict[str, Any] = httpx.get(f"{url}/swarm/status", headers={"Authorization": f"Bearer {token}"}).json()
    return body
