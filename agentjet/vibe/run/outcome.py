"""Did the agent get better? The held-out success rate before the first update and after the last, and the change.

Every eval episode of the run is read back from the server by id (the episode taps noted the ids),
so it counts at the policy version that played it: an episode whose calls were all sampled by
version v is a point of v's evaluation, and one straddling a hot-load counts for no version. An
episode is a success when its metadata says it was won (`tasks.base.won_flag`: werewolves, where a
won game with invalid answers scores below the full reward), else when its reward reaches the
task's own bar (`success_metric.success_reward`: an exact answer), so `before` and `after` are win
rates or accuracies, not mean rewards. The change carries Newcombe's 95% interval
(`tasks.play.proportions`, as `bench learn`); the verdict is "improved" or "worse" only when that
interval excludes zero. Pure once read.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from agentjet.tasks.base import POLICY, won_flag
from agentjet.tasks.play.proportions import Rate, difference_ci, wilson

__all__ = ["EvalEpisode", "EvalPoint", "Outcome", "eval_episode", "measure_outcome"]

IMPROVED, NO_CHANGE, WORSE = "improved", "no change detectable", "worse"


@dataclass(frozen=True)
class EvalEpisode:
    """One held-out episode as the server journaled it: its policy version (None when it straddled an update)."""

    episode_id: str
    status: str  # ended, aborted, open
    reward: float | None
    version: int | None
    won: bool | None = None  # the task's own success flag, when its metadata gives one

    def solved(self, bar: float) -> bool:
        """A success: won, when the task says; else a reward of at least `bar`."""
        return self.won if self.won is not None else self.reward is not None and self.reward >= bar


def eval_episode(body: Mapping[str, Any], server: str = POLICY) -> EvalEpisode:
    """From `GET /swarm/episodes/{id}` of the task's server `server`: the one policy version every call was
    sampled by, if there is one, and the task's `won` flag for that server."""
    calls = [c for c in body.get("calls") or [] if isinstance(c, Mapping)]
    versions = {c.get("policy_version") for c in calls}
    if calls:
        version = next(iter(versions)) if len(versions) == 1 else None
    else:  # no model call (the game ended first): the version it began under
        version = body.get("policy_version_at_begin")
    reward = body.get("reward")
    metadata = body.get("metadata")
    return EvalEpisode(
        str(body.get("episode_id", "")),
        str(body.get("status", "")),
        float(reward) if isinstance(reward, int | float) and math.isfinite(reward) else None,
        version if isinstance(version, int) else None,
        won_flag(metadata, server) if isinstance(metadata, Mapping) else None,
    )


@dataclass(frozen=True)
class EvalPoint:
    """The held-out evaluation of one policy version."""

    step: int
    successes: int
    episodes: int
    reward_mean: float

    @property
    def rate(self) -> float:
        return self.successes / self.episodes

    def to_dict(self) -> dict[str, Any]:
        low, high = wilson(Rate(self.successes, self.episodes))
        return {
            "step": self.step,
            "successes": self.successes,
            "episodes": self.episodes,
            "rate": round(self.rate, 4),
            "ci95": [round(low, 4), round(high, 4)],
            "reward_mean": round(self.reward_mean, 4),
        }


def _point(step: int, episodes: Sequence[EvalEpisode], bar: float) -> EvalPoint:
    rewards = [e.reward or 0.0 for e in episodes]  # usable episodes have a reward
    return EvalPoint(step, sum(e.solved(bar) for e in episodes), len(episodes), sum(rewards) / len(episodes))


@dataclass(frozen=True)
class Outcome:
    """before (the base policy, at the launch step), after (the final policy), the curve between, and the verdict."""

    rate_name: str
    success_reward: float
    before: EvalPoint | None
    after: EvalPoint | None
    curve: tuple[EvalPoint, ...]
    unusable: int  # eval episodes that were aborted, still open, or straddled an update

    @property
    def change(self) -> float | None:
        return None if self.before is None or self.after is None else self.after.rate - self.before.rate

    @property
    def ci95(self) -> tuple[float, float] | None:
        if self.before is None or self.after is None:
            return None
        return difference_ci(
            Rate(self.after.successes, self.after.episodes), Rate(self.before.successes, self.before.episodes)
        )

    @property
    def verdict(self) -> str:
        """improved / no change detectable / worse, or why there is none."""
        interval = self.ci95
        if interval is None:
            missing = [name for name, p in (("before", self.before), ("after", self.after)) if p is None]
            return f"not measured (no {' and no '.join(missing)} evaluation)"
        if interval[0] > 0:
            return IMPROVED
        if interval[1] < 0:
            return WORSE
        return NO_CHANGE

    def sentence(self) -> str:
        """One line for the terminal and the report: `win rate 3/16 -> 14/16 (+68.8 points, 95% CI ...): improved`."""
        if self.before is None or self.after is None or self.change is None or self.ci95 is None:
            return f"{self.rate_name}: {self.verdict}"
        low, high = self.ci95
        return (
            f"{self.rate_name} {_share(self.before)} -> {_share(self.after)} "
            f"({self.change * 100:+.1f} points, 95% CI {low * 100:+.1f} to {high * 100:+.1f}): {self.verdict}"
        )

    def to_dict(self) -> dict[str, Any]:
        interval = self.ci95
        return {
            "rate": self.rate_name,
            "success_reward": self.success_reward,
            "before": self.before.to_dict() if self.before else None,
            "after": self.after.to_dict() if self.after else None,
            "change": None if self.change is None else round(self.change, 4),
            "ci95": None if interval is None else [round(interval[0], 4), round(interval[1], 4)],
            "verdict": self.verdict,
            "curve": [p.to_dict() for p in self.curve],
            "unusable_episodes": self.unusable,
            "interval": "Newcombe hybrid score interval (method 10) of after - before, 95%",
        }


def _share(point: EvalPoint) -> str:
    return f"{point.successes}/{point.episodes} ({point.rate:.0%})"


def measure_outcome(
    before: Iterable[EvalEpisode],
    after: Iterable[EvalEpisode],
    between: Iterable[EvalEpisode] = (),
    *,
    launch_step: int,
    final_step: int | None,
    success_reward: float,
    rate_name: str,
) -> Outcome:
    """`before`: the round played on the held policy at `launch_step`; `after`: the round on the held final policy
    (`final_step`; None: the version most of its episodes were played at); `between`: the rounds played while
    training, each counted at the version that played it. Episodes of another version are unusable."""
    unusable = 0
    by_version: dict[int, list[EvalEpisode]] = {}

    def usable(episodes: Iterable[EvalEpisode], step: int | None) -> list[EvalEpisode]:
        nonlocal unusable
        kept = []
        for e in episodes:
            if e.status == "ended" and e.reward is not None and e.version is not None and step in (None, e.version):
                kept.append(e)
            else:
                unusable += 1
        return kept

    after = list(after)
    if final_step is None:  # the version the final round was played at: the one most of its episodes share
        versions = [e.version for e in after if e.status == "ended" and e.version is not None]
        final_step = max(set(versions), key=versions.count) if versions else None
    first = usable(before, launch_step)
    last = usable(after, final_step) if final_step is not None else []
    for episode in between:
        if episode.status == "ended" and episode.reward is not None and episode.version is not None:
            by_version.setdefault(episode.version, []).append(episode)
        else:
            unusable += 1
    before_point = _point(launch_step, first, success_reward) if first else None
    after_point = _point(final_step, last, success_reward) if last and final_step is not None else None
    curve = [_point(v, rs, success_reward) for v, rs in sorted(by_version.items())]
    ends = [p for p in (before_point, after_point) if p is not None]
    points = sorted([*ends, *(p for p in curve if all(p.step != e.step for e in ends))], key=lambda p: p.step)
    return Outcome(rate_name, success_reward, before_point, after_point, tuple(points), unusable)
