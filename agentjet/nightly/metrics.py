"""What a nightly metric is (`Metric`) and what one suite run of one commit produced (`RunRecord`).

Everything else in the package speaks these two types: suites declare `Metric`s and return
samples, the history stores `RunRecord`s, detection and the dashboard read them back.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

__all__ = ["Direction", "Metric", "RunRecord", "RunStatus", "Test"]

Direction = Literal["higher", "lower"]  # which way is better
Test = Literal["rank", "exact"]  # rank: noisy samples, Mann-Whitney; exact: deterministic values (seeded CPU training)
RunStatus = Literal["ok", "infra_failure"]


@dataclass(frozen=True)
class Metric:
    """One measured quantity. `min_effect` is the smallest change worth an alarm: relative (0.05 = 5 %)
    for `rank` metrics, absolute for `exact` ones. `repeats` samples are taken per run."""

    name: str
    unit: str
    direction: Direction
    repeats: int
    test: Test = "rank"
    min_effect: float = 0.05
    kind: Literal["speed", "quality"] = "speed"
    description: str = ""

    def __post_init__(self) -> None:
        if self.direction not in ("higher", "lower"):
            raise ValueError(f"{self.name}: direction must be 'higher' or 'lower', got {self.direction!r}")
        if self.test not in ("rank", "exact"):
            raise ValueError(f"{self.name}: test must be 'rank' or 'exact', got {self.test!r}")
        if self.repeats < 1 or self.min_effect < 0:
            raise ValueError(f"{self.name}: repeats must be >= 1 and min_effect >= 0")

    def badness(self, new: float, old: float) -> float:
        """How much worse `new` is than `old` (negative: better): relative for rank metrics, absolute for exact."""
        delta = (old - new) if self.direction == "higher" else (new - old)
        if self.test == "exact":
            return delta
        return delta / abs(old) if old else (0.0 if delta == 0 else float("inf") * (1 if delta > 0 else -1))

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Metric:
        return cls(**{k: data[k] for k in cls.__dataclass_fields__ if k in data})


@dataclass(frozen=True)
class RunRecord:
    """One suite run of one commit on one machine. An infrastructure failure (the build broke, a
    server did not start) has `status="infra_failure"`, an `error`, and never counts as a regression."""

    commit: str  # full sha
    commit_order: int  # `git rev-list --count COMMIT`: orders commits along the history
    subject: str  # the commit's first line
    date: str  # ISO-8601 UTC, when the run happened
    machine: str  # fingerprint (short hash of `machine_info`)
    machine_info: Mapping[str, Any]
    packages: Mapping[str, str]  # installed distributions -> versions
    suite: str
    status: RunStatus = "ok"
    error: str | None = None
    samples: Mapping[str, list[float]] = field(default_factory=dict)  # metric name -> raw samples
    metrics: Mapping[str, Metric] = field(default_factory=dict)  # the declarations the run measured under
    details: Mapping[str, Any] = field(default_factory=dict)  # free-form extras (curves, timings)
    run_id: int | None = None  # set by the history store
