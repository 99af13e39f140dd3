"""Play one item of a family as one episode on a live server, the way the runner does."""

from __future__ import annotations

from typing import Any

from agentjet.core import SwarmClient
from agentjet.tasks.base import POLICY, Endpoint, Outcome, TaskFamily, TaskItem
from tests.conftest import TOKEN


def play(server_url: str, family: TaskFamily, item: TaskItem) -> tuple[Outcome, dict[str, Any]]:
    """(the family's outcome, the ended episode's record as the server journaled it)."""
    with SwarmClient(server_url, TOKEN) as client:
        episode = client.begin_episode(item.task_id, agent=family.name)
        outcome = family.run(item, {POLICY: Endpoint(episode.base_url, episode.api_key)})
        episode.end(outcome.rewards[POLICY])
        record = client.get_episode(episode.episode_id)
    assert record["status"] == "ended"
    assert record["reward"] == outcome.rewards[POLICY]
    return outcome, record
