"""`ReportInput`: what happened in one vibe run, as the report and its text renderer read it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = ["ReportInput"]


@dataclass
class ReportInput:
    """What happened in one run. Mappings are the nodes' JSON results (missing: that node never ran)."""

    sentence: str
    status: str  # done, failed, refused, budget_exhausted ...
    started_at: float  # wall clock
    finished_at: float | None = None  # default: now
    run_id: str = ""
    message: str = ""
    spec: Mapping[str, Any] | None = None
    generated: Mapping[str, Any] | None = None
    validation: Mapping[str, Any] | None = None
    red_team: Mapping[str, Any] | None = None
    repairs: Sequence[Mapping[str, Any]] = ()
    training: Mapping[str, Any] | None = None  # watch result (+ "metrics": lines, "server": {...})
    timings: Mapping[str, Mapping[str, float]] = field(default_factory=dict)
