"""One trial's learning curve as a small PNG (`trials/<n>/curve.png` in the campaign repo).

Drawn on a bare `matplotlib.figure.Figure` with the Agg canvas, never through pyplot's global
state. Rendering a PNG holds the GIL for ~0.1 s, which a campaign's scheduler and trial threads
feel when trials are short, so a campaign session draws through `CurveDrawer(process=True)`: one
helper process (spawned, so no threads are forked) that exits with the session, or on its own when
the campaign process dies (it watches its parent pid).
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import threading
import time
from collections.abc import Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path

__all__ = ["CurveDrawer", "save_trial_curve"]

log = logging.getLogger(__name__)
Points = Sequence[tuple[int, float]]


def save_trial_curve(path: Path, *, title: str, objective: str, curve: Points, train: Points = ()) -> Path:
    """The objective at each eval (and the mean train reward per step, when known) against the step."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(5.0, 3.2), dpi=80)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    if train:
        ax.plot([s for s, _ in train], [v for _, v in train], color="0.6", lw=1, label="train reward")
    if curve:
        ax.plot([s for s, _ in curve], [v for _, v in curve], marker="o", lw=1.5, label=objective)
    ax.locator_params(nbins=5)  # fewer ticks: tick text is most of the drawing time
    ax.set_xlabel("step")
    ax.set_ylabel(objective)
    ax.set_title(title, fontsize=9)
    ax.grid(alpha=0.3)
    if curve or train:
        ax.legend(loc="best", fontsize=8)
    fig.subplots_adjust(left=0.15, right=0.97, top=0.9, bottom=0.15)  # tight_layout costs more than the plot
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    fig.savefig(tmp, format="png")
    tmp.replace(path)
    return path


class CurveDrawer:
    """Draws trial curves in this process, or (`process=True`) in one helper process. Thread-safe."""

    def __init__(self, *, process: bool = False) -> None:
        self._pool: ProcessPoolExecutor | None = None
        if process:
            self._pool = ProcessPoolExecutor(
                max_workers=1, mp_context=multiprocessing.get_context("spawn"),
                initializer=_exit_with_parent, initargs=(os.getpid(),),
            )  # fmt: skip
            self._pool.submit(_warm_up)  # import matplotlib there now, not at the first trial's end

    def draw(self, path: Path, *, title: str, objective: str, curve: Points, train: Points = ()) -> Path:
        pool = self._pool
        if pool is not None:
            try:
                future: Future[Path] = pool.submit(
                    save_trial_curve, path, title=title, objective=objective, curve=list(curve), train=list(train)
                )
                return future.result(timeout=120)
            except (BrokenProcessPool, RuntimeError, TimeoutError) as exc:
                log.warning("the curve helper process failed (%s); drawing in this process from now on", exc)
                self._pool = None
        return save_trial_curve(path, title=title, objective=objective, curve=curve, train=train)

    def close(self) -> None:
        pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)


def _exit_with_parent(parent_pid: int) -> None:
    """In the helper: a thread that ends it once the campaign process is gone (a `kill -9` leaves no
    one to shut the pool down, and the worker would wait on its queue forever)."""

    def watch() -> None:
        while os.getppid() == parent_pid:
            time.sleep(0.5)
        os._exit(0)

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()


def _warm_up() -> None:
    import matplotlib.backends.backend_agg  # noqa: F401
