"""The held-out rounds of a vibe run: the base policy before the first update, the final policy after the last.

Every round is the same: the server's policy is held still (`collect.hold`, so no pooled episode
can move it mid-round), the client process is replaced by one that plays only the eval split
(`client run --episodes 0 --eval-first`, greedy where the task has a temperature), and when it
has finished the training client takes over again and the hold is released. The base round runs
before the training client's first episode, the final one after the target step; with
`every_steps`, more rounds in between draw the curve. Every eval episode id is kept in
`state/launch.json`, so a resumed run still counts them; `outcome()` reads them back from the
server (`outcome.measure_outcome`), each at the policy version that played it.
"""

from __future__ import annotations

import logging
import time
from pathlib import Path
from typing import Any

from agentjet.core import AgentJetError
from agentjet.vibe.plan.spec import SuccessMetric
from agentjet.vibe.run.launch import TrainingRun, restart_client, start_eval_client
from agentjet.vibe.run.outcome import EvalEpisode, Outcome, eval_episode, measure_outcome
from agentjet.vibe.run.swarm_server import read_launch_file, write_launch_file

__all__ = ["HeldOutEval"]

log = logging.getLogger(__name__)

_PHASES = ("before", "between", "after")


class HeldOutEval:
    """The run's held-out rounds and their episodes, by phase."""

    def __init__(
        self, run: TrainingRun, metric: SuccessMetric, *, every_steps: int | None = None, timeout_s: float = 3600.0
    ) -> None:
        self.run, self.metric = run, metric
        self.items, self.every_steps, self.timeout_s = run.options.eval_episodes, every_steps, timeout_s
        saved = read_launch_file(run.workspace)
        self.ids: dict[str, list[str]] = {p: list(saved.get(f"eval_{p}") or []) for p in _PHASES}
        self.launch_step = int(saved.get("eval_launch_step", run.step_at_launch))
        self._next_at = self._after(run.last_step)
        self._held_at_target = False

    def _after(self, step: int) -> int | None:
        every = self.every_steps
        return None if not every else (step // every + 1) * every

    # ---- the rounds ----------------------------------------------------------------------------
    def before(self) -> None:
        """The base policy's round, once per run (a resumed run keeps the one it played): `launch` started its
        client as the first one when `run.eval_first`."""
        if self.items and self.run.eval_first and "eval_before" not in read_launch_file(self.run.workspace):
            self.ids["before"] = self._round("the base policy", resume_training=True, started=True)
            self._save()

    def poll(self) -> None:
        """Each watch poll: hold the policy once the target step is reached (the final round measures it), or
        play a round in between when the step has reached the next multiple of `every_steps`."""
        step = self.run.last_step
        if self.items and step >= self.run.target_step and not self._held_at_target:
            self._held_at_target = self.run.server.hold_policy(True)  # a round ending now must not train again
            return
        if self._next_at is None or step < self._next_at or step >= self.run.target_step:
            return
        self._next_at = self._after(step)
        self.ids["between"] += self._round(f"step {step}", resume_training=True)
        self._save()

    def after(self) -> None:
        """The final policy's round; the training client is not started again."""
        if self.items:
            self.ids["after"] = self._round("the final policy", resume_training=False)
            self._save()

    def _round(self, what: str, *, resume_training: bool, started: bool = False) -> list[str]:
        run = self.run
        held = run.server.hold_policy(True)
        if not held:
            run.progress("WARNING: the policy cannot be held still (no admin token): an update drops later episodes")
        step = self._settled_step()
        training_client = run.client.path
        run.progress(f"held-out round of {what} (step {step}): {self.items} episodes")
        handle = run.client if started else start_eval_client(run)
        deadline = time.monotonic() + self.timeout_s
        while handle.exit_code is None and time.monotonic() < deadline:
            time.sleep(0.5)
        if handle.exit_code is None:
            run.progress(f"the held-out round did not finish in {self.timeout_s:.0f} s: stopping it")
        elif handle.exit_code != 0:
            run.progress(f"the held-out client exited with status {handle.exit_code}:\n{handle.log_tail(10)}")
        ids = [e.episode_id for e in handle.tap.episodes() if e.kind == "eval"]
        if resume_training:
            restart_client(run, Path(training_client))
        if held:
            run.server.hold_policy(False)
        metric = self.metric
        read = self._read(ids)
        point = measure_outcome(read, (), launch_step=step, final_step=None, success_reward=metric.success_reward,
                                rate_name=metric.rate).before  # fmt: skip
        tally = "no usable episode" if point is None else f"{metric.rate} {point.successes}/{point.episodes}"
        mean = "" if point is None else f", mean reward {point.reward_mean:.3f}"
        run.progress(f"held-out round of {what}: {tally}{mean}")
        return ids

    def _settled_step(self, timeout_s: float = 1800.0) -> int:
        """The served step once no update is running (one begun before the hold lands first)."""
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                with self.run.swarm() as swarm:
                    status = swarm.status()
            except AgentJetError as exc:
                log.warning("status failed while settling the policy: %s", exc)
                status = {}
            step = status.get("step")
            if status.get("state") == "rolling" and isinstance(step, int):
                self.run.note_step(step)
                return step
            if time.monotonic() > deadline:
                return self.run.last_step
            time.sleep(0.5)

    # ---- reading back --------------------------------------------------------------------------
    def outcome(self) -> Outcome:
        """before / after / curve from the server's records of every eval episode of the run."""
        read = {p: self._read(ids) for p, ids in self.ids.items()}
        return measure_outcome(
            read["before"],
            read["after"],
            read["between"],
            launch_step=self.launch_step,
            final_step=None,  # the version the final round was played at
            success_reward=self.metric.success_reward,
            rate_name=self.metric.rate,
        )

    def _read(self, ids: list[str]) -> list[EvalEpisode]:
        episodes = []
        with self.run.swarm() as swarm:
            for episode_id in ids:
                try:
                    episodes.append(eval_episode(swarm.get_episode(episode_id)))
                except AgentJetError as exc:  # gone from the server: counted as unusable
                    log.debug("eval episode %s not readable: %s", episode_id, exc)
                    episodes.append(EvalEpisode(episode_id, "missing", None, None))
        return episodes

    def _save(self) -> None:
        fields: dict[str, Any] = {f"eval_{p}": ids for p, ids in self.ids.items()}
        write_launch_file(self.run.workspace, **fields, eval_launch_step=self.launch_step)
