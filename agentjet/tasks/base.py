"""What a task family is: a seeded dataset, agent code that plays one item, and its reward.

A task family is client-side code. It never imports the core's internals: it talks to policy
servers only through the OpenAI-compatible endpoint of an episode (`Endpoint`: base_url, api_key,
model), exactly like any user's agent. The runner (`agentjet client run`, `tasks/play/runner.py`)
owns the swarm side: it begins one episode per policy server the family names, hands the
family their endpoints, and ends each episode with the reward the family returns for it (or
aborts them all when `run` raises).

Families with one trained model name one server, `"policy"`. A family that trains several
models at once (werewolves: wolves on one server, seer and witch on another) names several
servers in `servers` and returns one reward per server name.

Contract of `run`: deterministic given the item, the endpoints' replies and `item.seed`; invalid
model output is penalised inside the reward, never raised. An exception means the episode is
broken (e.g. the server went away) and is aborted, never trained. A family's constructor refuses bad
params with a ValueError (`check_level`, `check_max_tokens`: the checks the built-in families share).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

__all__ = [
    "POLICY",
    "Endpoint",
    "Outcome",
    "Split",
    "TaskFamily",
    "TaskItem",
    "check_level",
    "check_max_tokens",
    "won_flag",
]

POLICY = "policy"  # the server name of single-model families
Split = Literal["train", "eval"]


@dataclass(frozen=True)
class Endpoint:
    """Where an episode's agent sends its chat calls (an episode key authorises them)."""

    base_url: str
    api_key: str
    model: str = "policy"


@dataclass(frozen=True)
class TaskItem:
    """One dataset item. Episodes with the same `task_id` form a GRPO group."""

    task_id: str
    seed: int  # drives everything random in the episode (sampling seeds, scripted opponents)
    data: Mapping[str, Any]  # JSON-serialisable: what the agent needs to play the item


@dataclass(frozen=True)
class Outcome:
    """How one episode went: a reward per policy server, plus what a human wants to see."""

    rewards: Mapping[str, float]
    metadata: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def single(cls, reward: float, **metadata: Any) -> Outcome:
        return cls({POLICY: reward}, metadata)


def won_flag(metadata: Mapping[str, Any], server: str = POLICY) -> bool | None:
    """Whether `server`'s side won, from an outcome's metadata `won` (a bool, or a bool per server), or None.

    A family that knows its own success says so here (werewolves: a won game may score below the
    full reward when invalid answers cost something), and counting a success then reads this flag
    rather than a reward bar."""
    won = metadata.get("won")
    if isinstance(won, bool):
        return won
    if isinstance(won, Mapping) and isinstance(won.get(server), bool):
        return bool(won[server])
    return None


@runtime_checkable
class TaskFamily(Protocol):
    """A built-in task family or a user's client file (`TASK = MyFamily(...)`)."""

    # read-only members, so a plain `servers = ("policy",)` or a tuple attribute satisfies them (mypy)
    @property
    def name(self) -> str: ...

    @property
    def servers(self) -> Sequence[str]:
        """Policy servers an episode needs; (POLICY,) for single-model families."""
        ...

    def items(self, split: Split, *, count: int, seed: int) -> list[TaskItem]:
        """`count` items of `split`, the same for the same seed; train and eval never overlap."""
        ...

    def run(self, item: TaskItem, llms: Mapping[str, Endpoint]) -> Outcome:
        """Play one item against the given endpoints (keys = `servers`) and score it."""
        ...


def check_level(difficulty: int, levels: Mapping[int, object]) -> int:
    """`difficulty` when it names one of a family's `levels`; else a ValueError listing them."""
    if difficulty not in levels:
        raise ValueError(f"difficulty must be one of {sorted(levels)}, got {difficulty!r}")
    return difficulty


def check_max_tokens(max_tokens: int) -> int:
    """`max_tokens` of a family's chat calls when it is at least 1; else a ValueError."""
    if max_tokens < 1:
        raise ValueError(f"max_tokens must be >= 1, got {max_tokens}")
    return max_tokens
