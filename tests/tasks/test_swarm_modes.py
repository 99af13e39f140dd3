"""Issue 4 items 6 and 7 on the real `tiny` model: non-shared parameters and cocktail training.

Non-shared: two training servers (subprocesses, own state dirs and ports); one client workflow holds an episode
on each and ends each with its own reward; both servers take >= 5 updates (a two-server test
family; the werewolves variant, wolves on one server and seer + witch on the other, is `slow`).
Cocktail: one server, two runners with different families (FirstWord and a chat family), each its
own swarm client. The server uses `all_clients`: every runner agrees to an update after each
round (`update_every`) and waits for it, so each update's batch holds both families' episodes.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest

from agentjet.core import SwarmClient, TrainConfig
from agentjet.core.config import CollectConfig, GrpoConfig, OptimConfig
from agentjet.tasks.base import TaskItem
from agentjet.tasks.play.runner import RunSettings, TaskRunner
from agentjet.tasks.word import FirstWord
from tests.tasks.swarm_helpers import (
    SERVER_TOKEN,
    TOKEN,
    ChatFamily,
    journal,
    tiny_training_server,
    tiny_training_server_process,
    wait_for_step,
)

UPDATES = 5


def _config(strategy: str) -> TrainConfig:
    return TrainConfig(
        grpo=GrpoConfig(group_size=2),
        collect=CollectConfig.model_validate({"strategy": strategy, "tasks": 1}),
        optim=OptimConfig(lr=1e-3),
    )


def _metrics(state_dir: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (state_dir / "metrics.jsonl").read_text().splitlines()]


def _wolves_reward(server: str, item: TaskItem, reply: str) -> float:
    """Opposite rewards per server for the same episode: each server must get its own."""
    won = float(item.seed % 2)
    return won if server == "wolves" else 1.0 - won


def _run_into(runner: TaskRunner, summary: dict[str, Any]) -> None:
    summary.update(runner.run())


def _run_on_two_servers(tmp_path: Path, family: Any) -> tuple[dict[str, Any], list[dict[str, Any]], tuple[str, str]]:
    """Train `family` on two tiny servers ("wolves", "village") for UPDATES steps: (summary, statuses, urls)."""
    with (
        tiny_training_server_process(tmp_path / "wolves", _config("tasks")) as wolves,
        tiny_training_server_process(tmp_path / "village", _config("tasks")) as village,
        SwarmClient(wolves, SERVER_TOKEN) as w,
        SwarmClient(village, SERVER_TOKEN) as v,
    ):
        settings = RunSettings(episodes=2 * UPDATES, concurrency=2, group_size=2)
        summary = TaskRunner(family, {"wolves": w, "village": v}, settings).run()
        statuses = [wait_for_step(client, UPDATES) for client in (w, v)]
    return summary, statuses, (wolves, village)


def test_two_servers_train_their_own_models_from_one_workflow(tmp_path: Path) -> None:
    family = ChatFamily(name="duo", servers=("wolves", "village"), reward=_wolves_reward)
    summary, statuses, (wolves, village) = _run_on_two_servers(tmp_path, family)
    assert summary["episodes"] == 2 * UPDATES and summary["errors"] == 0
    assert [s["step"] for s in statuses] == [UPDATES, UPDATES] and wolves != village
    for name in ("wolves", "village"):
        records = journal(tmp_path / name)
        assert len(records) == 2 * UPDATES and all(r.status == "ended" and r.agent == "duo" for r in records)
        for record in records:  # the reward this server got is the one the family gave its side
            assert record.reward == _wolves_reward(name, TaskItem("", record.metadata["seed"], {}), "")
        metrics = _metrics(tmp_path / name)
        assert [m["step"] for m in metrics] == list(range(1, UPDATES + 1))
        assert all(m["episodes"] == 2 and m["tokens_trained"] > 0 for m in metrics)
    ids = {name: sorted(r.task_id for r in journal(tmp_path / name)) for name in ("wolves", "village")}
    assert ids["wolves"] == ids["village"]  # one workflow: the same task on both servers


@pytest.mark.slow  # about a minute: ten 9-player games on the tiny model
def test_werewolves_wolves_and_village_train_on_their_own_servers(tmp_path: Path) -> None:
    from agentjet.tasks.werewolves import Werewolves

    roles = {"werewolf": "wolves", "seer": "village", "witch": "village"}
    family = Werewolves(servers=roles, discussion=False, invalid_tolerance=1.0)  # win/loss rewards, not errors
    summary, statuses, _ = _run_on_two_servers(tmp_path, family)
    assert summary["episodes"] == 2 * UPDATES and summary["errors"] == 0, summary["error_messages"]
    assert [s["step"] for s in statuses] == [UPDATES, UPDATES]
    for server, side in (("wolves", "wolves"), ("village", "village")):
        records = journal(tmp_path / server)
        assert len(records) == 2 * UPDATES and all(r.agent == "werewolves" for r in records)
        for record in records:  # each side's server got its side's result of the same game
            assert record.reward == (1.0 if record.metadata["winner"] == side else 0.0)
            assert set(record.metadata["seats"].values()) == {"wolves", "village"}
        assert len(_metrics(tmp_path / server)) == UPDATES


def test_cocktail_two_families_share_every_update_batch(tmp_path: Path) -> None:
    state = tmp_path / "state"
    with tiny_training_server(state, _config("all_clients")) as server:
        clients = [SwarmClient(server.url, TOKEN, client_id=name) for name in ("words", "chats")]
        for client in clients:  # both active before either runs: the first update waits for both
            client.heartbeat()
        settings = RunSettings(episodes=2 * UPDATES, concurrency=2, group_size=2, update_every=2, update_timeout_s=120)
        runners = [
            TaskRunner(FirstWord(max_tokens=3), {"policy": clients[0]}, settings),
            TaskRunner(ChatFamily(name="chat"), {"policy": clients[1]}, settings),
        ]
        summaries: list[dict[str, Any]] = [{}, {}]
        threads = [threading.Thread(target=_run_into, args=(r, s)) for r, s in zip(runners, summaries, strict=True)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=300)
        status = clients[0].status()
        for client in clients:
            client.close()
    assert all(s["episodes"] == 2 * UPDATES and s["errors"] == 0 for s in summaries), summaries
    assert status["step"] == UPDATES and status["pool"]["pooled_episodes"] == 0
    metrics = _metrics(state)
    agents = {r.task_id: str(r.agent) for r in journal(state)}
    for line in metrics:  # each batch: one group of each family, 4 episodes
        families = sorted(agents[g["task_id"]] for g in line["groups"])
        assert families == ["chat", "word"] and line["episodes"] == 4, line["groups"]
