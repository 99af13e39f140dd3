"""What a campaign session measured: where each trial's time went, pool utilisation, overhead per trial.

Times are `time.perf_counter()` seconds of the campaign process. A server is *held* from a trial's
launch to the end of its `run_trial`; the trial's *own work* is that minus the time its report
callbacks spent writing to the study (`report_s`). The window is from the first launch to the
last trial's end, so pool start-up and the final commits are not counted against the pool.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentjet.a3r.session.lock import StopMode

__all__ = ["CampaignResult", "TrialTiming", "launch_gaps"]


@dataclass(frozen=True)
class TrialTiming:
    """Where one trial's time went; `run_s` includes `report_s`."""

    number: int
    server: str
    state: str
    ask_s: float  # study.ask and its params (in the prefetch thread, while every server was busy)
    report_s: float  # study writes while the server is held: its attrs at launch, report + should_prune
    run_s: float  # launch -> run_trial returned: the server is held
    tell_s: float  # attrs + study.tell (+ enqueue of a re-run), after the server is released
    record_s: float  # files, curve.png, study.json and the git commit, after the server is released
    launched_at: float
    ended_at: float


def launch_gaps(timings: list[TrialTiming]) -> list[float]:
    """Per server, the idle time between one trial's end and the next trial's launch on it."""
    gaps: list[float] = []
    by_server: dict[str, list[TrialTiming]] = {}
    for timing in timings:
        by_server.setdefault(timing.server, []).append(timing)
    for runs in by_server.values():
        runs.sort(key=lambda t: t.launched_at)
        gaps += [max(0.0, b.launched_at - a.ended_at) for a, b in zip(runs, runs[1:], strict=False)]
    return gaps


@dataclass
class CampaignResult:
    """The outcome of one session (`start_campaign` / `resume_campaign`)."""

    repo: Path
    study: str
    stopped: StopMode | None  # a stop request ended the session early
    finished: bool  # the campaign has run to its end (search and confirmation)
    states: dict[str, int]  # trials per Optuna state, whole study
    best: dict[str, Any] | None  # the best search trial: number, value, params, seed
    servers: int
    wall_s: float
    timings: list[TrialTiming] = field(default_factory=list)  # this session's trials

    def _window(self) -> float:
        if not self.timings:
            return 0.0
        return max(t.ended_at for t in self.timings) - min(t.launched_at for t in self.timings)

    @property
    def utilization(self) -> float | None:
        """Server time held by trials / server time available over the window."""
        window = self._window()
        return sum(t.run_s for t in self.timings) / (self.servers * window) if window > 0 else None

    @property
    def work_utilization(self) -> float | None:
        """Like `utilization`, counting only the trials' own work (not their report writes)."""
        window = self._window()
        work = sum(t.run_s - t.report_s for t in self.timings)
        return work / (self.servers * window) if window > 0 else None

    @property
    def overhead_per_trial_s(self) -> float | None:
        """Campaign time per trial outside the trial's own work: ask, report/prune, tell, and the
        idle gap its server had before the launch (the git/PNG record is `record_per_trial_s`;
        it runs after the server is released)."""
        if not self.timings:
            return None
        own = statistics.fmean(t.ask_s + t.report_s + t.tell_s for t in self.timings)
        return own + sum(launch_gaps(self.timings)) / len(self.timings)

    @property
    def record_per_trial_s(self) -> float | None:
        return statistics.fmean(t.record_s for t in self.timings) if self.timings else None
