"""Run episodes of a task family against swarm servers: the engine of `agentjet client run`.

Worker threads play the episodes through the shared `EpisodePlayer` (`episode.py`: one episode per
server the family names, same task_id, the family's name as `agent`; each ended with its reward from
the `Outcome`, or all aborted when `run` raises). Items are scheduled in GRPO groups (`groups.py`):
`group_size` consecutive episodes share an item's task_id, each with its own seed. Every
`eval_every` train episodes it runs the eval split (kind "eval"); with `update_every` it agrees to
an update (`request_update`, for the `all_clients` strategy) and waits for it, so rounds stay
on-policy. Ctrl-C (or `stop()`) aborts the open episodes: every episode begun ends up ended or
aborted. Only the public `SwarmClient` API is used.
"""

from __future__ import annotations

import logging
import math
import queue
import signal
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, fields, replace
from typing import Any

from rich.console import Console

from agentjet.core import AgentJetError, SwarmClient
from agentjet.tasks.base import TaskFamily, TaskItem
from agentjet.tasks.play.episode import EpisodePlayer, EpisodeResult
from agentjet.tasks.play.groups import group_members
from agentjet.tasks.play.run_report import RunStats, RunView
from agentjet.tasks.play.swarm_side import round_steps, wait_for_update

__all__ = ["DEFAULT_GROUP_SIZE", "RunSettings", "TaskRunner"]

log = logging.getLogger(__name__)

DEFAULT_GROUP_SIZE = 8
_POLL_S = 0.2  # how often the main thread looks at results (and can take Ctrl-C)
_STEP_POLL_S = 2.0  # how often the progress bar reads the servers' steps
_BEGIN_WAIT_S = 60.0  # on interrupt: how long to wait for begins in flight


@dataclass(frozen=True)
class RunSettings:
    episodes: int = 16  # train episodes
    concurrency: int = 4  # episodes in flight at once
    eval_every: int | None = None  # train episodes between eval rounds
    eval_episodes: int = 8  # episodes (items) per eval round
    eval_first: bool = False  # an eval round before training, its episodes begun ahead of the first train block
    base_model: bool = False  # eval episodes sample the base weights beside the policy (the base's score, any time)
    group_size: int | None = None  # episodes per task_id; None: the server's (status pool.group_size) or 8
    update_every: int | None = None  # train episodes between update requests (then wait for the update)
    update_timeout_s: float = 1800.0
    seed: int = 0

    @classmethod
    def from_options(cls, options: object) -> RunSettings:
        """From a parsed command line (argparse namespace): the fields it has, the defaults for the rest."""
        given = {f.name: getattr(options, f.name) for f in fields(cls) if hasattr(options, f.name)}
        return cls(**given)

    def __post_init__(self) -> None:
        for name in ("episodes", "concurrency", "eval_every", "eval_episodes", "group_size", "update_every"):
            value = getattr(self, name)
            if value is not None and value < (0 if name == "episodes" else 1):
                raise ValueError(f"{name} must be >= {0 if name == 'episodes' else 1}, got {value}")


class _BeginGate:
    """Holds the base round's train episodes until every eval episode has been begun (or failed to begin).

    Worker threads begin their episodes independently, so queueing the eval jobs first is not
    enough: a train begin could reach the server before the last eval begin. Eval jobs call
    `begun()` once their begin is settled; train jobs `wait()` before theirs. No deadlock: the
    eval jobs are queued ahead, so when a worker waits here every eval job is with another worker.
    """

    def __init__(self, evals: int) -> None:
        self._left, self._lock, self._open = evals, threading.Lock(), threading.Event()
        if evals <= 0:
            self._open.set()

    def begun(self) -> None:
        with self._lock:
            self._left -= 1
            if self._left <= 0:
                self._open.set()

    def wait(self, stopping: Callable[[], bool]) -> None:
        while not self._open.wait(_POLL_S):
            if stopping():
                return


@dataclass(frozen=True)
class _Job:
    item: TaskItem
    kind: str
    gate: _BeginGate | None = None  # eval: signal it once begun; train: wait on it before beginning


class TaskRunner:
    """Runs one family against its servers (`clients`: server name -> SwarmClient). One `run()` per runner."""

    def __init__(
        self,
        family: TaskFamily,
        clients: Mapping[str, SwarmClient],
        settings: RunSettings,
        *,
        show_progress: bool = False,
        console: Console | None = None,
    ) -> None:
        missing = [name for name in family.servers if name not in clients]
        if missing:
            raise ValueError(f"task {family.name!r} needs servers {list(family.servers)}; missing {missing}")
        self.family, self.settings = family, settings
        self.servers: tuple[str, ...] = tuple(family.servers)
        self.clients = {name: clients[name] for name in self.servers}
        self._player = EpisodePlayer(family, self.clients, base_model=settings.base_model)
        self._episodes = self._player.episodes
        self._view = RunView(show_progress, console)
        self._jobs: queue.Queue[_Job | None] = queue.Queue()
        self._results: queue.Queue[EpisodeResult] = queue.Queue()
        self._steps: dict[str, int | None] = {}
        self._steps_polled_at = 0.0

    # ---- the worker side ---------------------------------------------------------------------
    def _worker(self) -> None:
        while (job := self._jobs.get()) is not None:
            try:
                result = self._play(job)
            except Exception as exc:  # a bug here must not hang the main thread: report it as an error
                log.exception("runner worker failed task=%s", job.item.task_id)
                result = EpisodeResult(job.kind, error=f"{type(exc).__name__}: {exc}")
            self._results.put(result)

    def _play(self, job: _Job) -> EpisodeResult:
        gate = job.gate
        if gate is not None and job.kind == "train":
            gate.wait(lambda: self._episodes.stopping)
        result = self._player.play(job.item, job.kind, on_begun=gate.begun if gate and job.kind == "eval" else None)
        if result.error is not None:
            log.warning("episode failed task=%s error=%s", job.item.task_id, result.error)
        return result

    # ---- the main thread ---------------------------------------------------------------------
    def run(self) -> dict[str, Any]:
        """Run every scheduled episode; return the summary (also on Ctrl-C, with `interrupted`)."""
        started = time.perf_counter()
        statuses = {name: client.status() for name, client in self.clients.items()}  # unreachable, bad token: fail now
        group_size = self.settings.group_size or _group_size_of(statuses[self.servers[0]])
        train = self._train_jobs(group_size)
        stats, evals = RunStats(self.servers), list[dict[str, Any]]()
        steps_start = {name: _step_of(status) for name, status in statuses.items()}
        workers = [threading.Thread(target=self._worker, daemon=True) for _ in range(self.settings.concurrency)]
        for worker in workers:
            worker.start()
        if self.settings.update_every:  # count as active now, so all_clients waits for this client's first round
            for client in self.clients.values():
                client.heartbeat()
        completed = False
        try:
            with self._view:
                self._run_rounds(train, stats, evals)
            completed = True
        except KeyboardInterrupt:
            log.warning("interrupted: aborting the open episodes")
        finally:  # on Ctrl-C or any error: no episode is left open
            self._shutdown(workers, stop=not completed or self._episodes.stopping)
        return self._summary(stats, evals, group_size, steps_start, started)

    def _run_rounds(self, train: list[_Job], stats: RunStats, evals: list[dict[str, Any]]) -> None:
        """Train episodes in blocks; after a block, the update round and the eval round it ends."""
        bar = self._view.add_bar("train", len(train))
        done = 0
        update_every, eval_every = self.settings.update_every, self.settings.eval_every
        errors_before = 0
        since = round_steps(self.clients) if update_every else {}  # the steps this round's update must pass
        for boundary in self._boundaries():
            if self.settings.eval_first and not done and not evals:  # the base policy's round, with the first block
                evals.append({"after_episodes": 0, **self._eval_round(0, alongside=(train[:boundary], stats, bar))})
            else:
                self._run_block(train[done:boundary], stats, bar, done)
            done = boundary
            if self._episodes.stopping:
                return
            if update_every and (boundary % update_every == 0 or boundary == len(train)):
                if stats.errors > errors_before:  # an aborted episode leaves its group short: play on instead
                    log.warning("%d episode(s) of the round failed: not waiting", stats.errors - errors_before)
                else:
                    wait_for_update(self.clients, self.settings.update_timeout_s, self._poll_steps, since)
                errors_before, since = stats.errors, round_steps(self.clients)
            if eval_every and boundary and boundary % eval_every == 0:
                evals.append({"after_episodes": boundary, **self._eval_round(boundary)})

    def stop(self) -> None:
        """From another thread: begin no more episodes and abort the open ones; `run()` returns soon."""
        self._episodes.abort_all()

    def _train_jobs(self, group_size: int) -> list[_Job]:
        count = self.settings.episodes
        items = self.family.items("train", count=math.ceil(count / group_size), seed=self.settings.seed)
        if count % group_size:
            log.warning("episodes=%d is not a multiple of group_size=%d: the last group is partial", count, group_size)
        return [_Job(member, "train") for member in group_members(items, group_size)[:count]]

    def _boundaries(self) -> list[int]:
        """Where the train run pauses: every eval round, every update request, and the end."""
        total = self.settings.episodes
        marks = {total}
        for every in (self.settings.eval_every, self.settings.update_every):
            if every:
                marks.update(range(every, total + 1, every))
        return sorted(marks)

    def _eval_round(self, after: int, alongside: tuple[list[_Job], RunStats, Any] | None = None) -> dict[str, Any]:
        """One round of the eval split; `alongside` (train jobs, their stats and bar) are queued right behind it,
        so the workers begin every eval episode first and fill the batch with train episodes meanwhile."""
        items = self.family.items("eval", count=self.settings.eval_episodes, seed=self.settings.seed)
        stats = RunStats(self.servers)
        bar = self._view.add_bar(f"eval @{after}", len(items))
        jobs = [_Job(item, "eval") for item in items]
        if alongside is None:
            self._run_block(jobs, stats, bar, 0)
        else:
            train_jobs, train_stats, train_bar = alongside
            gate = _BeginGate(len(jobs))
            gated = [replace(job, gate=gate) for job in jobs + train_jobs]
            self._run_block(gated, stats, bar, 0, train=(train_stats, train_bar))
        log.info("eval round reward_mean=%s episodes=%d errors=%d", stats.reward_mean, stats.ended, stats.errors)
        means = stats.server_means()
        return {"episodes": stats.ended, "errors": stats.errors, "reward_mean": stats.reward_mean, "rewards": means}

    def _run_block(
        self, jobs: list[_Job], stats: RunStats, bar: Any, done: int, train: tuple[RunStats, Any] | None = None
    ) -> None:
        """Queue `jobs` and wait for their results; with `train` (stats, bar), train results go there."""
        for job in jobs:
            self._jobs.put(job)
        train_done = 0
        for left in range(len(jobs) - 1, -1, -1):
            while True:
                try:
                    result = self._results.get(timeout=_POLL_S)
                    break
                except queue.Empty:
                    if self._episodes.stopping:  # stop(): do not wait for agents still running
                        return
                    self._poll_steps()
            self._poll_steps(force=left == 0)  # a finished bar shows the step it ended at
            if train is not None and result.kind == "train":
                train_done += 1
                train[0].add(result)
                self._view.show(train[1], train[0], train_done)
                continue
            stats.add(result)
            done += 1
            self._view.show(bar, stats, done)

    def _poll_steps(self, force: bool = False) -> dict[str, int | None]:
        now = time.monotonic()
        if force or now - self._steps_polled_at >= _STEP_POLL_S:
            self._steps_polled_at = now
            self._steps = {name: self._polled_step(client) for name, client in self.clients.items()}
            self._view.set_steps(self._steps)
        return dict(self._steps)

    @staticmethod
    def _polled_step(client: SwarmClient) -> int | None:
        try:
            return _step_of(client.status())
        except AgentJetError as exc:  # the bar shows "?"; the episodes report their own errors
            log.debug("status failed: %s", exc)
            return None

    def _shutdown(self, workers: list[threading.Thread], *, stop: bool) -> None:
        """Stop the workers; when stopping early, abort every open episode (Ctrl-C is held off meanwhile)."""
        with _sigint_held():
            if stop:
                self._episodes.abort_all(wait_begins_s=_BEGIN_WAIT_S)
            for _ in workers:
                self._jobs.put(None)

    def _summary(
        self,
        stats: RunStats,
        evals: list[dict[str, Any]],
        group_size: int,
        steps_start: Mapping[str, int | None],
        started: float,
    ) -> dict[str, Any]:
        steps_end = self._poll_steps(force=True)
        return {
            "task": self.family.name,
            "servers": {name: client.url for name, client in self.clients.items()},
            "episodes_requested": self.settings.episodes,
            "episodes": stats.ended,
            "errors": stats.errors,
            "error_messages": stats.error_messages,
            "reward_mean": stats.reward_mean,
            "rewards": stats.server_means(),
            "evals": evals,
            "eval_reward_mean": evals[-1]["reward_mean"] if evals else None,
            "steps": {name: {"start": steps_start.get(name), "end": steps_end.get(name)} for name in self.servers},
            "group_size": group_size,
            "concurrency": self.settings.concurrency,
            "seed": self.settings.seed,
            "interrupted": self._episodes.stopping,
            "aborted_on_interrupt": self._episodes.aborted_on_stop,
            "seconds": round(time.perf_counter() - started, 2),
        }


def _step_of(status: Mapping[str, Any]) -> int | None:
    step = status.get("step")
    return step if isinstance(step, int) else None


def _group_size_of(status: Mapping[str, Any]) -> int:
    """The server's GRPO group size when its status reports one (`pool.group_size`), else the default."""
    pool = status.get("pool")
    size = pool.get("group_size") if isinstance(pool, Mapping) else None
    return size if isinstance(size, int) and size >= 1 else DEFAULT_GROUP_SIZE


@contextmanager
def _sigint_held() -> Iterator[None]:
    """Ignore Ctrl-C while open episodes are being aborted (main thread only; elsewhere a no-op)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
