"""The held-out rounds of a vibe run: the base policy's, the final policy's after the last update, and any between.

A client process plays only the eval split (`client run --episodes 0 --eval-first`, greedy where the
task has a temperature). The base's round is played on the base weights (`--base-model`: the server
samples them beside the policy, row by row in the same batches), by a client beside the training one,
started once the first step is in: the first update waits for no eval, and the round is the base's
whatever the step (~half of a werewolves first round's calls were the base's games). Every other round
holds the server's policy still (`collect.hold`, so no pooled episode can move it mid-round) and
replaces the training client, which takes over again after; so does the base round of a run launched
from a trained policy (a reused server past step 0), whose "before" is that policy, played beside the
first training round. The final round runs after the target step; with `every_steps`, more rounds in
between draw the curve. Every eval episode id is kept in
`state/launch.json`, so a resumed run still counts them; `outcome()` reads them back from the
server (`outcome.measure_outcome`), each at the policy version that played it. A run whose policies
train apart holds every server still for a round and measures each policy on its own server's
episodes of the same games (`outcomes()`).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agentjet.core import AgentJetError
from agentjet.vibe.errors import VibeError
from agentjet.vibe.plan.spec import SHARED_POLICY, SuccessMetric
from agentjet.vibe.run.client_process import ClientHandle, stop_client
from agentjet.vibe.run.launch import TrainingRun, base_apart, restart_client, start_base_client, start_eval_client
from agentjet.vibe.run.outcome import EvalEpisode, Outcome, eval_episode, measure_outcome
from agentjet.vibe.run.swarm_server import ServerHandle, read_launch_file, write_launch_file

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
        apart = saved.get("policy_evals")
        apart = apart if isinstance(apart, dict) else {}
        self.policy_ids: dict[str, dict[str, list[str]]] = {  # policies apart: name -> phase -> ids
            name: {p: list((apart.get(name) or {}).get(p) or []) for p in _PHASES} for name in run.policy_servers
        }
        self.launch_step = int(saved.get("eval_launch_step", run.step_at_launch))
        if "eval_launch_step" not in saved:  # a resume must know the run began at the base (`base_apart`)
            write_launch_file(run.workspace, eval_launch_step=self.launch_step)
        self._base_apart = bool(self.items) and "eval_before" not in saved and base_apart(saved, self.launch_step)
        self._next_at = self._after(run.last_step)
        self._held_at_target = False

    def _after(self, step: int) -> int | None:
        every = self.every_steps
        return None if not every else (step // every + 1) * every

    # ---- the rounds ----------------------------------------------------------------------------
    def before(self) -> None:
        """The launch policy's round of a run launched from a trained policy, once per run (a resumed run keeps
        the one it played): `launch` started its client beside the training client (`run.eval_client`); the
        hold is released once it is counted. A run that began at the base plays the base's round later, on
        the base weights (`poll`)."""
        eval_client = self.run.eval_client
        if self.items and eval_client is not None and "eval_before" not in read_launch_file(self.run.workspace):
            self._keep("before", self._round("the base policy", resume_training=False, beside=eval_client))

    def poll(self) -> None:
        """Each watch poll: start or count the base's round on the base weights; hold the policy once the target
        step is reached (the final round measures it), or play a round in between when the step has reached
        the next multiple of `every_steps`."""
        self._base_round()
        step = self.run.last_step
        if self.items and step >= self.run.target_step and not self._held_at_target:
            self._held_at_target = self.run.hold_policy(True)  # a round ending now must not train again
            return
        if self._next_at is None or step < self._next_at or step >= self.run.target_step:
            return
        held, step = self._hold_settled()  # an update under way lands first: the round plays the step it reaches
        if step >= self.run.target_step:
            self._held_at_target = held  # the final round measures that step
            return
        self._keep("between", self._play("the policy in training", held, step, resume_training=True), add=True)
        self._next_at = self._after(step)

    def after(self, on_settled: Callable[[], None] = lambda: None) -> None:
        """The final policy's round, beside the base's if that is still to play or playing (their calls share
        the batches); the training client is not started again.

        First an update under way (the watch stopped on a spent budget) lands, the policy held so that no other
        begins; then `on_settled` runs, before the final round: vibe folds that step into its record there
        (`watch.catch_up`), so it is said when it lands, not after the round. The base's round, on the base
        weights, need not wait for it."""
        if self.items:
            self._base_round(start=True)
            self.run.hold_policy(True)  # released by the final round; `_round` says so if it cannot be held
        self._settled_step()
        on_settled()
        if self.items:
            final = self._round("the final policy", resume_training=False)
            self._base_round(wait=True)
            self._keep("after", final)

    def _base_round(self, *, start: bool = False, wait: bool = False) -> None:
        """The base's round beside training: started once a step past the launch's is in (or now, with `start`
        or `wait`), counted once its client has exited (`wait`: block until then)."""
        run = self.run
        if not self._base_apart:
            return
        if run.eval_client is None:
            if run.last_step <= self.launch_step and not (start or wait):
                return
            run.progress(
                f"held-out round of the base policy, on the base weights beside training: {self.items} episodes"
            )
            start_base_client(run)
        handle = run.eval_client
        assert handle is not None
        deadline = time.monotonic() + self.timeout_s
        while wait and handle.exit_code is None and time.monotonic() < deadline:
            time.sleep(0.5)
        if handle.exit_code is None and not wait:
            return
        self._base_apart = False
        self._keep("before", self._count("the base policy", handle, self.launch_step, of_a_step=False))

    def _keep(self, phase: str, ids: dict[str | None, list[str]], *, add: bool = False) -> None:
        """Note a round's eval episode ids (by server) under `phase`, and save them."""
        first = next(iter(ids.values()))
        self.ids[phase] = self.ids[phase] + first if add else first
        for name, found in ids.items():
            if name is not None:
                known = self.policy_ids[name]
                known[phase] = known[phase] + found if add else found
        self._save()

    def _round(
        self, what: str, *, resume_training: bool, beside: ClientHandle | None = None
    ) -> dict[str | None, list[str]]:
        """Play one held-out round of the held policy (in the eval client `beside` the training one, or in place
        of it); the eval episode ids it began on each server (by the task's server name)."""
        held, step = self._hold_settled()
        return self._play(what, held, step, resume_training=resume_training, beside=beside)

    def _hold_settled(self) -> tuple[bool, int]:
        """Hold the policy still, then wait for an update under way to land: whether it is held, and the step."""
        held = self.run.hold_policy(True)
        if not held:
            self.run.progress(
                "WARNING: the policy cannot be held still (no admin token): an update drops later episodes"
            )
        return held, self._settled_step()

    def _play(
        self, what: str, held: bool, step: int, *, resume_training: bool, beside: ClientHandle | None = None
    ) -> dict[str | None, list[str]]:
        """Play the round of the held policy at `step`, and release the hold after it."""
        run = self.run
        training_client = run.client.path
        run.progress(f"held-out round of {what} (step {step}): {self.items} episodes")
        handle = beside if beside is not None else start_eval_client(run)
        deadline = time.monotonic() + self.timeout_s
        while handle.exit_code is None and time.monotonic() < deadline:
            time.sleep(0.5)
        ids = self._count(what, handle, step, then_train=Path(training_client) if resume_training else None)
        if held:
            run.hold_policy(False)
        return ids

    def _count(
        self, what: str, handle: ClientHandle, step: int, *, then_train: Path | None = None, of_a_step: bool = True
    ) -> dict[str | None, list[str]]:
        """A finished (or overdue) round's eval episode ids by server, its tally said (with its step, `of_a_step`,
        as rounds between come several). The client beside training is stopped and forgotten; one that replaced
        the training client gives way to it (`then_train`)."""
        run = self.run
        if handle.exit_code is None:
            run.progress(f"the held-out round did not finish in {self.timeout_s:.0f} s: stopping it")
        elif handle.exit_code != 0:
            run.progress(f"the held-out client exited with status {handle.exit_code}:\n{handle.log_tail(10)}")
        ids = {name: [e.episode_id for e in tap.episodes() if e.kind == "eval"] for name, tap in handle.taps.items()}
        if handle is run.eval_client:
            stop_client(handle)
            run.eval_client = None
            write_launch_file(run.workspace, eval_client_pid=None)
        elif then_train is not None:
            restart_client(run, then_train)
        self._tally(f"{what} (step {step})" if of_a_step else what, ids, step)
        return ids

    def _tally(self, what: str, ids: dict[str | None, list[str]], step: int) -> None:
        metric = self.metric
        tallies = []
        for name, found in ids.items():
            point = measure_outcome(self._read(found, name), (), launch_step=step, final_step=None,
                                    success_reward=metric.success_reward, rate_name=metric.rate).before  # fmt: skip
            tally = "no usable episode" if point is None else f"{metric.rate} {point.successes}/{point.episodes}"
            mean = "" if point is None else f", mean reward {point.reward_mean:.3f}"
            tallies.append(f"{'' if name is None else f'{name}: '}{tally}{mean}")
        self.run.progress(f"held-out round of {what}: {'; '.join(tallies)}")

    def _settled_step(self, timeout_s: float = 1800.0) -> int:
        """The served step once no update is running (one begun before the hold lands first). A server of the
        run's that has exited will not settle: that is a VibeError at once, not a wait of `timeout_s`."""
        deadline = time.monotonic() + timeout_s
        while True:
            steps = [self._rolling_step(server) for server in self.run.all_servers()]
            if all(step is not None for step in steps):
                step = min(s for s in steps if s is not None)
                self.run.note_step(step)
                return step
            if dead := self.run.exited_server():
                log_note = f" (its log: {dead.log_path})" if dead.log_path is not None else ""
                raise VibeError(
                    f"the server at {dead.url} (pid {dead.pid}) exited while the run waited for its update to land"
                    f"{log_note}: resume the run to go on from its last checkpoint"
                )
            if time.monotonic() > deadline:
                return self.run.last_step
            time.sleep(0.5)

    @staticmethod
    def _rolling_step(server: ServerHandle) -> int | None:
        """The server's step once it rolls (no update running), else None."""
        try:
            with server.swarm() as swarm:
                status = swarm.status()
        except AgentJetError as exc:
            log.warning("status failed while settling the policy: %s", exc)
            return None
        step = status.get("step")
        return step if status.get("state") == "rolling" and isinstance(step, int) else None

    # ---- reading back --------------------------------------------------------------------------
    def outcome(self) -> Outcome:
        """before / after / curve from the server's records of every eval episode of the run (the first
        policy's, when they train apart)."""
        return self._measure(self.ids, None)

    def outcomes(self) -> dict[str, Outcome]:
        """Each policy's outcome when they train apart, by name ({} for one policy)."""
        return {name: self._measure(ids, name) for name, ids in self.policy_ids.items()}

    def _measure(self, ids: dict[str, list[str]], policy: str | None) -> Outcome:
        read = {p: self._read(found, policy) for p, found in ids.items()}
        return measure_outcome(
            read["before"],
            read["after"],
            read["between"],
            launch_step=self.launch_step,
            final_step=None,  # the version the final round was played at
            success_reward=self.metric.success_reward,
            rate_name=self.metric.rate,
        )

    def _read(self, ids: list[str], policy: str | None = None) -> list[EvalEpisode]:
        server = self.run.server if policy is None else self.run.policy_servers[policy]
        name = policy or next(iter(self.run.policy_servers), SHARED_POLICY)  # the task's name for that server
        episodes = []
        with server.swarm() as swarm:
            for episode_id in ids:
                try:
                    episodes.append(eval_episode(swarm.get_episode(episode_id), name))
                except AgentJetError as exc:  # gone from the server: counted as unusable
                    log.debug("eval episode %s not readable: %s", episode_id, exc)
                    episodes.append(EvalEpisode(episode_id, "missing", None, None))
        return episodes

    def _save(self) -> None:
        fields: dict[str, Any] = {f"eval_{p}": ids for p, ids in self.ids.items()}
        if self.policy_ids:
            fields["policy_evals"] = self.policy_ids
        write_launch_file(self.run.workspace, **fields, eval_launch_step=self.launch_step)
