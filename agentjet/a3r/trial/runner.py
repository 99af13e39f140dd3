"""One trial on one pool member: a fresh adapter, train rounds and evals through `SwarmClient`, a curve and a value.

`run_trial(member, setup, task=..., steps=..., eval_every=..., eval_items=..., seed=..., report=...)`
1. gives the member a fresh adapter and optimiser serving `setup.model` with `setup.config`
   (`PoolMember.reset_for_trial`: a local server not yet trained on gets `PUT /swarm/config`,
   otherwise it is restarted on an empty state dir, because the core has no reset endpoint; a
   remote server must be untouched, see `agentjet.a3r.pool.members`), then proves it: the server
   must report step 0 with nothing pooled (a local one is restarted once if not), and the
   trial's first step must be the server's step 1, else `StaleServer` (`agentjet.a3r.pool.freshness`);
2. plays train rounds with the task family (`agentjet.tasks.play.rounds.play_train_round`: GRPO groups
   seeded by `seed` and the step) and waits for each update; every `eval_every` steps and at
   the last step it measures the objective (eval episodes on `eval_items` held-out items drawn
   with `eval_seed`, greedy where the family has a temperature; or the train reward) and calls
   `report(step, value)`: True prunes the trial (it stops, `pruned=True`);
3. writes `metrics.jsonl` into `out_dir` only when it finishes (pruned or not).
A member that dies mid-trial (its process exits, or it stops answering and the health probe
agrees) raises `ServerLost` and nothing is written: the trial is void, never half-recorded.
Any other failure is a `CampaignError` (or the core's typed error) saying what broke.
`task: {family: synthetic}` runs `agentjet.a3r.trial.synthetic` instead: no model, same reporting.
"""

from __future__ import annotations

import inspect
import json
import math
import os
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import httpx

from agentjet.a3r.errors import CampaignError, PoolError, ServerLost
from agentjet.a3r.plan.campaign_plan import SYNTHETIC, Metric, TaskSource, TrialSetup
from agentjet.a3r.pool.freshness import check_first_step, ensure_fresh
from agentjet.a3r.pool.members import PoolMember
from agentjet.a3r.trial.synthetic import run_synthetic, synthetic_options
from agentjet.core import AgentJetError, SwarmClient, TrainConfig
from agentjet.tasks.base import POLICY, TaskFamily, TaskItem
from agentjet.tasks.play.rounds import RoundSettings, evaluate, play_train_round, wait_for_step
from agentjet.tasks.registry import load_family

__all__ = ["Report", "TrialResult", "eval_steps", "run_trial"]

Report = Callable[[int, float], bool]  # (step, value) -> prune now?
_C3_ROUNDS = 8  # informative_tasks: rounds played for one step before giving up (all rewards equal)
_C3_STALL_S = 3.0  # ... and how long a round may leave the engine rolling at the same step
_SERVER_ERRORS = (AgentJetError, httpx.HTTPError, OSError, RuntimeError)


def _never_prune(step: int, value: float) -> bool:
    return False


@dataclass(frozen=True)
class TrialResult:
    """What a finished (or pruned) trial measured. `value` is the last curve point."""

    value: float
    curve: tuple[tuple[int, float], ...]  # (step, objective value) at each eval
    train_rewards: tuple[float, ...]  # mean train reward of each step
    steps_done: int
    minutes: float
    metrics_path: Path | None  # <out_dir>/metrics.jsonl, one line per step
    pruned: bool = False
    server: str = ""  # the member it ran on
    setup_s: float = 0.0  # time to give the member a fresh adapter (a restart when one was needed)


def eval_steps(steps: int, eval_every: int) -> set[int]:
    """Steps after which the objective is measured and reported: every `eval_every`, and the last."""
    return {s for s in range(1, steps + 1) if s % eval_every == 0} | {steps}


def run_trial(
    server: PoolMember,
    setup: TrialSetup,
    *,
    task: TaskSource,
    steps: int,
    eval_every: int,
    eval_items: int,
    seed: int,
    report: Report = _never_prune,
    metric: Metric = "eval_reward",
    eval_seed: int | None = None,
    out_dir: Path | None = None,
) -> TrialResult:
    """Run one trial on `server` (held by the caller); see the module docstring. Raises ServerLost."""
    started = time.perf_counter()
    if not server.healthy:
        raise ServerLost(server.name, server.down_reason or f"it is {server.state.value}")
    points = eval_steps(steps, eval_every)
    if task.family == SYNTHETIC:
        options = synthetic_options(setup.task_params)
        curve, done, pruned = run_synthetic(
            server, setup.config, steps=steps, eval_points=points, seed=seed, options=options, report=report
        )
        lines: list[dict[str, Any]] = [{"step": s, "value": v} for s, v in curve]
        return _result(curve, [], done, started, lines, out_dir, pruned=pruned, server=server.name)
    family, eval_family = _families(task, setup.task_params)
    eval_seed = seed if eval_seed is None else eval_seed
    held_out = [] if metric == "train_reward" else eval_family.items("eval", count=eval_items, seed=eval_seed)
    _reset(server, setup)
    setup_s = time.perf_counter() - started
    run = _ModelTrial(family, eval_family, held_out, setup.config, metric, seed)
    still_up = f"the trial failed on {server.name}, which is still up"
    with (
        _server_failures(server, passing=AgentJetError, what=still_up),
        server.client() as client,
        ThreadPoolExecutor(run.concurrency) as pool,
    ):
        run.play(pool, client, server, steps=steps, points=points, report=report)
    return _result(
        run.curve, run.train_rewards, run.done, started, run.lines, out_dir,
        pruned=run.pruned, server=server.name, setup_s=setup_s,
    )  # fmt: skip


class _ModelTrial:
    """The train/eval loop of one model trial; fills curve, train_rewards and lines as it goes."""

    def __init__(
        self,
        family: TaskFamily,
        eval_family: TaskFamily,
        held_out: Sequence[TaskItem],
        config: TrainConfig,
        metric: Metric,
        seed: int,
    ) -> None:
        self.family, self.eval_family, self.held_out = family, eval_family, held_out
        self.strategy, self.metric = config.collect.strategy, metric
        group = config.grpo.group_size
        tasks = math.ceil(config.collect.episodes / group) if self.strategy == "episodes" else config.collect.tasks
        self.settings = RoundSettings(tasks_per_step=tasks, group_size=group, seed=seed)
        self.concurrency = min(64, max(tasks * group, len(held_out), 1))
        self.curve: list[tuple[int, float]] = []
        self.train_rewards: list[float] = []
        self.lines: list[dict[str, Any]] = []
        self.done = 0
        self.pruned = False
        self._since_eval: list[float] = []
        self._last_eval = 0
        self._started = time.perf_counter()

    def play(
        self, pool: ThreadPoolExecutor, client: SwarmClient, server: PoolMember, *, steps: int, points: set[int],
        report: Report,
    ) -> None:  # fmt: skip
        while self.done < steps:
            _check_alive(server)
            rewards, replayed = self._advance(pool, client)
            status = client.status()
            if self.done == 0:
                check_first_step(server.name, status)
            self.done = min(steps, max(self.done + 1, int(status.get("step", 0))))
            mean = sum(rewards) / len(rewards) if rewards else 0.0
            self.train_rewards.append(mean)
            self._since_eval += rewards
            line: dict[str, Any] = {
                "step": self.done, "train_reward": mean, "train_episodes": len(rewards), "replayed": replayed,
                "elapsed_s": round(time.perf_counter() - self._started, 3), "server": status.get("latest_metrics"),
            }  # fmt: skip
            self.lines.append(line)
            if any(self._last_eval < p <= self.done for p in points):  # a server step may skip a point
                self._last_eval = self.done
                value = self._measure(pool, client, line)
                self.curve.append((self.done, value))
                if report(self.done, value):
                    self.pruned = True
                    return

    def _advance(self, pool: ThreadPoolExecutor, client: SwarmClient) -> tuple[list[float], int]:
        """Play until the server has taken one more step (how depends on the collection strategy)."""
        target = self.done + 1
        if self.strategy != "informative_tasks":
            rewards, replayed = play_train_round(pool, client, self.family, self.settings, self.done)
            if self.strategy in ("any_client", "all_clients"):
                client.request_update()
            wait_for_step(client, target)
            return rewards, replayed
        played: list[float] = []
        replayed = 0
        for attempt in range(_C3_ROUNDS):  # a round whose groups all tie trains nothing: play another
            settings = replace(self.settings, seed=self.settings.seed + 7919 * attempt)
            rewards, extra = play_train_round(pool, client, self.family, settings, self.done)
            played, replayed = played + rewards, replayed + extra
            if _stepped_or_stalled(client, target):
                wait_for_step(client, target)
                return played, replayed
        raise CampaignError(
            f"informative_tasks: no group with differing rewards in {_C3_ROUNDS} rounds at step {target} "
            "(every reward equal): the policy gives the task no signal; use strategy tasks, or an easier task"
        )

    def _measure(self, pool: ThreadPoolExecutor, client: SwarmClient, line: dict[str, Any]) -> float:
        if self.metric == "train_reward":
            value = sum(self._since_eval) / len(self._since_eval) if self._since_eval else 0.0
            self._since_eval = []
            line["value"] = value
            return value
        result = evaluate(pool, client, self.eval_family, self.held_out, self.done)
        accuracy = result.solved / result.episodes
        line.update(eval_reward=result.reward_mean, eval_accuracy=accuracy, eval_episodes=result.episodes)
        value = accuracy if self.metric == "eval_accuracy" else result.reward_mean
        line["value"] = value
        return value


def _stepped_or_stalled(client: SwarmClient, target: int) -> bool:
    """True once the server reached `target` or is updating towards it; False if it rolls on idle."""
    deadline = time.monotonic() + _C3_STALL_S
    while time.monotonic() < deadline:
        status = client.status()
        if status["step"] >= target or status["state"] in ("draining", "updating"):
            return True
        time.sleep(0.1)
    return False


def _families(task: TaskSource, params: Mapping[str, Any]) -> tuple[TaskFamily, TaskFamily]:
    """The train family and the eval one (greedy, temperature 0, where the family has a temperature)."""
    spec = task.family or str(task.workspace / "client.py" if task.workspace else task.client)
    try:
        family = load_family(spec, params)
        takes_temperature = "temperature" in inspect.signature(type(family)).parameters
        eval_family = load_family(spec, {**params, "temperature": 0.0}) if takes_temperature else family
    except AgentJetError as exc:
        raise CampaignError(f"cannot build the trial's task: {exc}") from exc
    if tuple(family.servers) != (POLICY,):
        raise CampaignError(f"a trial trains one policy server; task {spec!r} needs {list(family.servers)}")
    return family, eval_family


def _reset(server: PoolMember, setup: TrialSetup) -> None:
    """Fresh adapter and optimiser, checked on the server; one that cannot give them (dies, will not
    restart) is lost, one that is stale after all raises StaleServer."""
    with _server_failures(server, passing=CampaignError, what=f"server {server.name} refused the trial's config"):
        try:
            server.reset_for_trial(setup.model, setup.config)
            ensure_fresh(server, setup.model, setup.config)
        except PoolError as exc:  # ServerLost is not one: it passes
            raise ServerLost(server.name, f"it could not be restarted for the trial: {exc}") from exc


@contextmanager
def _server_failures(server: PoolMember, *, passing: type[AgentJetError], what: str) -> Iterator[None]:
    """What a failure seen while using `server` means: ServerLost when the member is dead or failing its health
    probe; else an error of type `passing` as it is, any other as a CampaignError (`what: <the error>`)."""
    try:
        yield
    except ServerLost:
        raise
    except _SERVER_ERRORS as exc:
        lost = _lost(server, exc)
        if lost is not None:
            raise lost from exc
        if isinstance(exc, passing):
            raise
        raise CampaignError(f"{what}: {exc}") from exc


def _check_alive(server: PoolMember) -> None:
    if server.is_dead() or not server.healthy:
        raise ServerLost(server.name, server.down_reason or "its process exited")


def _lost(server: PoolMember, exc: BaseException) -> ServerLost | None:
    """A ServerLost if the member is dead or failing its health probe after `exc`; None if it is fine."""
    reason = server.probe()
    if reason is None and not server.is_dead():
        return None
    why = reason or "its process exited"
    server.mark_down(why)
    return ServerLost(server.name, f"{why} (the trial saw {type(exc).__name__}: {exc})")


def _result(
    curve: Sequence[tuple[int, float]],
    train_rewards: Sequence[float],
    done: int,
    started: float,
    lines: Sequence[Mapping[str, Any]],
    out_dir: Path | None,
    *,
    pruned: bool,
    server: str,
    setup_s: float = 0.0,
) -> TrialResult:
    if not curve:
        raise CampaignError("the trial ended without a single measurement")  # eval_steps always has the last step
    return TrialResult(
        value=curve[-1][1],
        curve=tuple(curve),
        train_rewards=tuple(train_rewards),
        steps_done=done,
        minutes=(time.perf_counter() - started) / 60,
        metrics_path=_write_metrics(out_dir, lines) if out_dir is not None else None,
        pruned=pruned,
        server=server,
        setup_s=setup_s,
    )


def _write_metrics(out_dir: Path, lines: Sequence[Mapping[str, Any]]) -> Path:
    """`metrics.jsonl`, written whole then renamed into place: a reader never sees half of it."""
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / "metrics.jsonl"
    tmp = out_dir / f".metrics.jsonl.{os.getpid()}.tmp"
    tmp.write_text("".join(json.dumps(line, sort_keys=False) + "\n" for line in lines))
    tmp.replace(path)
    return path
