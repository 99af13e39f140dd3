"""Rounds of episodes against one policy server: GRPO train rounds, held-out evals, waiting for a step.

The episode-round player of `bench learn`, `bench learn-check` and the campaign's trials (`a3r/trial/`), on
top of the one episode player (`episode.py`, also `agentjet client run`'s): `play_round` plays items once
each on a thread pool; `play_train_round` plays one step's GRPO groups (`tasks_per_step` fresh train items
seeded by the run's seed and the step, `group_size` episodes each, member seeds from `member_seed`),
replaying a broken episode (same item, same seed) so every group completes; `evaluate` plays every held-out
item once (kind `eval`: never trained) and counts the solved ones; `wait_for_step` and `wait_until_rolling`
poll the server. Only the public `SwarmClient` API is used.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from agentjet.core import AgentJetError, SwarmClient
from agentjet.tasks.base import POLICY, TaskFamily, TaskItem, won_flag
from agentjet.tasks.play.episode import EpisodePlayer, EpisodeResult
from agentjet.tasks.play.groups import group_members

__all__ = [
    "EvalResult",
    "RoundSettings",
    "answer_counts",
    "ended_rewards",
    "evaluate",
    "play_round",
    "play_train_round",
    "policy_player",
    "wait_for_step",
    "wait_until_rolling",
]

_STEP_TIMEOUT_S = 1800.0
_WIN = 1.0  # an episode counts as solved / won when its reward reaches this
_ATTEMPTS = 3  # a train round replays its broken episodes at most this often
_BROKEN = (AgentJetError, OSError, ValueError, KeyError)  # a broken episode (replayed); anything else is a bug


@dataclass(frozen=True)
class RoundSettings:
    """What a train round plays: `tasks_per_step` items x a GRPO group of `group_size`, seeded by `seed`."""

    tasks_per_step: int = 2
    group_size: int = 8
    seed: int = 0


def _stderr(message: str) -> None:
    sys.stderr.write(f"[rounds] {message}\n")
    sys.stderr.flush()


def policy_player(
    client: SwarmClient, family: TaskFamily, *, broken: tuple[type[Exception], ...] = _BROKEN
) -> EpisodePlayer:
    """The episode player of a one-server family on `client`: server errors and bad replies break an episode."""
    return EpisodePlayer(family, {POLICY: client}, broken=broken)


def answer_counts(metadata: Mapping[str, Any]) -> tuple[int, int]:
    """(invalid, actions) of the policy server's answers from an outcome's metadata; (0, 0) if not counted."""
    invalid, actions = metadata.get("invalid"), metadata.get("actions")
    if not (isinstance(invalid, Mapping) and isinstance(actions, Mapping)):
        return 0, 0
    return int(invalid.get(POLICY, 0)), int(actions.get(POLICY, 0))


def ended_rewards(results: Sequence[EpisodeResult]) -> list[float]:
    """The policy server's rewards of the ended episodes among `results`, in their order."""
    return [r.rewards[POLICY] for r in results if r.rewards is not None]


def _solved(metadata: Mapping[str, Any], reward: float) -> bool:
    """The family's own `won` flag when it gives one (`won_flag`), else a reward of at least 1."""
    won = won_flag(metadata)
    return reward >= _WIN if won is None else won


def _play_one(player: EpisodePlayer, item: TaskItem, kind: str) -> EpisodeResult:
    result = player.play(item, kind)
    if result.error is not None:
        _stderr(f"episode failed task={item.task_id}: {result.error}")
    return result


def play_round(
    pool: ThreadPoolExecutor, player: EpisodePlayer, items: Sequence[TaskItem], kind: str
) -> list[EpisodeResult]:
    """Play every item once (kind `train` or `eval`), concurrently on `pool`; the results in item order."""
    return list(pool.map(lambda item: _play_one(player, item, kind), items))


def _play_groups(pool: ThreadPoolExecutor, player: EpisodePlayer, jobs: Sequence[TaskItem]) -> tuple[list[float], int]:
    """Play every job; a broken episode is replayed (same item and seed) so each GRPO group completes.

    Returns the rewards and how many episodes were replayed."""
    rewards: list[float] = []
    replayed = 0
    for attempt in range(_ATTEMPTS):
        played = play_round(pool, player, jobs, "train")
        rewards += ended_rewards(played)
        jobs = [job for job, r in zip(jobs, played, strict=True) if r.rewards is None]
        if not jobs:
            return rewards, replayed
        if attempt + 1 < _ATTEMPTS:
            replayed += len(jobs)
    raise RuntimeError(f"{len(jobs)} train episodes failed three times: see the messages above")


def play_train_round(
    pool: ThreadPoolExecutor, client: SwarmClient, family: TaskFamily, settings: RoundSettings, step: int
) -> tuple[list[float], int]:
    """Play step `step`'s GRPO groups (seeded by the step); the train rewards and the episodes replayed."""
    items = family.items("train", count=settings.tasks_per_step, seed=settings.seed * 100_003 + step)
    jobs = group_members(items, settings.group_size)
    return _play_groups(pool, policy_player(client, family), jobs)


@dataclass(frozen=True)
class EvalResult:
    step: int
    solved: int
    episodes: int
    reward_mean: float
    invalid: int = 0
    actions: int = 0

    @property
    def invalid_share(self) -> float | None:
        """Share of the counted answers that were invalid; None when the family counts none."""
        return self.invalid / self.actions if self.actions else None


def evaluate(
    pool: ThreadPoolExecutor, client: SwarmClient, family: TaskFamily, items: Sequence[TaskItem], step: int
) -> EvalResult:
    """Play every eval item once (kind `eval`: never trained); solved count and mean reward."""
    played = [r for r in play_round(pool, policy_player(client, family), items, "eval") if r.rewards is not None]
    if not played:
        raise RuntimeError("every eval episode failed: see the messages above")
    rewards = ended_rewards(played)
    solved = sum(1 for r, reward in zip(played, rewards, strict=True) if _solved(r.metadata, reward))
    reward_mean = sum(rewards) / len(played)
    counts = [answer_counts(r.metadata) for r in played]
    invalid, actions = sum(i for i, _ in counts), sum(a for _, a in counts)
    return EvalResult(step, solved, len(played), reward_mean, invalid, actions)


def wait_for_step(client: SwarmClient, step: int) -> None:
    """Until the server has taken `step` and rolls again (the new adapter is being served)."""
    deadline = time.monotonic() + _STEP_TIMEOUT_S
    while True:
        status = client.status()
        if status["step"] >= step and status["state"] == "rolling":
            return
        if time.monotonic() > deadline:
            raise TimeoutError(f"server did not finish step {step} within {_STEP_TIMEOUT_S:.0f} s: {status}")
        time.sleep(0.2)


def wait_until_rolling(client: SwarmClient) -> None:
    """Until the server has loaded its model and rolls."""
    deadline = time.monotonic() + _STEP_TIMEOUT_S
    while client.health().get("state") != "rolling":
        if time.monotonic() > deadline:
            raise TimeoutError("server did not finish loading the model")
        time.sleep(0.2)
