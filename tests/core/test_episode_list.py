"""`GET /swarm/episodes`: the journal paged newest first with filters, and an episode's merged tokens."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx
import pytest

from agentjet.core import SwarmClient
from agentjet.core.testing import RunningServer
from tests.conftest import TOKEN

HEADERS = {"Authorization": f"Bearer {TOKEN}"}


def play(client: SwarmClient, task_id: str, *, kind: str = "train", reward: float | None = 1.0, turns: int = 1) -> str:
    """One episode of `turns` chat calls (each extending the last), ended with `reward` (None: aborted)."""
    episode = client.begin_episode(task_id, kind=kind)  # type: ignore[arg-type]
    messages: list[dict[str, str]] = [{"role": "user", "content": f"question of {task_id}"}]
    for turn in range(turns):
        reply = httpx.post(
            f"{episode.base_url}/chat/completions",
            json={"model": "tiny", "messages": messages, "max_tokens": 8},
            headers={"Authorization": f"Bearer {episode.api_key}"},
        ).json()
        messages += [reply["choices"][0]["message"], {"role": "user", "content": f"and turn {turn + 2}?"}]
    if reward is None:
        episode.abort()
    else:
        episode.end(reward)
    return episode.episode_id


@pytest.fixture
def server(live_server: Callable[..., RunningServer], scripted_backend: Callable[..., Any]) -> RunningServer:
    return live_server(scripted_backend(["Four words of reply.", "Another answer here."]))


def listed(server: RunningServer, **params: Any) -> dict[str, Any]:
    reply = httpx.get(f"{server.url}/swarm/episodes", params=params, headers=HEADERS)
    assert reply.status_code == 200, reply.text
    return reply.json()


def test_episodes_are_listed_newest_first_and_filtered(server: RunningServer) -> None:
    with SwarmClient(server.url, token=TOKEN) as client:
        won = play(client, "task-a", reward=1.0)
        lost = play(client, "task-a", reward=0.0)
        other = play(client, "task-b", reward=0.5, turns=2)
        evaluated = play(client, "task-a", kind="eval", reward=1.0)
        dropped = play(client, "task-b", reward=None)
    ids = lambda page: [e["episode_id"] for e in page["episodes"]]  # noqa: E731
    assert ids(listed(server)) == [dropped, evaluated, other, lost, won]
    assert ids(listed(server, kind="train", status="ended")) == [other, lost, won]
    assert ids(listed(server, task_id="task-a")) == [evaluated, lost, won]
    assert ids(listed(server, min_reward=0.5, kind="train")) == [other, won]
    assert ids(listed(server, max_reward=0.25)) == [lost]
    assert ids(listed(server, policy_version=0, kind="eval")) == [evaluated]
    assert ids(listed(server, policy_version=7)) == []
    summary = listed(server, task_id="task-b", status="ended")["episodes"][0]
    assert summary["calls"] == 2 and summary["reward"] == 0.5 and summary["policy_versions"] == [0]
    assert "calls" in summary and not isinstance(summary["calls"], list)  # summaries: no call records


def test_pages_go_on_with_next_before(server: RunningServer) -> None:
    with SwarmClient(server.url, token=TOKEN) as client:
        made = [play(client, f"t{i}", reward=float(i)) for i in range(5)]
    first = listed(server, limit=2)
    second = listed(server, limit=2, before=first["next_before"])
    third = listed(server, limit=2, before=second["next_before"])
    seen = [e["episode_id"] for page in (first, second, third) for e in page["episodes"]]
    assert seen == made[::-1] and third["next_before"] is None


@pytest.mark.parametrize(
    "params",
    [{"limit": 0}, {"limit": 201}, {"kind": "other"}, {"status": "open"}, {"before": 0}, {"min_reward": "x"}],
)
def test_bad_filters_are_422(server: RunningServer, params: dict[str, Any]) -> None:
    assert httpx.get(f"{server.url}/swarm/episodes", params=params, headers=HEADERS).status_code == 422


def test_an_episode_with_tokens_marks_what_trains(server: RunningServer) -> None:
    with SwarmClient(server.url, token=TOKEN) as client:
        episode_id = play(client, "multi", reward=1.0, turns=3)
    plain = httpx.get(f"{server.url}/swarm/episodes/{episode_id}", headers=HEADERS).json()
    assert "sample_tokens" not in plain["merge"]
    full = httpx.get(f"{server.url}/swarm/episodes/{episode_id}", params={"tokens": True}, headers=HEADERS).json()
    (sample,) = full["merge"]["sample_tokens"]  # three turns that extend each other: one merged sample
    completions = sum(len(c["completion_ids"]) for c in full["calls"])
    assert sum(sample["loss_mask"]) == completions == full["merge"]["sample_starts"][0]["trainable_tokens"]
    assert len(sample["tokens"]) == len(sample["loss_mask"]) == len(sample["logprobs"])
    assert not sample["loss_mask"][0]  # the first prompt is context
    trained = [lp for lp, m in zip(sample["logprobs"], sample["loss_mask"], strict=True) if m]
    assert trained == [lp for c in full["calls"] for lp in c["completion_logprobs"]]
