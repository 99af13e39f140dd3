"""FirstWord: the learn-check task as a family (seeded items, disjoint splits, the reward, one live episode)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from agentjet.bench import learn_check
from agentjet.core import SwarmClient
from agentjet.core.backends.fakes import ScriptedBackend
from agentjet.core.testing import RunningServer
from agentjet.tasks.base import Endpoint, TaskFamily
from agentjet.tasks.word import EVAL_WORDS, WORDS, FirstWord, first_word_reward
from tests.tasks.swarm_helpers import TOKEN, say_the_word


def test_items_are_seeded_and_the_splits_never_share_a_word() -> None:
    family = FirstWord()
    assert isinstance(family, TaskFamily)
    train = family.items("train", count=10, seed=1)
    assert train == family.items("train", count=10, seed=1) and train != family.items("train", count=10, seed=2)
    assert len({item.task_id for item in train}) == 10  # cycling reuses words, never task ids
    evals = family.items("eval", count=len(EVAL_WORDS), seed=1)
    assert {i.data["word"] for i in train} <= set(WORDS) and {i.data["word"] for i in evals} == set(EVAL_WORDS)
    assert not set(WORDS) & set(EVAL_WORDS)


def test_learn_check_uses_the_same_task() -> None:
    assert learn_check.first_word_reward is first_word_reward and learn_check.WORDS is WORDS


@pytest.mark.parametrize("reply, reward", [("Tiger!", 1.0), ("the tiger", 0.0), ("", 0.0)])
def test_reward_reads_the_first_word(reply: str, reward: float) -> None:
    assert first_word_reward(reply, "tiger") == reward


def test_run_asks_for_the_word_and_scores_the_reply(
    live_server: Callable[..., RunningServer], scripted_backend: Callable[..., ScriptedBackend]
) -> None:
    backend = scripted_backend(say_the_word)
    server = live_server(backend)
    item = FirstWord().items("train", count=1, seed=0)[0]
    with SwarmClient(server.url, TOKEN) as client, client.episode(item.task_id) as ep:
        outcome = FirstWord(max_tokens=4).run(item, {"policy": Endpoint(ep.base_url, ep.api_key)})
        ep.end(outcome.rewards["policy"])
        record = client.get_episode(ep.episode_id)
    word = item.data["word"]
    assert outcome.rewards == {"policy": 1.0} and outcome.metadata == {"reply": word, "word": word}
    assert f"Reply with just the word '{word}'" in backend.prompts[0]
    assert record["calls"][0]["sampling"]["seed"] == item.seed and record["calls"][0]["sampling"]["max_tokens"] == 4
