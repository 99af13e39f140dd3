"""Rounds of episodes against one policy server: GRPO train rounds, held-out evals, waiting for a step.

The episode-round player of the learn benchmark (`bench learn`) and of the campaign's trials (`a3r/trial.py`):
`play_train_round` plays one step's GRPO groups (`tasks_per_step` fresh train items seeded by the
run's seed and the step, `group_size` episodes each, member seeds from `member_seed`), replaying a
broken episode (same item, same seed) so every group completes; `evaluate` plays every held-out
item once (kind `eval`: never trained) and counts the solved ones; `wait_for_step` and
`wait_until_rolling` poll the server. Only the public `SwarmClient` API is used.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from typing import Any

from agentjet.core import AgentJetError, SwarmClient
from agentjet.tasks.base import POLICY, Endpoint, TaskFamily, TaskItem
from agentjet.tasks.play.runner import member_seed

__all__ = [
    "EvalResult",
    "RoundSettings",
    "answer_counts",
    "evaluate",
    "play_train_round",
    "wait_for_step",
    "wait_until_rolling",
]

_STEP_TIMEOUT_S = 1800.0
_WIN = 1.0  # an episode counts as solved / won when its reward reaches this
_ATTEMPTS = 3  # a train round replays its broken episodes at most this often


@dataclass(frozen=True)
class RoundSettings:
    """What a train round plays: `tasks_per_step` items x a GRPO group of `group_size`, seeded by `seed`."""

    tasks_per_step: int = 2
    group_size: int = 8
    seed: int = 0


def _stderr(message: str) -> None:
    sys.stderr.write(f"[rounds] {message}\n")
    sys.stderr.flush()


@dataclass(frozen=True)
class _Played:
    reward: float
    solved: bool  # an exact answer or a won game (`metadata["won"]` where the family reports one)
    invalid: int = 0  # answers the family found invalid (replaced by a default), where it counts them
    actions: int = 0  # answers it counted


def answer_counts(metadata: Mapping[str, Any]) -> tuple[int, int]:
    """(invalid, actions) of the policy server's answers from an outcome's metadata; (0, 0) if not counted."""
    invalid, actions = metadata.get("invalid"), metadata.get("actions")
    if not (isinstance(invalid, Mapping) and isinstance(actions, Mapping)):
        return 0, 0
    return int(invalid.get(POLICY, 0)), int(actions.get(POLICY, 0))


def _play(client: SwarmClient, family: TaskFamily, item: TaskItem, kind: str) -> _Played | None:
    """One episode on the policy server; None when it broke (then it was aborted, never trained).

    Solved is the family's own `won` flag when it gives one (werewolves: a won game may score
    below 1 when the penalty is per action), else a reward of at least 1."""
    try:
        with client.episode(task_id=item.task_id, kind=kind, agent=family.name) as episode:  # type: ignore[arg-type]
            outcome = family.run(item, {POLICY: Endpoint(episode.base_url, episode.api_key)})
            reward = float(outcome.rewards[POLICY])
            episode.end(reward, dict(outcome.metadata))
            won = outcome.metadata.get("won")
            solved = bool(won[POLICY]) if isinstance(won, Mapping) and POLICY in won else reward >= _WIN
            return _Played(reward, solved, *answer_counts(outcome.metadata))
    except (AgentJetError, OSError, ValueError, KeyError) as exc:
        _stderr(f"episode failed task={item.task_id}: {type(exc).__name__}: {exc}")
        return None


def _play_all(
    pool: ThreadPoolExecutor, client: SwarmClient, family: TaskFamily, items: Sequence[TaskItem], kind: str
) -> list[_Played | None]:
    return list(pool.map(lambda item: _play(client, family, item, kind), items))


def _play_round(
    pool: ThreadPoolExecutor, client: SwarmClient, family: TaskFamily, jobs: Sequence[TaskItem]
) -> list[float]:
    """Play every job; a broken episode is replayed (same item and seed) so each GRPO group completes."""
    rewards: list[float] = []
    for _attempt in range(_ATTEMPTS):
        played = _play_all(pool, client, family, jobs, "train")
        rewards += [r.reward for r in played if r is not None]
        jobs = [job for job, r in zip(jobs, played, strict=True) if r is None]
        if not jobs:
            return rewards
    raise RuntimeError(f"{len(jobs)} train episodes failed three times: see the messages above")


def play_train_round(
    pool: ThreadPoolExecutor, client: SwarmClient, family: TaskFamily, settings: RoundSettings, step: int
) -> tuple[list[float], int]:
    """Play step `step`'s GRPO groups (seeded by the step); the train rewards and the episodes replayed."""
    items = family.items("train", count=settings.tasks_per_step, seed=settings.seed * 100_003 + step)
    jobs = [replace(i, seed=member_seed(i.seed, k)) for i in items for k in range(settings.group_size)]
    rewards = _play_round(pool, client, family, jobs)
    return rewards, len(jobs) - len(rewards)


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
    played = [r for r in _play_all(pool, client, family, items, "eval") if r is not None]
    if not played:
        raise RuntimeError("every eval episode failed: see the messages above")
    solved = sum(1 for r in played if r.solved)
    reward_mean = sum(r.reward for r in played) / len(played)
    invalid, actions = sum(r.invalid for r in played), sum(r.actions for r in played)
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
