"""The shared players against a live server: one episode (`episode.py`), GRPO groups (`groups.py`), rounds
and evals (`rounds.py`), and the learn-check round's items."""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from agentjet.bench import learn_check
from agentjet.core import SwarmClient
from agentjet.core.backends.fakes import EchoBackend
from agentjet.core.testing import RunningServer
from agentjet.tasks.base import POLICY, Endpoint, Outcome, Split, TaskItem
from agentjet.tasks.play.episode import EpisodePlayer
from agentjet.tasks.play.groups import group_members, member_seed
from agentjet.tasks.play.rounds import RoundSettings, evaluate, play_train_round
from agentjet.tasks.word import WORDS
from tests.tasks.swarm_helpers import TOKEN, ChatFamily, chat, journal

ServerFactory = Callable[..., RunningServer]


class _Scored:
    """One chat call, then a fixed outcome; each (task_id, seed) in `fail_once` raises the first time it is played."""

    name = "scored"
    servers = (POLICY,)

    def __init__(self, reward: float, metadata: Mapping[str, object], fail_once: bool = False) -> None:
        self.reward, self.metadata, self.fail_once = reward, metadata, fail_once
        self._played: set[tuple[str, int]] = set()
        self._lock = threading.Lock()

    def items(self, split: Split, *, count: int, seed: int) -> list[TaskItem]:
        return [TaskItem(f"scored-{split}-{seed}-{i}", seed * 10 + i, {}) for i in range(count)]

    def run(self, item: TaskItem, llms: Mapping[str, Endpoint]) -> Outcome:
        chat(llms[POLICY], item.task_id, item.seed)
        with self._lock:
            first = (item.task_id, item.seed) not in self._played
            self._played.add((item.task_id, item.seed))
        if self.fail_once and first:
            raise OSError(f"connection lost on {item.task_id}")
        return Outcome({POLICY: self.reward}, self.metadata)


def test_an_ended_episode_carries_the_json_safe_metadata_it_wrote(
    live_server: ServerFactory, echo_backend: EchoBackend, tmp_path: Path
) -> None:
    family = _Scored(0.5, {"path": Path("/tmp/x"), "pair": (1, 2)})
    server = live_server(echo_backend)
    with SwarmClient(server.url, TOKEN) as client:
        result = EpisodePlayer(family, {POLICY: client}).play(family.items("train", count=1, seed=0)[0], "train")
    assert (result.kind, result.rewards, result.error) == ("train", {POLICY: 0.5}, None)
    assert result.metadata == {"path": "/tmp/x", "pair": [1, 2]}
    (record,) = journal(tmp_path / "state")
    assert (record.agent, str(record.status), record.reward, record.metadata) == (
        "scored",
        "ended",
        0.5,
        result.metadata,
    )


def test_a_broken_episode_is_an_error_and_any_other_failure_is_raised_both_aborted(
    live_server: ServerFactory, echo_backend: EchoBackend, tmp_path: Path
) -> None:
    family = ChatFamily(fail=frozenset({"chat-train-0-0"}))
    (item,) = family.items("train", count=1, seed=0)
    server = live_server(echo_backend)
    with SwarmClient(server.url, TOKEN) as client:
        broken = EpisodePlayer(family, {POLICY: client}).play(item, "train")
        with pytest.raises(RuntimeError, match="agent broke on chat-train-0-0"):
            EpisodePlayer(family, {POLICY: client}, broken=(OSError,)).play(item, "eval")
        assert client.status()["episodes"]["in_flight"] == 0
    assert broken.rewards is None and broken.error == "RuntimeError: agent broke on chat-train-0-0"
    assert [(str(r.kind), str(r.status)) for r in journal(tmp_path / "state")] == [
        ("train", "aborted"),
        ("eval", "aborted"),
    ]


def test_group_members_repeat_each_item_with_its_member_seeds() -> None:
    items = [TaskItem("a", 5, {}), TaskItem("b", 9, {})]
    members = group_members(items, 3)
    assert [m.task_id for m in members] == ["a", "a", "a", "b", "b", "b"]
    assert [m.seed for m in members] == [member_seed(5, k) for k in range(3)] + [member_seed(9, k) for k in range(3)]
    assert members[0].seed == 5


def test_a_train_round_replays_its_broken_episodes_and_reports_them(
    live_server: ServerFactory, echo_backend: EchoBackend, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    family = _Scored(1.0, {}, fail_once=True)
    server = live_server(echo_backend)
    with SwarmClient(server.url, TOKEN) as client, ThreadPoolExecutor(4) as pool:
        rewards, replayed = play_train_round(pool, client, family, RoundSettings(tasks_per_step=1, group_size=2), 0)
    assert (rewards, replayed) == ([1.0, 1.0], 2)  # both members broke once and were played again
    (item,) = family.items("train", count=1, seed=0)
    assert (
        f"[rounds] episode failed task={item.task_id}: OSError: connection lost on {item.task_id}"
        in capsys.readouterr().err
    )
    statuses = sorted(str(r.status) for r in journal(tmp_path / "state"))
    assert statuses == ["aborted", "aborted", "ended", "ended"]


def test_an_eval_counts_won_games_and_invalid_answers(live_server: ServerFactory, echo_backend: EchoBackend) -> None:
    family = _Scored(0.5, {"won": {POLICY: True}, "invalid": {POLICY: 1}, "actions": {POLICY: 4}})
    server = live_server(echo_backend)
    with SwarmClient(server.url, TOKEN) as client, ThreadPoolExecutor(2) as pool:
        result = evaluate(pool, client, family, family.items("eval", count=2, seed=0), step=3)
    assert (result.step, result.solved, result.episodes, result.reward_mean) == (3, 2, 2, 0.5)
    assert result.invalid_share == 0.25


def test_the_learn_check_round_keeps_its_words_and_seeds() -> None:
    family = learn_check._StepWords()
    items = family.items("train", count=2, seed=3)
    assert [(i.task_id, i.seed, dict(i.data)) for i in items] == [
        (f"word-{WORDS[6]}", 3000, {"word": WORDS[6]}),
        (f"word-{WORDS[7]}", 3100, {"word": WORDS[7]}),
    ]
    with pytest.raises(ValueError, match="train items only"):
        family.items("eval", count=1, seed=0)
