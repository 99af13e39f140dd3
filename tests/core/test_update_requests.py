"""C4 `any_client` and C5 `all_clients`: clients ask for / agree to updates, and the loop obeys.

The loop-level tests drive `TrainingLoop` over a real engine with a fake trainer and a fake
clock, so "no update yet" is exact. The live tests run a real server on loopback (echo backend,
real `tiny` trainer) through the SDK: requests go over HTTP, updates happen in the server.
"""

from __future__ import annotations

import io
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from rich.console import Console

from agentjet.core.backends.fakes import EchoBackend
from agentjet.core.config import CollectConfig, GrpoConfig, OptimConfig, ServerSettings, TrainConfig
from agentjet.core.engine import Engine
from agentjet.core.errors import ConfigError
from agentjet.core.sdk.client import SwarmClient
from agentjet.core.sdk.status_view import render_status
from agentjet.core.server.app import create_app
from agentjet.core.testing import RunningServer, serve_in_thread
from agentjet.core.training.loop import TrainingLoop
from agentjet.core.types import EpisodeKind
from tests.conftest import TOKEN, _wait_rolling
from tests.core.factories import Clock, call_record
from tests.core.test_http_errors import assert_error
from tests.core.test_training_loop import FakeTrainer

HEADERS = {"Authorization": f"Bearer {TOKEN}"}
Strategy = str


def _config(strategy: Strategy) -> TrainConfig:
    return TrainConfig(
        collect=CollectConfig(strategy=strategy),  # type: ignore[arg-type]
        grpo=GrpoConfig(group_size=2),
        optim=OptimConfig(lr=5e-2),
    )


# ---- loop level: a fake trainer, a fake clock ---------------------------------------------------
async def _end(engine: Engine, client: str | None, task: str = "t", reward: float = 1.0) -> None:
    episode, _ = engine.begin_episode(task, kind=EpisodeKind.TRAIN, agent=None, client_id=client)
    engine.call_started(episode)
    engine.call_finished(episode, [call_record(0, [1, 2, 3], [4, 5])])
    await engine.end_episode(episode.episode_id, reward, {})


@pytest.fixture
def make_loop(
    tmp_path: Path, make_engine: Callable[..., Awaitable[Engine]]
) -> Callable[[Strategy], Awaitable[tuple[Engine, TrainingLoop, Clock]]]:
    async def make(strategy: Strategy) -> tuple[Engine, TrainingLoop, Clock]:
        clock = Clock()
        engine = await make_engine(train_config=_config(strategy), clock=clock)  # idle timeout 10 s
        trainer = FakeTrainer()
        loop = TrainingLoop(engine, model_path=tmp_path, state_dir=tmp_path / "s", trainer_factory=lambda p, c: trainer)
        return engine, loop, clock

    return make


async def test_any_client_waits_for_a_request_and_one_request_buys_one_update(
    make_loop: Callable[[Strategy], Awaitable[tuple[Engine, TrainingLoop, Clock]]],
) -> None:
    engine, loop, _ = await make_loop("any_client")
    await _end(engine, "alice", reward=1.0)
    await _end(engine, "bob", reward=0.0)
    await loop._train_ready_batches()
    assert engine.step == 0 and engine.status()["pool"]["pooled_episodes"] == 2
    loop._wake.clear()
    engine.clients.request_update("alice", ready=True)
    assert loop._wake.is_set()  # the request woke the update task
    batch = loop.select()
    assert batch is not None and [e.client_id for e in batch.episodes] == ["alice", "bob"]
    await loop._train_ready_batches()
    assert engine.step == 1 and engine.clients.requests() == {}  # spent by the update
    await _end(engine, "alice")
    await loop._train_ready_batches()
    assert engine.step == 1  # no new request, no new update


async def test_all_clients_waits_for_every_active_client_and_an_idle_one_stops_blocking(
    make_loop: Callable[[Strategy], Awaitable[tuple[Engine, TrainingLoop, Clock]]],
) -> None:
    engine, loop, clock = await make_loop("all_clients")
    await _end(engine, "alice")
    await _end(engine, "bob", reward=0.0)
    engine.clients.request_update("alice", ready=True)
    await loop._train_ready_batches()
    assert engine.step == 0  # bob has not agreed
    engine.clients.request_update("bob", ready=True)
    await loop._train_ready_batches()
    assert engine.step == 1 and engine.clients.requests() == {}
    # round 2: bob falls silent; alice agrees 6 s later
    await _end(engine, "bob")
    clock.now += 6
    await _end(engine, "alice", reward=0.0)
    engine.clients.request_update("alice", ready=True)
    await loop._train_ready_batches()
    assert engine.step == 1
    clock.now += 5  # bob idle 11 s > 10 s: no longer active; alice (5 s) still is
    loop._wake.clear()
    await engine.reclaim_idle_episodes()  # the janitor's sweep notices bob left and wakes the loop
    assert loop._wake.is_set()
    await loop._train_ready_batches()
    assert engine.step == 2


async def test_a_withdrawn_agreement_blocks_again(
    make_loop: Callable[[Strategy], Awaitable[tuple[Engine, TrainingLoop, Clock]]],
) -> None:
    engine, loop, _ = await make_loop("all_clients")
    await _end(engine, "alice")
    engine.clients.request_update("alice", ready=True)
    engine.clients.request_update("alice", ready=False)
    await loop._train_ready_batches()
    assert engine.step == 0


async def test_a_failed_update_keeps_the_requests(
    make_loop: Callable[[Strategy], Awaitable[tuple[Engine, TrainingLoop, Clock]]],
) -> None:
    engine, loop, _ = await make_loop("any_client")
    await _end(engine, "alice")
    engine.clients.request_update("alice", ready=True)
    trainer = await loop.trainer.get(engine.train_config)
    trainer.fail = True  # type: ignore[attr-defined]
    await loop._train_ready_batches()
    assert engine.step == 0 and set(engine.clients.requests()) == {"alice"}
    trainer.fail = False  # type: ignore[attr-defined]
    await loop._train_ready_batches()
    assert engine.step == 1 and engine.clients.requests() == {}


async def test_pool_stats_show_each_task_group_and_the_clients(
    make_loop: Callable[[Strategy], Awaitable[tuple[Engine, TrainingLoop, Clock]]],
) -> None:
    engine, _, _ = await make_loop("all_clients")
    await _end(engine, "alice", task="b", reward=1.0)
    await _end(engine, "alice", task="a", reward=0.0)
    await _end(engine, "bob", task="b", reward=0.0)
    engine.clients.request_update("bob", ready=True)
    pool = engine.status()["pool"]
    assert pool["pooled_episodes"] == 3 and pool["complete_groups"] == 1 and pool["tasks"] == 2
    assert pool["groups"] == [  # oldest first
        {"task_id": "b", "episodes": 2, "complete": True, "reward_mean": 0.5, "reward_std": 0.5},
        {"task_id": "a", "episodes": 1, "complete": False, "reward_mean": 0.0, "reward_std": 0.0},
    ]
    assert pool["clients"] == {
        "active": 2,
        "requested": 1,
        "active_ids": ["alice", "bob"],
        "requested_ids": ["bob"],
    }


# ---- live: a real server, the SDK, the real tiny trainer ---------------------------------------
@pytest.fixture
def start_server(tmp_path: Path, tiny_model: Path, tiny_tokenizer: Any) -> Iterator[Callable[..., RunningServer]]:
    stack: list[Any] = []

    def start(strategy: Strategy, **settings: Any) -> RunningServer:
        config_file = tmp_path / "train.yaml"
        config_file.write_text(yaml.safe_dump(_config(strategy).model_dump(mode="json")))
        state = tmp_path / "state"
        server_settings = ServerSettings(model="tiny", state_dir=state, token=TOKEN, config=config_file, **settings)
        app = create_app(server_settings, backend=EchoBackend(tiny_tokenizer), model_path=tiny_model)
        cm = serve_in_thread(app)
        running = cm.__enter__()
        stack.append(cm)
        _wait_rolling(running.url)
        return running

    yield start
    for cm in reversed(stack):
        cm.__exit__(None, None, None)


def _status(server: RunningServer) -> dict[str, Any]:
    body: dict[str, Any] = httpx.get(f"{server.url}/swarm/status", headers=HEADERS, timeout=10).json()
    return body


def _play(client: SwarmClient, reward: float, task: str = "t") -> str:
    """One episode with one chat call, ended with `reward`; returns its id."""
    with client.episode(task) as episode:
        reply = httpx.post(
            f"{episode.base_url}/chat/completions",
            json={"model": "tiny", "messages": [{"role": "user", "content": f"go {reward}"}], "max_tokens": 4},
            headers={"Authorization": f"Bearer {episode.api_key}"},
            timeout=30,
        )
        assert reply.status_code == 200, reply.text
        episode.end(reward)
    return episode.episode_id


def _wait_step(server: RunningServer, step: int, *, while_waiting: Callable[[], Any] = lambda: None) -> dict[str, Any]:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        status = _status(server)
        if status["step"] >= step and status["state"] == "rolling":
            return status
        while_waiting()
        time.sleep(0.05)
    raise TimeoutError(f"server never reached step {step}: {_status(server)}")


def _assert_no_update_for(server: RunningServer, seconds: float, step: int) -> None:
    """No update event exists to wait on, so watch the status for a while: the step must not move."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        status = _status(server)
        assert status["step"] == step and status["state"] == "rolling", status
        time.sleep(0.05)


def test_any_client_over_http_trains_only_once_a_client_asks(start_server: Callable[..., RunningServer]) -> None:
    server = start_server("any_client")
    with SwarmClient(server.url, TOKEN, client_id="alice") as alice:
        first = _play(alice, 1.0)
        _play(alice, 0.0)
        assert alice.get_episode(first)["client_id"] == "alice"  # the journal keeps who began it
        _assert_no_update_for(server, 1.0, step=0)
        assert _status(server)["pool"]["pooled_episodes"] == 2
        reply = alice.request_update()
        assert reply["ready"] is True and reply["requested_clients"] == ["alice"]
        status = _wait_step(server, 1)
    pool = status["pool"]
    assert pool["pooled_episodes"] == 0 and pool["clients"]["requested"] == 0  # the request was spent
    assert status["latest_metrics"]["episodes"] == 2 and status["policy_version"] == 1


def test_all_clients_over_http_waits_for_both_and_then_only_for_the_active(
    start_server: Callable[..., RunningServer],
) -> None:
    server = start_server("all_clients", idle_timeout_s=3.0, janitor_interval_s=0.1)
    with (
        SwarmClient(server.url, TOKEN, client_id="alice") as alice,
        SwarmClient(server.url, TOKEN, client_id="bob") as bob,
    ):
        _play(alice, 1.0)
        _play(bob, 0.0)
        reply = alice.request_update()
        assert reply["active_clients"] == ["alice", "bob"] and reply["requested_clients"] == ["alice"]
        _assert_no_update_for(server, 1.0, step=0)
        bob.request_update()
        status = _wait_step(server, 1)
        assert status["pool"]["clients"]["requested"] == 0 and status["latest_metrics"]["episodes"] == 2
        # round 2: bob plays and falls silent; alice agrees and keeps her heartbeat going
        _play(bob, 1.0)
        _play(alice, 0.0)
        assert alice.request_update()["active_clients"] == ["alice", "bob"]
        _assert_no_update_for(server, 1.0, step=1)  # bob is still active (idle timeout 3 s)
        status = _wait_step(server, 2, while_waiting=alice.heartbeat)
    assert status["pool"]["clients"]["active_ids"] == ["alice"]
    assert status["latest_metrics"]["episodes"] == 2


# ---- bad input: 4xx, never 5xx --------------------------------------------------------------
@pytest.fixture
def echo_server(live_server: Callable[..., RunningServer], echo_backend: EchoBackend) -> RunningServer:
    return live_server(echo_backend)


@pytest.mark.parametrize("client_id", ["", "has space", "-leading", "a" * 65, "a/b", "é", 17])
def test_begin_refuses_a_bad_client_id(echo_server: RunningServer, client_id: Any) -> None:
    reply = httpx.post(
        f"{echo_server.url}/swarm/episodes", json={"task_id": "t", "client_id": client_id}, headers=HEADERS
    )
    assert assert_error(reply, 422, code="invalid_request")["param"] == "client_id"
    assert _status(echo_server)["episodes"]["in_flight"] == 0


def test_begin_refuses_a_bad_client_header(echo_server: RunningServer) -> None:
    headers = {**HEADERS, "X-AgentJet-Client": "no spaces please"}
    reply = httpx.post(f"{echo_server.url}/swarm/episodes", json={"task_id": "t"}, headers=headers)
    assert_error(reply, 422, code="invalid_request")


@pytest.mark.parametrize(
    ("path", "body", "param"),
    [
        ("has%20space/update", {"ready": True}, "path.client_id"),
        (f"{'a' * 65}/update", {"ready": True}, "path.client_id"),
        ("-x/heartbeat", None, "path.client_id"),
        ("alice/update", {"ready": "yes"}, "ready"),
        ("alice/update", {"ready": 1}, "ready"),
        ("alice/update", {"ready": True, "extra": 1}, "extra"),
        ("alice/update", [], None),
    ],
)
def test_client_routes_refuse_bad_ids_and_bodies(
    echo_server: RunningServer, path: str, body: Any, param: str | None
) -> None:
    reply = httpx.post(f"{echo_server.url}/swarm/clients/{path}", json=body, headers=HEADERS)
    error = assert_error(reply, 422, code="invalid_request")
    if param is not None:
        assert error["param"] == param
    assert _status(echo_server)["pool"].get("clients") is None  # no training loop here...
    assert _status(echo_server)["active_clients"] == 0  # ...and nobody was marked seen


def test_client_routes_need_the_token_and_accept_good_requests(echo_server: RunningServer) -> None:
    url = f"{echo_server.url}/swarm/clients/alice.v2:1/update"
    assert_error(httpx.post(url, json={"ready": True}), 401, code="invalid_token")
    broken = httpx.post(url, content=b"{", headers={**HEADERS, "Content-Type": "application/json"})
    assert_error(broken, 400, code="invalid_json")
    assert _status(echo_server)["active_clients"] == 0
    reply = httpx.post(url, json={}, headers=HEADERS)  # ready defaults to true
    assert reply.status_code == 200 and reply.json()["ready"] is True
    beat = httpx.post(f"{echo_server.url}/swarm/clients/bob/heartbeat", headers=HEADERS)
    assert beat.json() == {
        "client_id": "bob",
        "active": True,
        "ready": False,
        "active_clients": ["alice.v2:1", "bob"],
        "requested_clients": ["alice.v2:1"],
    }


def test_status_polling_does_not_make_a_client_active(echo_server: RunningServer) -> None:
    with SwarmClient(echo_server.url, TOKEN, client_id="watcher") as watcher:
        watcher.status()
        assert watcher.status()["active_clients"] == 0  # a poller must not block all_clients


def test_sdk_refuses_a_bad_client_id_before_sending() -> None:
    with pytest.raises(ConfigError, match="client_id"):
        SwarmClient("http://127.0.0.1:9", TOKEN, client_id="no spaces")
    with SwarmClient("http://127.0.0.1:9", TOKEN) as fresh:
        assert len(fresh.client_id) == 32 and int(fresh.client_id, 16) >= 0


# ---- the live status view ----------------------------------------------------------------------
def test_status_view_shows_each_group_and_the_clients_in_a_few_lines() -> None:
    groups = [
        {"task_id": f"t{i}", "episodes": 2 - i % 2, "complete": i % 2 == 0, "reward_mean": 0.5, "reward_std": 0.25}
        for i in range(10)
    ]
    groups[1]["task_id"] = "[bold]not markup[/bold]"
    clients = {"active": 9, "requested": 1, "active_ids": [f"c{i}" for i in range(9)], "requested_ids": ["c3"]}
    pool = {"collect": "all_clients", "pooled_episodes": 15, "tasks": 12, "groups": groups, "clients": clients}
    console = Console(file=io.StringIO(), width=120, record=True, color_system=None)
    console.print(render_status({"state": "rolling", "pool": pool}))
    lines = [line.strip("│ ").rstrip() for line in console.export_text().splitlines()]
    rows = {label.strip(): value.strip() for label, _, value in (line.partition("  ") for line in lines)}
    assert rows["groups"] == "12 task(s), oldest first (✓ = complete group)" and "tasks" not in rows
    assert rows["t0"] == "2 ep ✓ · reward 0.50 ± 0.25" and rows["t3"] == "1 ep · reward 0.50 ± 0.25"
    assert rows["[bold]not markup[/bold]"] == "1 ep · reward 0.50 ± 0.25"  # ids are shown, never styled
    assert "t8" not in rows and rows["…"] == "+4 more"  # 8 groups listed, the other 4 counted
    assert rows["clients"] == "9 (c0, c1, c2, c3, c4, c5 +3) active · 1 (c3) asked for an update"
    assert rows["collect"] == "all_clients" and rows["pooled_episodes"] == "15"
