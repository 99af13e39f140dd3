"""`end` returns only after the episode is durable: kill -9 of the server loses no ended episode."""

from __future__ import annotations

import signal
import subprocess
from pathlib import Path

import httpx

from tests.core.server_process import start_server_process

_SERVE = """
import sys
from pathlib import Path
import uvicorn
from agentjet.core.backends.fakes import EchoBackend, load_tokenizer
from agentjet.core.config import ServerSettings
from agentjet.core.models import resolve_model
from agentjet.core.server.app import create_app
settings = ServerSettings(
    model="tiny", state_dir=Path(sys.argv[1]), token="tok-01234567890123456789", port=int(sys.argv[2])
)
app = create_app(settings, backend=EchoBackend(load_tokenizer(resolve_model("tiny"))))
uvicorn.run(app, host="127.0.0.1", port=settings.port, log_level="warning")
"""
AUTH = {"Authorization": "Bearer tok-01234567890123456789"}


def _start(state: Path, port: int) -> subprocess.Popen[bytes]:
    return start_server_process(_SERVE, state, port)


def test_ended_episodes_survive_kill_9_and_keys_stay_dead(tmp_path: Path, free_port: int) -> None:
    port = free_port
    url = f"http://127.0.0.1:{port}"
    proc = _start(tmp_path, port)
    ended, keys = [], []
    with httpx.Client(base_url=url, headers=AUTH, timeout=10) as http:
        for i in range(5):
            episode = http.post("/swarm/episodes", json={"task_id": f"t{i}"}).json()
            chat = {"model": "m", "messages": [{"role": "user", "content": f"question {i}"}]}
            reply = http.post(
                "/v1/chat/completions", json=chat, headers={"Authorization": f"Bearer {episode['api_key']}"}
            )
            assert reply.status_code == 200
            assert http.post(f"/swarm/episodes/{episode['episode_id']}/end", json={"reward": i / 4}).status_code == 200
            ended.append(episode["episode_id"])
            keys.append(episode["api_key"])
        open_episode = http.post("/swarm/episodes", json={"task_id": "open"}).json()
    proc.send_signal(signal.SIGKILL)
    assert proc.wait(timeout=10) == -signal.SIGKILL

    proc = _start(tmp_path, port)
    try:
        with httpx.Client(base_url=url, headers=AUTH, timeout=10) as http:
            for i, episode_id in enumerate(ended):
                record = http.get(f"/swarm/episodes/{episode_id}").json()
                assert record["status"] == "ended" and record["reward"] == i / 4
                assert len(record["calls"]) == 1 and record["calls"][0]["prompt_ids"]
            assert http.get("/swarm/status").json()["episodes"]["finished"] == 5
            assert http.get(f"/swarm/episodes/{open_episode['episode_id']}").status_code == 404  # never completed
            stale = http.post(
                "/v1/chat/completions",
                headers={"Authorization": f"Bearer {keys[0]}"},
                json={"model": "m", "messages": [{"role": "user", "content": "again"}]},
            )
            assert stale.status_code == 401
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
