"""Training metrics as values: one step's numbers, an episode's merge report, TensorBoard tags (pure).

Nothing here does I/O or reads a clock: the training loop hands in what a step did and gets
back the flat dict that becomes one `metrics.jsonl` line (`metrics_log.py` writes it, and its
numeric values as TensorBoard scalars). Names and meanings are documented in docs/metrics.md.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from agentjet.core.episodes.merging import Drift, DriftReason, MatchLevel, merge_timelines
from agentjet.core.training.advantages import mean_std
from agentjet.core.types import CallRecord, EpisodeKind, EpisodeRecord, EpisodeStatus

if TYPE_CHECKING:
    from agentjet.core.step.step_stats import StepStats

__all__ = [
    "EvalRewards",
    "drift_counts",
    "episode_with_merge_report",
    "merge_report",
    "step_metrics",
    "tensorboard_scalars",
]

# JSONL keys that are positions or clocks, not measurements: never TensorBoard scalars
_NOT_SCALARS = frozenset({"step", "policy_version", "time", "trained_through_seq", "eval_through_seq"})
# TensorBoard section of a metric, by key prefix (first match); the rest go under "train/"
_SECTIONS = (
    ("eval_", "eval"),
    ("reward_", "reward"),
    ("group", "reward"),
    ("advantage_", "advantage"),
    ("drift", "merge"),
    ("merge_", "merge"),
    ("samples", "merge"),
    ("calls", "merge"),
    ("episodes", "batch"),
    ("skipped_", "batch"),
)


@dataclass
class EvalRewards:
    """Rewards of ended eval episodes not yet reported, by journal seq (so a replay adds none twice)."""

    pending: dict[int, float] = field(default_factory=dict)
    through_seq: int = 0  # the highest eval seq already reported in a metrics line

    def observe(self, record: EpisodeRecord, seq: int) -> None:
        """Keep an ended eval episode's reward for the next step's line; ignore everything else."""
        if record.kind is EpisodeKind.EVAL and record.status is EpisodeStatus.ENDED and seq > self.through_seq:
            self.pending[seq] = record.reward or 0.0

    def take(self) -> list[float]:
        """The pending rewards, oldest first; they are reported once, in the line being built."""
        rewards = [self.pending[seq] for seq in sorted(self.pending)]
        self.through_seq = max([self.through_seq, *self.pending])
        self.pending.clear()
        return rewards


def drift_counts(drifts: Iterable[Drift]) -> dict[str, int]:
    """`drift_<reason>` -> how many calls stayed apart for that reason (every reason, zeros too)."""
    counts = {f"drift_{reason}": 0 for reason in DriftReason}
    for drift in drifts:
        counts[f"drift_{drift.reason}"] += 1
    return counts


def _mean_std(values: Sequence[float]) -> tuple[float, float]:
    return mean_std(values)  # overflow-safe for any finite rewards


def _groups(rewards: Sequence[float], task_ids: Sequence[str]) -> list[dict[str, Any]]:
    members: dict[str, list[float]] = {}
    for reward, task_id in zip(rewards, task_ids, strict=True):
        members.setdefault(task_id, []).append(reward)
    groups = []
    for task_id, values in members.items():
        mean, std = _mean_std(values)
        groups.append({"task_id": task_id, "episodes": len(values), "reward_mean": mean, "reward_std": std})
    return groups


def _reward_metrics(rewards: Sequence[float], task_ids: Sequence[str]) -> dict[str, Any]:
    mean, std = _mean_std(rewards)
    groups = _groups(rewards, task_ids)
    return {
        "reward_mean": mean,
        "reward_std": std,
        "group_reward_mean": mean_std([g["reward_mean"] for g in groups])[0],
        "group_reward_std": mean_std([g["reward_std"] for g in groups])[0],
        "groups_without_signal": sum(1 for g in groups if g["reward_std"] == 0.0),
        "groups": groups,
    }


def _eval_metrics(eval_rewards: Sequence[float]) -> dict[str, Any]:
    if not eval_rewards:
        return {"eval_episodes": 0, "eval_reward_mean": None, "eval_reward_std": None}
    mean, std = _mean_std(eval_rewards)
    return {"eval_episodes": len(eval_rewards), "eval_reward_mean": mean, "eval_reward_std": std}


def step_metrics(
    stats: StepStats,
    *,
    rewards: Sequence[float],
    task_ids: Sequence[str],
    advantages: Sequence[float],
    drifts: Sequence[Drift],
    calls: int,
    samples: int,
    eval_rewards: Sequence[float],
) -> dict[str, Any]:
    """What one optimiser step did, as flat metric values (`advantages`: one per trained episode)."""
    advantage_mean, advantage_std = _mean_std(advantages)
    return {
        "loss": stats.loss,
        "kl": stats.kl,
        "clip_fraction": stats.clip_fraction,
        "tis": stats.tis_applied,
        "tis_weight_mean": stats.tis_weight_mean,
        "tis_truncated_fraction": stats.tis_truncated_fraction,
        "grad_norm": stats.grad_norm,
        "tokens_trained": stats.tokens_trained,
        "micro_batches": stats.micro_batches,
        "prefix_tokens_saved": stats.prefix_tokens_saved,
        "episodes": len(rewards),
        "samples": samples,
        "samples_skipped": stats.samples_skipped,
        "calls": calls,
        "merge_ratio": calls / samples,
        "drifts": len(drifts),
        **drift_counts(drifts),
        "advantage_mean": advantage_mean,
        "advantage_std": advantage_std,
        "advantage_absmax": max(abs(a) for a in advantages),
        **_reward_metrics(rewards, task_ids),
        **_eval_metrics(eval_rewards),
        "train_time_s": stats.step_time_s,
    }


def tensorboard_scalars(metrics: Mapping[str, Any]) -> list[tuple[str, float]]:
    """(tag, value) for every numeric metric of a line; tags are `<section>/<key>`, e.g. `reward/reward_mean`."""
    scalars = []
    for key, value in metrics.items():
        if key in _NOT_SCALARS or isinstance(value, bool) or not isinstance(value, int | float):
            continue
        section = next((name for prefix, name in _SECTIONS if key.startswith(prefix)), "train")
        scalars.append((f"{section}/{key}", float(value)))
    return scalars


def merge_report(calls: Sequence[CallRecord], *, match: MatchLevel, tokenizer: Any | None = None) -> dict[str, Any]:
    """How merging at `match` folds these calls: the samples, and for each, why it started a new one.

    `reason` is null for a sample that is no drift: the episode's first call, a fresh
    conversation, or another choice (n > 1) of a call already sampled. With a `tokenizer`,
    `sample_tokens` gives each sample's tokens, which of them train (`loss_mask`) and their
    behaviour logprobs: what the episode inspector marks.
    """
    samples, drifts = merge_timelines(calls, match=match)
    by_call = {drift.call: drift for drift in drifts}
    starts = []
    for sample in samples:
        drift = by_call.get(sample.calls[0])
        starts.append(
            {
                "call_index": sample.calls[0][0],
                "choice_index": sample.calls[0][1],
                "calls": len(sample.calls),
                "trainable_tokens": sum(sample.loss_mask),
                "reason": str(drift.reason) if drift else None,
                "compared_with": list(drift.timeline) if drift else None,
                "shared_tokens": drift.shared_tokens if drift else None,
            }
        )
    counts = {key.removeprefix("drift_"): n for key, n in drift_counts(drifts).items() if n}
    ratio = len(calls) / len(samples) if samples else None
    report: dict[str, Any] = {
        "match": match,
        "calls": len(calls),
        "samples": len(samples),
        "merge_ratio": ratio,
        "drifts": counts,
        "sample_starts": starts,
    }
    if tokenizer is not None:
        report["sample_tokens"] = [
            {
                "tokens": tokenizer.convert_ids_to_tokens(list(sample.token_ids)),
                "loss_mask": list(sample.loss_mask),
                "logprobs": list(sample.behaviour_logprobs),
            }
            for sample in samples
        ]
    return report


def episode_with_merge_report(
    episode: dict[str, Any], match: MatchLevel, tokenizer: Any | None = None
) -> dict[str, Any]:
    """An episode view (`GET /swarm/episodes/{id}`) with `merge` added when it ended with a reward
    (with each sample's tokens when a `tokenizer` is given)."""
    if episode.get("status") != str(EpisodeStatus.ENDED):
        return episode
    calls = [CallRecord.from_dict(c) for c in episode.get("calls", [])]
    return {**episode, "merge": merge_report(calls, match=match, tokenizer=tokenizer)}
