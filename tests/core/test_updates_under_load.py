"""Updates keep happening while clients never stop calling, and no call sees the weights change under it.

Eight client threads run one-call episodes back to back against a server whose calls take
~0.3 s (a scripted backend with per-token delay) and which trains the real tiny model every two
episodes. With a drain that waits for zero in-flight calls while still admitting new ones, the
first update would wait for its 30 s drain timeout; here the engine holds new calls for the
hot-load only, so updates come every few hundred ms and no call straddles two versions.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import yaml

from agentjet.core.backends.fakes import ScriptedBackend
from agentjet.core.config import ServerSettings
from agentjet.core.server.app import create_app
from agentjet.core.testing import serve_in_thread
from tests.conftest import TOKEN, _wait_rolling
from tests.core.test_training_loop import CONFIG

HEADERS = {"Authorization": f"Bearer {TOKEN}"}
CHAT = {"model": "tiny", "messages": [{"role": "user", "content": "go"}], "max_tokens": 6}


def _client(url: str, stop: threading.Event, index: int, ended: list[str]) -> None:
    with httpx.Client(base_url=url, timeout=60) as http:
        while not stop.is_set():
            begun = http.post("/swarm/episodes", json={"task_id": f"t{index % 2}"}, headers=HEADERS).json()
            key = {"Authorization": f"Bearer {begun['api_key']}"}
            assert http.post("/v1/chat/completions", json=CHAT, headers=key).status_code == 200
            end = http.post(f"/swarm/episodes/{begun['episode_id']}/end", json={"reward": index % 3}, headers=HEADERS)
            assert end.status_code == 200
            ended.append(begun["episode_id"])


def test_updates_happen_under_continuous_calls_and_no_call_straddles_a_hot_load(
    tmp_path: Path, tiny_model: Path, tiny_tokenizer: Any, caplog: Any
) -> None:
    config = tmp_path / "train.yaml"
    config.write_text(yaml.safe_dump(CONFIG.model_dump(mode="json")))
    settings = ServerSettings(model="tiny", state_dir=tmp_path / "state", token=TOKEN, config=config)
    backend = ScriptedBackend(tiny_tokenizer, ["one two three four five six"], token_delay_s=0.05)
    with serve_in_thread(create_app(settings, backend=backend, model_path=tiny_model)) as server:
        _wait_rolling(server.url)
        stop, ended = threading.Event(), []
        threads = [threading.Thread(target=_client, args=(server.url, stop, i, ended)) for i in range(8)]
        for thread in threads:
            thread.start()
        first_step_by: Callable[[], dict[str, Any]] = lambda: httpx.get(  # noqa: E731
            f"{server.url}/swarm/status", headers=HEADERS
        ).json()
        started = time.monotonic()
        while first_step_by()["step"] < 3:
            assert time.monotonic() - started < 20, "updates starved under load"
            time.sleep(0.05)
        stop.set()
        for thread in threads:
            thread.join(timeout=60)
        status = first_step_by()
    assert status["step"] >= 3 and len(ended) >= 6
    assert status["straddled_calls"] == 0
    assert "drain timeout" not in caplog.text
