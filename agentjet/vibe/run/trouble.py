"""What can go wrong in a training run, read from its metrics and episodes, and what to do about each. Pure.

Detectors take plain data (metrics lines as documented in docs/metrics.md, episode records as
`GET /swarm/episodes/{id}` returns them) and return a `Finding` or None. `decide` maps a finding
to an `Action`, given what was already tried, so the watcher stays a thin loop.
"""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from enum import StrEnum
from typing import Any

__all__ = [
    "Action",
    "ActionKind",
    "Finding",
    "Tried",
    "Trouble",
    "client_errors",
    "decide",
    "degenerate_outputs",
    "flat_curve",
    "zero_variance",
]

_EPS = 1e-9


class Trouble(StrEnum):
    ZERO_VARIANCE = "zero_variance"  # every group's rewards equal: GRPO learns nothing
    FLAT_CURVE = "flat_curve"  # the train reward does not rise over a window of steps
    CLIENT_EXITED = "client_exited"  # the client process died with an error
    CLIENT_ERRORS = "client_errors"  # most recent episodes were aborted (the client's code raises)
    DEGENERATE_OUTPUTS = "degenerate_outputs"  # empty or identical completions
    SERVER_DOWN = "server_down"  # the server stopped answering


class ActionKind(StrEnum):
    ADJUST_CONFIG = "adjust_config"  # PUT /swarm/config with `changes` (dotted field -> value)
    REGENERATE_CLIENT = "regenerate_client"  # a new client file, hot-swapped in
    RESTART_CLIENT = "restart_client"  # the same file again (it ran out of episodes)
    STOP = "stop"  # nothing left to try: the run fails
    NOTE = "note"  # reported, nothing changed


@dataclass(frozen=True)
class Finding:
    """One problem: plain words, the step it was seen at, and evidence a repair prompt can use."""

    trouble: Trouble
    detail: str
    step: int
    evidence: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "trouble": str(self.trouble)}


@dataclass(frozen=True)
class Action:
    kind: ActionKind
    finding: Finding
    changes: Mapping[str, Any] = field(default_factory=dict)
    why: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"kind": str(self.kind), "why": self.why, "changes": dict(self.changes), **self.finding.to_dict()}


def _numbers(lines: Sequence[Mapping[str, Any]], key: str) -> list[float]:
    return [float(v) for line in lines if isinstance(v := line.get(key), int | float)]


def zero_variance(lines: Sequence[Mapping[str, Any]], *, steps: int) -> Finding | None:
    """The last `steps` steps all had zero within-group reward std (`group_reward_std`)."""
    recent = list(lines)[-steps:]
    stds = _numbers(recent, "group_reward_std")
    if len(recent) < steps or len(stds) < steps or any(std > _EPS for std in stds):
        return None
    rewards = sorted({round(r, 4) for r in _numbers(recent, "reward_mean")})
    return Finding(
        Trouble.ZERO_VARIANCE,
        f"zero reward variance within every group for {steps} steps (rewards {rewards}): no learning signal",
        int(recent[-1].get("step", 0)),
        f"last {steps} steps: group_reward_std={stds}, reward_mean={_numbers(recent, 'reward_mean')}",
    )


def flat_curve(lines: Sequence[Mapping[str, Any]], *, window: int, min_gain: float) -> Finding | None:
    """Over the last `window` steps the second half's mean train reward is not `min_gain` above the first's."""
    recent = list(lines)[-window:]
    rewards = _numbers(recent, "reward_mean")
    if len(recent) < window or len(rewards) < window or window < 2:
        return None
    half = window // 2
    first, second = statistics.fmean(rewards[:half]), statistics.fmean(rewards[half:])
    if second - first >= min_gain:
        return None
    return Finding(
        Trouble.FLAT_CURVE,
        f"train reward flat over {window} steps ({first:.3f} -> {second:.3f})",
        int(recent[-1].get("step", 0)),
        f"reward_mean over the window: {[round(r, 4) for r in rewards]}",
    )


def client_errors(episodes: Sequence[Mapping[str, Any]], *, share: float, least: int, step: int) -> Finding | None:
    """At least `share` of the client's recent closed episodes were aborted (its code raised)."""
    closed = [e for e in episodes if e.get("status") not in (None, "open")]
    aborted = [e for e in closed if e.get("status") == "aborted"]
    if len(closed) < least or len(aborted) < share * len(closed):
        return None
    return Finding(
        Trouble.CLIENT_ERRORS,
        f"{len(aborted)} of the client's last {len(closed)} episodes were aborted (its code raises)",
        step,
    )


def _completions(episodes: Sequence[Mapping[str, Any]]) -> list[str]:
    texts = []
    for episode in episodes:
        if episode.get("status") != "ended":
            continue
        for call in episode.get("calls") or []:
            if isinstance(call, Mapping) and not call.get("tool_calls"):
                texts.append(str(call.get("completion_text") or "").strip())
    return texts


def degenerate_outputs(episodes: Sequence[Mapping[str, Any]], *, least: int, step: int) -> Finding | None:
    """Of the completions in the recent ended episodes (at least `least`), 90% are empty or one same text."""
    texts = _completions(episodes)
    if len(texts) < least:
        return None
    empty = sum(1 for t in texts if not t)
    if empty >= 0.9 * len(texts):
        return Finding(Trouble.DEGENERATE_OUTPUTS, f"{empty} of {len(texts)} recent completions are empty", step)
    text, count = Counter(texts).most_common(1)[0]
    if count >= 0.9 * len(texts):
        sample = text[:200]
        return Finding(
            Trouble.DEGENERATE_OUTPUTS,
            f"{count} of {len(texts)} recent completions are the same text",
            step,
            f"the repeated completion: {sample!r}",
        )
    return None


@dataclass
class Tried:
    """What the watcher already did in this run (bounds every kind of action)."""

    group_size_raises: int = 0
    lr_raises: int = 0
    regenerations: int = 0
    restarts_after_crash: int = 0
    max_regenerations: int = 3
    can_regenerate: bool = True
    keep_lr: bool = False  # the spec's recipe was measured to learn at its lr: a flat curve is only reported


_CLIENT_TROUBLE = (Trouble.CLIENT_EXITED, Trouble.CLIENT_ERRORS, Trouble.DEGENERATE_OUTPUTS)


def decide(finding: Finding, tried: Tried, *, group_size: int, lr: float) -> Action:
    """The next thing to try for `finding`: a config knob where one fits, then a new client, else
    report it and keep training; only a dead server or a client that keeps crashing stops the run."""
    trouble = finding.trouble
    if trouble is Trouble.SERVER_DOWN:
        return Action(ActionKind.STOP, finding, why="the server is gone; the run cannot go on")
    if trouble is Trouble.ZERO_VARIANCE and tried.group_size_raises < 1 and group_size < 16:
        size = min(16, group_size * 2)
        return Action(ActionKind.ADJUST_CONFIG, finding, {"grpo.group_size": size}, f"more samples per task ({size})")
    if trouble is Trouble.FLAT_CURVE:
        if tried.keep_lr:
            why = "the recipe's learning rate was measured to learn (a noisy curve is no reason to change it)"
            return Action(ActionKind.NOTE, finding, why=f"{why}: reported, training goes on")
        if tried.lr_raises < 2 and lr < 1e-3:
            new_lr = min(1e-3, lr * 2)
            return Action(
                ActionKind.ADJUST_CONFIG, finding, {"optim.lr": new_lr}, f"raise the learning rate to {new_lr:g}"
            )
        done = "raised twice already" if tried.lr_raises >= 2 else f"at {lr:g}, the most the watcher sets"
        return Action(ActionKind.NOTE, finding, why=f"learning rate {done}: reported, training goes on")
    if tried.can_regenerate and tried.regenerations < tried.max_regenerations:
        if trouble in _CLIENT_TROUBLE or trouble is Trouble.ZERO_VARIANCE:
            return Action(ActionKind.REGENERATE_CLIENT, finding, why="regenerate the client with this evidence")
    if trouble is Trouble.CLIENT_EXITED:
        if tried.restarts_after_crash < 1:
            return Action(ActionKind.RESTART_CLIENT, finding, why="no new client can be made: start the same one again")
        return Action(ActionKind.STOP, finding, why="the client keeps crashing and cannot be regenerated")
    why = "no LLM to regenerate the client" if not tried.can_regenerate else "repair budget spent"
    return Action(ActionKind.NOTE, finding, why=f"{why}: reported, training goes on")
