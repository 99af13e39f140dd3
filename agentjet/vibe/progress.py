"""What a vibe run shows in a terminal: each node with status and elapsed time, the last log line, the reward curve.

Nodes and watchers report events to a `ProgressSink`; the graph never knows how they are shown.
`LiveProgress` redraws a rich view in place (a TTY); `PlainProgress` writes one flushed line per
event (pipes, CI, log files, and the tests that wait for "red_team: started" before a kill -9).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol, TextIO

from rich.console import Console, Group, RenderableType
from rich.live import Live
from rich.table import Table
from rich.text import Text

from agentjet.vibe.state import NODES

if TYPE_CHECKING:
    from types import TracebackType

__all__ = ["LiveProgress", "NullProgress", "PlainProgress", "ProgressSink", "make_progress", "sparkline"]

_BLOCKS = "▁▂▃▄▅▆▇█"
_MARKS = {"waiting": ("·", "dim"), "running": ("●", "yellow"), "done": ("✓", "green"), "failed": ("✗", "red")}


class ProgressSink(Protocol):
    """Receives a run's events. Thread-safe: watchers call it from their own threads. Never raises."""

    def node_started(self, node: str) -> None: ...

    def node_finished(self, node: str, outcome: str, elapsed_s: float, detail: str = "") -> None: ...

    def log(self, line: str) -> None: ...

    def train_step(self, step: int, reward: float | None) -> None: ...


class NullProgress:
    """Shows nothing (library use, tests)."""

    def node_started(self, node: str) -> None:
        pass

    def node_finished(self, node: str, outcome: str, elapsed_s: float, detail: str = "") -> None:
        pass

    def log(self, line: str) -> None:
        pass

    def train_step(self, step: int, reward: float | None) -> None:
        pass


def sparkline(values: Sequence[float], width: int = 40) -> str:
    """The last `width` values as block characters scaled between their min and max (flat: a middle row)."""
    tail = list(values)[-width:]
    if not tail:
        return ""
    low, high = min(tail), max(tail)
    if high - low < 1e-12:
        return _BLOCKS[len(_BLOCKS) // 2 - 1] * len(tail)
    top = len(_BLOCKS) - 1
    return "".join(_BLOCKS[round((v - low) / (high - low) * top)] for v in tail)


def _first_line(text: str, limit: int = 160) -> str:
    line = text.strip().splitlines()[0] if text.strip() else ""
    return line if len(line) <= limit else line[: limit - 1] + "…"


class PlainProgress:
    """One line per event on `stream`, flushed at once, prefixed with the run's elapsed seconds."""

    def __init__(self, stream: TextIO, run_id: str = "") -> None:
        self._stream = stream
        self._lock = threading.Lock()
        self._t0 = time.monotonic()
        self._rewards: list[float] = []
        if run_id:
            self._write(f"run {run_id}")

    def __enter__(self) -> PlainProgress:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        pass

    def _write(self, text: str) -> None:
        with self._lock:
            self._stream.write(f"[vibe {time.monotonic() - self._t0:7.1f}s] {text}\n")
            self._stream.flush()

    def node_started(self, node: str) -> None:
        self._write(f"{node}: started")

    def node_finished(self, node: str, outcome: str, elapsed_s: float, detail: str = "") -> None:
        tail = f": {_first_line(detail)}" if detail else ""
        self._write(f"{node}: {outcome} ({elapsed_s:.1f}s){tail}")

    def log(self, line: str) -> None:
        if line.strip():
            self._write(f"  {_first_line(line)}")

    def train_step(self, step: int, reward: float | None) -> None:
        if reward is not None:
            self._rewards.append(reward)
        shown = "n/a" if reward is None else f"{reward:.3f}"
        self._write(f"step {step}: train reward {shown} {sparkline(self._rewards, 30)}")


class LiveProgress:
    """A rich view redrawn in place: use as a context manager around the run."""

    def __init__(self, console: Console, run_id: str = "", sentence: str = "") -> None:
        self._lock = threading.Lock()
        self._title = f"vibe {run_id}" + (f"  «{_first_line(sentence, 80)}»" if sentence else "")
        self._t0 = time.monotonic()
        self._status: dict[str, str] = {node: "waiting" for node in (*NODES, "repair")}
        self._started: dict[str, float] = {}
        self._elapsed: dict[str, float] = {}
        self._details: dict[str, str] = {}
        self._repairs = 0
        self._rewards: list[float] = []
        self._last_step: int | None = None
        self._last_line = ""
        self._live = Live(console=console, get_renderable=self._render, refresh_per_second=4, transient=False)

    def __enter__(self) -> LiveProgress:
        self._live.__enter__()
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self._live.refresh()
        self._live.__exit__(kind, exc, tb)

    def node_started(self, node: str) -> None:
        with self._lock:
            self._status[node] = "running"
            self._started[node] = time.monotonic()
            self._details.pop(node, None)

    def node_finished(self, node: str, outcome: str, elapsed_s: float, detail: str = "") -> None:
        with self._lock:
            self._status[node] = "failed" if outcome in ("failed", "refused") else "done"
            self._elapsed[node] = self._elapsed.get(node, 0.0) + elapsed_s
            self._started.pop(node, None)
            if node == "repair":
                self._repairs += 1
            if detail:
                self._details[node] = _first_line(detail, 100)

    def log(self, line: str) -> None:
        if line.strip():
            with self._lock:
                self._last_line = _first_line(line)

    def train_step(self, step: int, reward: float | None) -> None:
        with self._lock:
            self._last_step = step
            if reward is not None:
                self._rewards.append(reward)

    def _render(self) -> RenderableType:
        with self._lock:
            now = time.monotonic()
            table = Table.grid(padding=(0, 2))
            for node, state in self._status.items():
                if node == "repair" and not self._repairs and state == "waiting":
                    continue
                mark, style = _MARKS[state]
                elapsed = self._elapsed.get(node, 0.0) + (now - self._started[node] if node in self._started else 0.0)
                shown = f"{elapsed:6.1f}s" if elapsed or state != "waiting" else ""
                name = f"{node} x{self._repairs}" if node == "repair" else node
                detail = Text(self._details.get(node, ""), "dim")
                table.add_row(Text(mark, style=style), Text(name), Text(shown), detail)
            lines: list[RenderableType] = [Text(f"{self._title}  ({now - self._t0:.0f}s)", style="bold"), table]
            if self._last_step is not None:
                last = f"{self._rewards[-1]:.3f}" if self._rewards else "n/a"
                curve = sparkline(self._rewards)
                lines.append(Text(f"train reward {curve}  step {self._last_step}  last {last}", style="cyan"))
            if self._last_line:
                lines.append(Text(self._last_line, style="dim"))
            return Group(*lines)


def make_progress(stream: TextIO, run_id: str, sentence: str = "") -> PlainProgress | LiveProgress:
    """A live view when `stream` is a terminal, plain lines otherwise."""
    if stream.isatty():
        return LiveProgress(Console(file=stream), run_id, sentence)
    return PlainProgress(stream, run_id)
