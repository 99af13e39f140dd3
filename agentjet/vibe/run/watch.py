"""Watch a launched run until it reaches its target step: read metrics and episodes, detect trouble, act.

Each poll reads `GET /swarm/status` (the step, the latest metrics line) and, when this run owns
the server, its documented `metrics.jsonl` (docs/metrics.md) so no step is missed. The client's
recent episodes (ids from its tap) are read back with `GET /swarm/episodes/{id}` for aborted
episodes and degenerate completions. Findings go through `trouble.decide`; actions are config
changes (`PUT /swarm/config`), a restarted client, or a regenerated client hot-swapped in through
the `regenerate` hook the graph passes. The server is never restarted. A run whose policies train
apart is as far as its slowest server; the first policy's server is the one whose metrics and
episodes are checked, and config changes go to every server.
"""

from __future__ import annotations

import json
import logging
import subprocess
import time
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from agentjet.core import AgentJetError, TrainConfig
from agentjet.vibe.errors import VibeError
from agentjet.vibe.run.budget import Budget, last_update_s
from agentjet.vibe.run.hot_swap import hot_swap
from agentjet.vibe.run.launch import TrainingRun, record_config, restart_client
from agentjet.vibe.run.trouble import (
    Action,
    ActionKind,
    Finding,
    Tried,
    Trouble,
    client_errors,
    decide,
    degenerate_outputs,
    flat_curve,
    zero_variance,
)
from agentjet.vibe.workspace import Workspace

__all__ = ["Regenerate", "WatchResult", "WatchSettings", "apply_config", "catch_up", "training_record", "watch"]

log = logging.getLogger(__name__)

Regenerate = Callable[[Finding], Path | None]  # writes (and commits) a new client file; None: gave up


@dataclass(frozen=True)
class WatchSettings:
    poll_s: float = 1.0
    zero_variance_steps: int = 3  # K consecutive steps without reward variance
    flat_window: int = 10  # steps compared for a flat curve (first half vs second half)
    flat_min_gain: float = 0.01
    episodes_checked: int = 8  # the client's newest episodes read back per check
    episode_check_every_s: float = 5.0
    error_share: float = 0.5  # aborted share of those that is trouble
    max_regenerations: int = 3
    server_failures: int = 10  # consecutive failed status polls before the server counts as down
    budget_s: float | None = None  # wall clock from the run's start; None: no limit
    keep_lr: bool = False  # a measured recipe: a flat curve is reported, the learning rate kept


@dataclass
class WatchResult:
    """How the watch ended. `status`: completed, budget_exhausted or failed (with `reason`)."""

    status: str
    reason: str
    steps: int
    time_to_first_step_s: float | None
    findings: list[dict[str, Any]] = field(default_factory=list)
    actions: list[dict[str, Any]] = field(default_factory=list)
    hot_swaps: list[dict[str, Any]] = field(default_factory=list)
    metrics: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """Every field but the metrics lines (the record keeps those under its own key)."""
        return {name: value for name, value in asdict(self).items() if name != "metrics"}


class _Metrics:
    """The run's metrics lines by step: the state dir's file when the run owns it, else polled lines."""

    def __init__(self, state_dir: Path | None, since_step: int) -> None:
        self.path = state_dir / "metrics.jsonl" if state_dir is not None else None
        self.since = since_step
        self.lines: dict[int, dict[str, Any]] = {}

    def update(self, latest: object) -> list[dict[str, Any]]:
        """Fold in what is new; returns the new lines, oldest first."""
        found = self._read_file()
        if isinstance(latest, dict):
            found.append(latest)
        new = []
        for line in found:
            step = line.get("step")
            if isinstance(step, int) and step > self.since and step not in self.lines:
                self.lines[step] = line
                new.append(line)
        return sorted(new, key=lambda line: int(line["step"]))

    def _read_file(self) -> list[dict[str, Any]]:
        if self.path is None or not self.path.is_file():
            return []
        lines = []
        for raw in self.path.read_text().splitlines():
            try:
                value = json.loads(raw)
            except ValueError:  # a line being written
                continue
            if isinstance(value, dict):
                lines.append(value)
        return lines

    def history(self, after_step: int = -1) -> list[dict[str, Any]]:
        return [self.lines[s] for s in sorted(self.lines) if s > after_step]


def apply_config(run: TrainingRun, changes: Mapping[str, Any]) -> dict[str, Any]:
    """Set each dotted field of the run's server config (every policy's, when they train apart); returns the
    config the first server accepted."""
    accepted = [server.apply_config(changes) for server in run.all_servers()]
    return accepted[0]


class _Watcher:
    def __init__(self, run: TrainingRun, settings: WatchSettings, regenerate: Regenerate | None) -> None:
        self.run, self.settings, self.regenerate = run, settings, regenerate
        self.metrics = _Metrics(run.server.state_dir, run.step_at_launch)
        self.tried = Tried(
            max_regenerations=settings.max_regenerations,
            can_regenerate=regenerate is not None,
            keep_lr=settings.keep_lr,
        )
        self.result = WatchResult("running", "", run.last_step, None)
        self.silenced: set[Trouble] = set()
        self.window_from = run.step_at_launch  # detectors see only steps after the last action
        self.failures = 0
        self.checked_at = 0.0
        self.closed: dict[str, dict[str, Any]] = {}  # episode id -> what the checks read (closed: final)
        self.idle_runs, self.step_at_restart = 0, run.step_at_launch
        self.lr = 2e-4

    def poll(self, on_step: Callable[[dict[str, Any]], None] | None) -> Finding | None:
        """One look at the server and the client; a finding to act on, or None."""
        try:
            with self.run.swarm() as swarm:
                status = swarm.status()
            steps = [int(status.get("step") or 0), *self._other_steps()]
            self.failures = 0
        except AgentJetError as exc:
            self.failures += 1
            if self.failures >= self.settings.server_failures or self.run.exited_server() is not None:
                return Finding(Trouble.SERVER_DOWN, f"the server does not answer: {exc}", self.run.last_step)
            return None
        self.run.note_step(min(steps))  # policies apart: the run is as far as its slowest server
        for line in self.metrics.update(status.get("latest_metrics")):
            if on_step is not None:
                on_step(line)
        return self._client_finding() or self._metrics_finding() or self._episodes_finding()

    def _other_steps(self) -> list[int]:
        """The step of each further policy's server (policies apart; their trouble is the first's to find)."""
        steps = []
        for server in self.run.all_servers()[1:]:
            with server.swarm() as swarm:
                steps.append(int(swarm.status().get("step") or 0))
        return steps

    def _client_finding(self) -> Finding | None:
        client = self.run.client
        code = client.exit_code
        if code is None or code == 0 or self.run.last_step >= self.run.target_step:
            return None
        return Finding(
            Trouble.CLIENT_EXITED,
            f"the client process (generation {client.generation}) exited with status {code}",
            self.run.last_step,
            client.log_tail(30),
        )

    def _exited_meanwhile(self, wait_s: float = 3.0) -> Finding | None:
        """A crashing client's episodes are aborted just before it exits: give the exit a moment."""
        try:
            self.run.client.process.wait(timeout=wait_s)
        except subprocess.TimeoutExpired:
            return None
        return self._client_finding()

    def _metrics_finding(self) -> Finding | None:
        lines = self.metrics.history(self.window_from)
        settings = self.settings
        for finding in (
            zero_variance(lines, steps=settings.zero_variance_steps),
            flat_curve(lines, window=settings.flat_window, min_gain=settings.flat_min_gain),
        ):
            if finding is not None and finding.trouble not in self.silenced:
                return finding
        return None

    def _episodes_finding(self) -> Finding | None:
        now = time.monotonic()
        if now - self.checked_at < self.settings.episode_check_every_s:
            return None
        self.checked_at = now
        ids = [e.episode_id for e in self.run.client.tap.episodes()][-self.settings.episodes_checked :]
        episodes = [self._episode(episode_id) for episode_id in ids]
        step, least = self.run.last_step, min(4, self.settings.episodes_checked)
        for finding in (
            client_errors(episodes, share=self.settings.error_share, least=least, step=step),
            degenerate_outputs(episodes, least=least, step=step),
        ):
            if finding is not None and finding.trouble not in self.silenced:
                if finding.trouble is Trouble.CLIENT_ERRORS:  # aborted episodes of a client dying: say so
                    return self._exited_meanwhile() or Finding(
                        finding.trouble, finding.detail, finding.step, self.run.client.log_tail(30)
                    )
                return finding
        return None

    def _episode(self, episode_id: str) -> dict[str, Any]:
        """What the checks read of an episode (status, completions); closed ones are read once."""
        if episode_id in self.closed:
            return self.closed[episode_id]
        try:
            with self.run.swarm() as swarm:
                body = swarm.get_episode(episode_id)
        except AgentJetError as exc:
            log.debug("episode %s not readable: %s", episode_id, exc)
            return {"status": None}
        calls = [
            {"completion_text": c.get("completion_text"), "tool_calls": c.get("tool_calls")}
            for c in body.get("calls") or []
            if isinstance(c, dict)
        ]
        slim = {"status": body.get("status"), "calls": calls}
        if slim["status"] != "open":
            self.closed[episode_id] = slim
        return slim

    def act(self, finding: Finding) -> bool:
        """Carry out the decided action; False when the run must stop."""
        action = decide(finding, self.tried, group_size=self.run.group_size, lr=self.lr)
        self.run.progress(f"trouble: {finding.detail} -> {action.kind}: {action.why}")
        self.result.findings.append(finding.to_dict())
        self.result.actions.append(action.to_dict())
        self.window_from = self.run.last_step
        if action.kind is ActionKind.STOP:
            self.result.status, self.result.reason = "failed", f"{finding.detail} ({action.why})"
            return False
        if action.kind is ActionKind.NOTE:
            self.silenced.add(finding.trouble)
        elif action.kind is ActionKind.ADJUST_CONFIG:
            self._adjust(action)
        elif action.kind is ActionKind.RESTART_CLIENT:
            self.tried.restarts_after_crash += 1
            restart_client(self.run)
        elif action.kind is ActionKind.REGENERATE_CLIENT:
            return self._regenerate(finding)
        return True

    def _adjust(self, action: Action) -> None:
        accepted = apply_config(self.run, action.changes)
        if self.run.server.is_ours:  # a restarted server (a resumed run) starts from train.yaml: keep it true
            changed = ", ".join(f"{k}={v}" for k, v in action.changes.items())
            record_config(
                Workspace(self.run.workspace),
                TrainConfig.model_validate(accepted),
                f"watch: {changed} ({action.finding.trouble})",
            )
        if "optim.lr" in action.changes:
            self.tried.lr_raises += 1
            self.lr = float(accepted["optim"]["lr"])
        if "grpo.group_size" in action.changes:  # the client schedules groups of this size: restart it
            self.tried.group_size_raises += 1
            size = int(accepted["grpo"]["group_size"])
            self.run.per_step = self.run.per_step // self.run.group_size * size
            self.run.group_size = size
            restart_client(self.run)

    def _regenerate(self, finding: Finding) -> bool:
        assert self.regenerate is not None  # decide() only regenerates when a hook exists
        self.tried.regenerations += 1
        path = self.regenerate(finding)
        if path is None:
            self.result.status, self.result.reason = "failed", f"{finding.detail} (no new client could be made)"
            return False
        try:
            hot_swap(self.run, path)
        except VibeError as exc:  # the new client died or began nothing: the next poll sees it, bounded
            self.run.progress(f"the regenerated client did not take over: {exc}")
            self.result.actions.append({"kind": "hot_swap_failed", "why": str(exc)[:500], **finding.to_dict()})
            return True
        self.silenced.discard(finding.trouble)
        return True

    def ran_out(self) -> bool:
        """The client finished its episodes short of the target: start it again; False after 3 fruitless runs."""
        run = self.run
        self.idle_runs = self.idle_runs + 1 if run.last_step == self.step_at_restart else 0
        if self.idle_runs >= 3:
            self.result.status = "failed"
            self.result.reason = f"the client finished 3 times without the server training past step {run.last_step}"
            return False
        run.restarts += 1
        self.step_at_restart = run.last_step
        run.progress("the client ran out of episodes before the target step: starting it again")
        restart_client(run)
        return True


def watch(
    run: TrainingRun,
    *,
    settings: WatchSettings | None = None,
    regenerate: Regenerate | None = None,
    on_step: Callable[[dict[str, Any]], None] | None = None,
    on_poll: Callable[[], None] | None = None,
) -> WatchResult:
    """Poll until the run reaches its target step, the budget runs out, or trouble stops it (`on_poll`: after
    each look, e.g. the held-out evaluation's bookkeeping)."""
    settings = settings or WatchSettings()
    watcher = _Watcher(run, settings, regenerate)
    watcher.lr = _current_lr(run)
    budget = Budget(settings.budget_s)
    while True:
        step_before = run.last_step
        finding = watcher.poll(on_step)
        if run.last_step > step_before and (note := budget.pace_note(run)) is not None:
            run.progress(note)
        if on_poll is not None:
            on_poll()
        if run.last_step >= run.target_step:
            watcher.result.status, watcher.result.reason = "completed", f"reached step {run.last_step}"
            break
        if finding is not None and not watcher.act(finding):
            break
        if run.client.exit_code == 0 and run.last_step < run.target_step and not watcher.ran_out():
            break
        if (ran_out := budget.ran_out(run, update_s=last_update_s(watcher.metrics.history()))) is not None:
            watcher.result.status, watcher.result.reason = "budget_exhausted", ran_out
            run.progress(f"{ran_out}: training stops (an update under way still lands)")
            break
        time.sleep(settings.poll_s)
    result = watcher.result
    result.steps, result.time_to_first_step_s = run.last_step, run.time_to_first_step_s
    result.hot_swaps, result.metrics = list(run.hot_swaps), watcher.metrics.history()
    return result


def catch_up(run: TrainingRun, result: WatchResult, on_step: Callable[[dict[str, Any]], None] = lambda _: None) -> None:
    """Fold in the steps that landed after the watch stopped (the update under way when the budget ran out
    lands before the final round), said like the watched ones; the record then ends at the served step."""
    last = max((int(line["step"]) for line in result.metrics), default=run.step_at_launch)
    try:
        with run.swarm() as swarm:
            latest = swarm.status().get("latest_metrics")
    except AgentJetError:  # the file alone, where the run owns the server
        latest = None
    new = _Metrics(run.server.state_dir, last).update(latest)  # the steps after the last one the watch saw
    for line in new:
        on_step(line)
    result.metrics = sorted([*result.metrics, *new], key=lambda line: int(line["step"]))
    result.steps = max([result.steps, run.last_step, *(int(line["step"]) for line in new)])
    if new and result.status == "budget_exhausted":
        result.reason += f"; the update under way then landed as step {new[-1]['step']}"


def _current_lr(run: TrainingRun) -> float:
    try:
        return float(run.server.read_config()["optim"]["lr"])
    except (VibeError, KeyError, TypeError, ValueError):
        return 2e-4


def training_record(run: TrainingRun, result: WatchResult) -> dict[str, Any]:
    """What the report (and the graph state) keeps of a watched run: JSON only, metrics lines included."""
    server = run.server
    how = "reused" if not server.is_ours else ("adopted" if server.adopted else "started")
    return {
        **result.to_dict(),
        "metrics": result.metrics,
        "policy_metrics": {  # policies apart: each server's own lines (the watcher reads the first policy's)
            name: _Metrics(s.state_dir, run.step_at_launch).update(None) for name, s in run.policy_servers.items()
        },
        "sandbox": "none (unsandboxed, by the user's choice)" if run.sandbox == "none" else run.sandbox,
        "server": {"model": server.model, "url": server.url, "how": how, "cold_start_s": server.cold_start_s},
        "policy_servers": {
            name: {"url": s.url, "state_dir": str(s.state_dir), "cold_start_s": s.cold_start_s}
            for name, s in run.policy_servers.items()
        },
        "target_step": run.target_step,
        "client_generations": run.client.generation,
        "client_restarts": run.restarts,
    }
