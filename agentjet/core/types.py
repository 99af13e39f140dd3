"""Plain values shared by every part of the core: ids, states, sampling requests and call records.

Nothing here does I/O or imports another AgentJet module; records are frozen dataclasses so
that the tracker, the journal and (later) the trainer can pass them around without copies
going stale.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from enum import StrEnum
from typing import Any, Literal, NewType

__all__ = [
    "CLIENT_ID_PATTERN",
    "ADMIN",
    "NEXT_STATES",
    "CallRecord",
    "EngineState",
    "EpisodeId",
    "EpisodeKind",
    "EpisodeRecord",
    "EpisodeStatus",
    "FinishReason",
    "Generation",
    "GenerationRequest",
    "Principal",
    "SamplingParams",
    "TokenDelta",
    "sampled_version",
]

EpisodeId = NewType("EpisodeId", str)
# a swarm client's self-chosen id: short and safe to log, put in a URL path or show in a terminal
CLIENT_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}$"
FinishReason = Literal["stop", "length", "tool_calls", "abort"]


@dataclass(frozen=True)
class Principal:
    """Who sent a `/swarm` request: the admin, or the holder of one client token (`tokens.py`)."""

    principal_id: str  # "admin", or the client token's id ("tok_...")
    name: str

    @property
    def is_admin(self) -> bool:
        return self.principal_id == ADMIN_ID

    def may_act_for(self, owner: str | None) -> bool:
        """The admin may act on anything; a client token only on what it owns (None: the admin's)."""
        return self.is_admin or owner == self.principal_id


ADMIN_ID = "admin"
ADMIN = Principal(ADMIN_ID, "admin")


class EpisodeKind(StrEnum):
    TRAIN = "train"
    EVAL = "eval"


class EpisodeStatus(StrEnum):
    OPEN = "open"
    ENDED = "ended"  # completed with a reward: the only status that can become training data
    ABORTED = "aborted"  # the client gave up (exception in its block, Ctrl-C)
    RECLAIMED = "reclaimed"  # abandoned; the idle janitor closed it


class EngineState(StrEnum):
    OFFLINE = "offline"
    BOOTING = "booting"
    ROLLING = "rolling"  # serving; a batch may be forming
    UPDATING = "updating"  # the trainer steps on a batch; calls are still served by the current weights
    DRAINING = "draining"  # the new weights are next: new calls wait, running ones finish, then the hot-load


NEXT_STATES: dict[EngineState, frozenset[EngineState]] = {  # training_loop.py drives updating and draining
    EngineState.OFFLINE: frozenset({EngineState.BOOTING}),
    EngineState.BOOTING: frozenset({EngineState.ROLLING, EngineState.OFFLINE}),
    EngineState.ROLLING: frozenset({EngineState.UPDATING, EngineState.DRAINING, EngineState.OFFLINE}),
    EngineState.UPDATING: frozenset({EngineState.DRAINING, EngineState.ROLLING, EngineState.OFFLINE}),
    EngineState.DRAINING: frozenset({EngineState.ROLLING, EngineState.OFFLINE}),
}


@dataclass(frozen=True)
class SamplingParams:
    """How to sample one sequence. `seed` makes a sequence reproducible whatever it is batched with."""

    max_tokens: int = 256
    temperature: float = 1.0
    top_p: float = 1.0
    stop: tuple[str, ...] = ()
    seed: int | None = None


@dataclass(frozen=True)
class GenerationRequest:
    """One sequence to sample: the exact prompt token ids and how to sample.

    `base`: sample from the base weights, without the trained adapter (version 0), beside the policy's
    sequences: a held-out eval of the base once training has begun."""

    request_id: str
    prompt_ids: tuple[int, ...]
    params: SamplingParams = field(default_factory=SamplingParams)
    base: bool = False


@dataclass(frozen=True)
class TokenDelta:
    """Tokens sampled since the last delta of a stream, with their text (stop strings held back).

    `policy_version` is the version of the weights that sampled these tokens: the one source of a
    call's recorded version (None on a delta that samples nothing, such as a bare finish)."""

    token_ids: tuple[int, ...]
    logprobs: tuple[float, ...]
    text: str
    finish_reason: FinishReason | None = None
    policy_version: int | None = None


def sampled_version(deltas: Iterable[TokenDelta]) -> int | None:
    """The oldest version that sampled any of these tokens (a call straddling a hot-load counts as the older
    policy's); None when no delta sampled a token."""
    versions = [d.policy_version for d in deltas if d.token_ids and d.policy_version is not None]
    return min(versions) if versions else None


@dataclass(frozen=True)
class Generation:
    """A finished sequence. `completion_ids` are exactly the sampled tokens (never re-tokenised);
    `text` is their decoding with any stop string and what follows it removed."""

    completion_ids: tuple[int, ...]
    logprobs: tuple[float, ...]
    text: str
    finish_reason: FinishReason
    policy_version: int


@dataclass(frozen=True)
class CallRecord:
    """Everything one sampled choice of one chat call saw and produced (token-in/token-out).

    The trainer rebuilds samples from `prompt_ids` + `completion_ids` with `completion_logprobs`
    as behaviour logprobs; `messages`/`tools` are kept as sent so text-level merging and humans
    can see what the model saw.
    """

    episode_id: str
    call_index: int
    choice_index: int
    agent: str | None
    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]] | None
    sampling: dict[str, Any]
    prompt_text: str
    prompt_ids: tuple[int, ...]
    completion_ids: tuple[int, ...]
    completion_logprobs: tuple[float, ...]
    completion_text: str
    tool_calls: list[dict[str, Any]] | None
    finish_reason: str
    policy_version: int
    tool_format: str
    started_at: float
    first_token_s: float | None
    finished_at: float
    last_assistant_end: int | None = None  # prompt token offset after the last assistant turn
    forced_text: str = ""  # a tool call's opening that tool_choice put at the prompt's end (the reply's start)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        for key in ("prompt_ids", "completion_ids", "completion_logprobs"):
            d[key] = list(d[key])
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> CallRecord:
        d = dict(d)
        for key in ("prompt_ids", "completion_ids", "completion_logprobs"):
            d[key] = tuple(d[key])
        return cls(**d)


@dataclass(frozen=True)
class EpisodeRecord:
    """A closed episode as the journal stores it; only `status == ENDED` train episodes are trained."""

    episode_id: str
    task_id: str
    kind: EpisodeKind
    agent: str | None
    status: EpisodeStatus
    reward: float | None
    metadata: dict[str, Any]
    created_at: float
    closed_at: float
    policy_version_at_begin: int
    calls: tuple[CallRecord, ...]
    client_id: str | None = None  # the swarm client that began it (C4/C5 bookkeeping, status)
    owner: str | None = None  # the principal that began it: "admin" or a client token id (None: before tokens)
    base_model: bool = False  # an eval episode played by the base weights beside the policy

    def to_dict(self) -> dict[str, Any]:
        return {
            "episode_id": self.episode_id,
            "task_id": self.task_id,
            "kind": str(self.kind),
            "agent": self.agent,
            "client_id": self.client_id,
            "owner": self.owner,
            "status": str(self.status),
            "reward": self.reward,
            "metadata": self.metadata,
            "created_at": self.created_at,
            "closed_at": self.closed_at,
            "policy_version_at_begin": self.policy_version_at_begin,
            "base_model": self.base_model,
            "calls": [c.to_dict() for c in self.calls],
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> EpisodeRecord:
        return cls(
            episode_id=d["episode_id"],
            task_id=d["task_id"],
            kind=EpisodeKind(d["kind"]),
            agent=d.get("agent"),
            status=EpisodeStatus(d["status"]),
            reward=d.get("reward"),
            metadata=d.get("metadata") or {},
            created_at=d["created_at"],
            closed_at=d["closed_at"],
            policy_version_at_begin=d.get("policy_version_at_begin", 0),
            calls=tuple(CallRecord.from_dict(c) for c in d.get("calls", [])),
            client_id=d.get("client_id"),  # absent in journals written before client ids
            owner=d.get("owner"),  # absent before client tokens: such episodes are the admin's
            base_model=bool(d.get("base_model", False)),
        )
