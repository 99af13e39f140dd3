"""What a task run counts (episodes, rewards per server, errors, evals) and how it is shown.

`RunStats` is filled by the runner's main thread only (workers hand results over a queue), so it
needs no lock. `RunView` is the rich progress bar on stderr; `summary_table` the closing table,
`show_summary` what `agentjet client run` prints at the end (the table, or the JSON with `--json`).
"""

from __future__ import annotations

import json
import statistics
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn
from rich.table import Table

from agentjet.tasks.play.episode import EpisodeResult

__all__ = ["RunStats", "RunView", "show_summary", "summary_table"]

_KEPT_ERRORS = 5  # error messages kept in the summary (the count covers all)


def _mean(values: Sequence[float]) -> float | None:
    return round(statistics.fmean(values), 6) if values else None


@dataclass
class RunStats:
    """Counts of one block of episodes (the train run, or one eval round)."""

    servers: Sequence[str]
    ended: int = 0
    errors: int = 0
    interrupted: int = 0
    rewards: dict[str, list[float]] = field(default_factory=dict)
    error_messages: list[str] = field(default_factory=list)

    def add(self, result: EpisodeResult) -> None:
        if result.rewards is not None:
            self.ended += 1
            for name, reward in result.rewards.items():
                self.rewards.setdefault(name, []).append(reward)
        elif result.interrupted:
            self.interrupted += 1
        elif result.error is not None:
            self.errors += 1
            if len(self.error_messages) < _KEPT_ERRORS:
                self.error_messages.append(result.error)

    @property
    def reward_mean(self) -> float | None:
        """Mean over every reported reward (all servers together)."""
        return _mean([r for values in self.rewards.values() for r in values])

    def server_means(self) -> dict[str, float | None]:
        return {name: _mean(self.rewards.get(name, [])) for name in self.servers}


class RunView:
    """The live progress bar (episodes, mean reward, errors, server steps); a no-op when disabled."""

    def __init__(self, enabled: bool, console: Console | None = None) -> None:
        self._progress: Progress | None = None
        if enabled:
            self._progress = Progress(
                TextColumn("[bold]{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("reward {task.fields[reward]}"),
                TextColumn("errors {task.fields[errors]}"),
                TextColumn("step {task.fields[step]}"),
                TimeElapsedColumn(),
                console=console or Console(stderr=True),
            )
        self._steps = "?"

    def __enter__(self) -> RunView:
        if self._progress is not None:
            self._progress.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._progress is not None:
            self._progress.stop()

    def add_bar(self, description: str, total: int) -> TaskID | None:
        if self._progress is None:
            return None
        return self._progress.add_task(description, total=total, reward="-", errors=0, step=self._steps)

    def show(self, bar: TaskID | None, stats: RunStats, done: int) -> None:
        if self._progress is None or bar is None:
            return
        mean = stats.reward_mean
        reward = "-" if mean is None else f"{mean:.3f}"
        self._progress.update(bar, completed=done, reward=reward, errors=stats.errors, step=self._steps)

    def set_steps(self, steps: Mapping[str, int | None]) -> None:
        """Show the servers' training steps on the running bars (finished bars keep theirs)."""
        shown = {name: "?" if step is None else str(step) for name, step in steps.items()}
        self._steps = next(iter(shown.values())) if len(shown) == 1 else " ".join(f"{k}={v}" for k, v in shown.items())
        if self._progress is not None:
            for task in self._progress.tasks:
                if not task.finished:
                    self._progress.update(task.id, step=self._steps)


def summary_table(summary: Mapping[str, Any]) -> Table:
    """The closing table of `agentjet client run` (the same figures as `--json`)."""
    table = Table(title=f"agentjet client run: {summary['task']}", show_header=False)
    table.add_column("what", style="bold")
    table.add_column("value")
    rows: list[tuple[str, Any]] = [
        ("servers", ", ".join(f"{k}={v}" for k, v in summary["servers"].items())),
        ("episodes", f"{summary['episodes']} ended of {summary['episodes_requested']} requested"),
        ("errors", summary["errors"]),
        ("reward mean", summary["reward_mean"]),
    ]
    if len(summary["rewards"]) > 1:
        rows += [(f"reward mean [{name}]", mean) for name, mean in summary["rewards"].items()]
    rows += [
        (f"eval after {e['after_episodes']}", f"reward {e['reward_mean']} ({e['episodes']} episodes)")
        for e in summary["evals"]
    ]
    rows += [(f"server step [{name}]", f"{s['start']} -> {s['end']}") for name, s in summary["steps"].items()]
    rows += [
        ("group size x concurrency", f"{summary['group_size']} x {summary['concurrency']}"),
        ("seconds", summary["seconds"]),
    ]
    if summary["interrupted"]:
        rows.append(("interrupted", f"yes: {summary['aborted_on_interrupt']} open episode(s) aborted"))
    rows += [("error", message) for message in summary["error_messages"]]
    for what, value in rows:
        table.add_row(what, "-" if value is None else str(value))
    return table


def show_summary(summary: Mapping[str, Any], *, as_json: bool = False) -> int:
    """Print the run's summary on stdout (JSON, or the closing table); the exit status: 130 when interrupted."""
    if as_json:
        sys.stdout.write(json.dumps(summary, indent=2) + "\n")
        sys.stdout.flush()
    else:
        Console().print(summary_table(summary))
    return 130 if summary["interrupted"] else 0
