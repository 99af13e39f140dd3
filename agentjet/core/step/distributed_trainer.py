"""Training across processes: each update runs data-parallel over N torch.distributed ranks.

Rank 0 is the server process: it owns HTTP, the journal and the training loop, and a
`DistributedTrainer` stands in for the `Trainer` there (the `StepTrainer` protocol). Ranks
1..N-1 are `train_worker.py` processes that rank 0 spawns (or that torchrun started; see
`torchrun_rank`; `worker_processes.py`). Every rank holds a full copy of the policy and the same
AdamW optimiser. Per step rank 0 broadcasts the command (`("step", samples, advantages, config)`)
and every rank runs its share of the step as a `RankTrainer` (`rank_trainer.py`: DDP sums the
shares' gradients, so every rank takes the identical AdamW step). Rank 0 alone saves adapters
and checkpoints.

Gloo on CPU, NCCL on GPU (rank r on cuda:base+r, commands over a gloo side group). Rendezvous
is on loopback only. Rank 0 waits at most `timeout_s` for a peer at any collective; a killed
rank closes its sockets, so gloo fails the step at once. A failed step raises
`TrainingRankFailed` before rank 0's optimiser moved (every collective precedes it), so the
training loop keeps the batch pooled; the next step first rebuilds the group: survivors are
killed, new workers spawned on a fresh port, DDP's construction broadcasts rank 0's weights and
a `load_state` command rank 0's optimiser state. Workers die with their parent (they poll it).
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import threading
import time
import weakref
from collections.abc import Sequence
from datetime import timedelta
from pathlib import Path
from typing import Any

import torch
import torch.distributed as dist
from torch._C._distributed_c10d import PrefixStore, TCPStore  # typed here (.pyi)
from torch.distributed.rendezvous import rendezvous

from agentjet.core.config import TrainConfig
from agentjet.core.episodes.merging import Sample
from agentjet.core.errors import ConfigError, NonFiniteStep, TrainingRankFailed
from agentjet.core.step.rank_trainer import RankTrainer
from agentjet.core.step.step_stats import StepStats
from agentjet.core.step.worker_processes import (
    LOOPBACK,
    READY_KEY,
    SPEC_KEY,
    how_exited,
    kill_all,
    spawn_worker,
    wait_all,
)

__all__ = ["DistributedTrainer", "backend_for", "check_world", "torchrun_rank"]

log = logging.getLogger(__name__)


def backend_for(device: str) -> str:
    """torch.distributed backend for a device: NCCL on CUDA, gloo on CPU."""
    return "nccl" if device.startswith("cuda") else "gloo"


def check_world(device: str, world_size: int) -> None:
    """ConfigError unless `world_size` ranks fit the device: on CUDA one GPU each, from `device`'s index on."""
    if world_size < 1:
        raise ConfigError(f"train_procs must be at least 1, not {world_size}")
    first = torch.device(device).index or 0
    if backend_for(device) == "nccl" and first + world_size > torch.cuda.device_count():
        raise ConfigError(
            f"train_procs={world_size} needs {world_size} GPUs from {device} on, "
            f"but {torch.cuda.device_count()} are visible"
        )


def torchrun_rank() -> tuple[int, int] | None:
    """(rank, world size) when this process was started by torchrun (RANK and WORLD_SIZE set, size > 1)."""
    rank, world = os.environ.get("RANK"), os.environ.get("WORLD_SIZE")
    if rank is None or world is None or int(world) <= 1:
        return None
    return int(rank), int(world)


class DistributedTrainer:
    """The `StepTrainer` of rank 0: a local `RankTrainer` plus the worker processes of ranks 1..N-1.

    Only one may live per process (torch.distributed has one default group). `spawn=False`: the
    other ranks were started by torchrun (`torchrun_rank`); they cannot be respawned from here.
    """

    def __init__(
        self,
        model_path: Path,
        config: TrainConfig,
        *,
        world_size: int,
        device: str = "cpu",
        dtype: str = "float32",
        seed: int = 0,
        sampler_is_own_forward: bool = True,
        timeout_s: float = 60.0,
        load_timeout_s: float = 600.0,
        spawn: bool = True,
    ) -> None:
        if world_size < 2:
            raise ConfigError(f"a distributed trainer needs at least 2 processes, not {world_size}")
        if dist.is_initialized():
            raise ConfigError("torch.distributed is already initialised in this process: one DistributedTrainer only")
        self.world_size = world_size
        self.backend = backend_for(device)
        self.timeout_s = timeout_s
        self.load_timeout_s = load_timeout_s
        self._spawn = spawn
        check_world(device, world_size)
        self._spec: dict[str, Any] = {
            "model_path": str(model_path),
            "device": device,
            "dtype": dtype,
            "seed": seed,
            "sampler_is_own_forward": sampler_is_own_forward,
        }
        self._workers: list[subprocess.Popen[bytes]] = []
        self._reaper = weakref.finalize(self, kill_all, self._workers)  # interpreter exit without close()
        self._config_lock = threading.Lock()
        self._step_lock = threading.Lock()
        self._pending: TrainConfig | None = None
        self._broken = False
        self._closed = False
        self._commands: Any = None  # the group commands travel on (None: the default group)
        self.generation = 0  # how many times the group was (re)built
        store = self._launch(config)  # workers first: they load the model while we do
        try:
            dtype_ = {"float32": torch.float32, "bfloat16": torch.bfloat16}[dtype]
            self.local = RankTrainer(
                model_path,
                config,
                device=device,
                dtype=dtype_,
                seed=seed,
                loss=config.grpo.loss,
                sampler_is_own_forward=sampler_is_own_forward,
            )
            self._connect(store)
        except BaseException:
            self._teardown()
            raise

    # ---- the StepTrainer protocol ----------------------------------------------------------
    @property
    def steps(self) -> int:
        return self.local.steps

    @steps.setter
    def steps(self, value: int) -> None:
        self.local.steps = value

    def step(self, samples: Sequence[Sample], advantages: Sequence[float]) -> StepStats:
        """One data-parallel update; TrainingRankFailed (the step not applied) when a rank dies or times out."""
        with self._step_lock:
            if self._closed:
                raise TrainingRankFailed("the distributed trainer is closed")
            if self._broken:
                self._rebuild()
            with self._config_lock:  # the config the workers get is the one rank 0 applies
                config, self._pending = self._pending, None
                self.local.apply_queued_config()
            try:
                self._send(("step", list(samples), list(advantages), config))
                return self.local.step(samples, advantages)
            except NonFiniteStep:
                raise  # every rank refused the same step (same global loss and norm): the group is fine
            except Exception as exc:
                self._broken = True
                raise self._failure("step", exc) from exc

    def reconfigure(self, config: TrainConfig) -> None:
        """Checked now (ConfigConflict as `Trainer.reconfigure`), applied on every rank at the next step."""
        with self._config_lock:
            self.local.reconfigure(config)
            self._pending = config

    def save_adapter(self, path: Path) -> None:
        self.local.save_adapter(path)

    def load_adapter(self, path: Path) -> None:
        """Rank 0 loads the folder; the workers load it too (or get the weights when the group is rebuilt)."""
        with self._step_lock:
            self.local.load_adapter(path)
            self._forward(("load_adapter", str(path)))

    def state_dict(self) -> dict[str, Any]:
        return self.local.state_dict()

    def load_state_dict(self, state: dict[str, Any]) -> None:
        with self._step_lock:
            self.local.load_state_dict(state)
            self._forward(("load_state", self.local.state_dict()))

    def memory_report(self) -> dict[str, Any]:
        """Rank 0's copy (`Trainer.memory_report`) and the group it trains with."""
        return {**self.local.memory_report(), "train_procs": self.world_size, "train_backend": self.backend}

    @property
    def worker_pids(self) -> list[int]:
        return [p.pid for p in self._workers]

    def close(self) -> None:
        """Stop the workers (a `stop` command, a kill after 10 s) and leave the group; idempotent."""
        if self._closed:
            return
        self._closed = True
        if not self._step_lock.acquire(blocking=False):  # a step runs: kill its peers, it fails and lets go
            kill_all(self._workers)
            self._step_lock.acquire()
        try:
            if not self._broken:
                try:
                    self._send(("stop",))
                    wait_all(self._workers, 10.0)
                except Exception:
                    log.warning("training workers did not take the stop command; killing them")
            self._teardown()
        finally:
            self._step_lock.release()

    # ---- the group ------------------------------------------------------------------------
    def _launch(self, config: TrainConfig) -> Any:
        """The rendezvous store with the spec in it, and (spawn) the worker processes."""
        timeout = timedelta(seconds=self.timeout_s)
        if self._spawn:
            store: Any = TCPStore(LOOPBACK, 0, self.world_size, True, timeout, wait_for_workers=False)
        else:  # torchrun: its agent's store (or ours on MASTER_PORT); a prefix per restart of the job
            store, _, _ = next(rendezvous("env://", rank=0, world_size=self.world_size, timeout=timeout))
            store = PrefixStore(f"agentjet/{os.environ.get('TORCHELASTIC_RESTART_COUNT', '0')}", store)
        spec = {**self._spec, "config": config.model_dump(mode="json"), "backend": self.backend}
        store.set(SPEC_KEY, json.dumps(spec))
        if self._spawn:
            port = store.port
            self._workers[:] = [spawn_worker(rank, self.world_size, port) for rank in range(1, self.world_size)]
        return store

    def _connect(self, store: Any) -> None:
        """Wait for every worker's model, form the group, wrap the policy in DDP, send the optimiser state."""
        self._await_ready(store)
        if self.backend == "nccl":
            os.environ.setdefault("TORCH_NCCL_ASYNC_ERROR_HANDLING", "2")  # a timeout raises here, never aborts
        timeout = timedelta(seconds=self.timeout_s)
        dist.init_process_group(self.backend, store=store, rank=0, world_size=self.world_size, timeout=timeout)
        self._commands = dist.new_group(backend="gloo", timeout=timeout) if self.backend == "nccl" else None
        self.local.join(0, self.world_size)
        self._send(("load_state", self.local.state_dict()))
        self._broken = False
        self.generation += 1
        pids = ",".join(str(p) for p in self.worker_pids) or "torchrun"
        log.info(
            "training group up world_size=%d backend=%s generation=%d workers=%s",
            self.world_size,
            self.backend,
            self.generation,
            pids,
        )

    def _await_ready(self, store: Any) -> None:
        keys = [READY_KEY.format(rank=r) for r in range(1, self.world_size)]
        deadline = time.monotonic() + self.load_timeout_s
        while not store.check(keys):
            self._check_workers("while loading the model")
            if time.monotonic() > deadline:
                raise TrainingRankFailed(f"training workers not ready within {self.load_timeout_s:.0f} s")
            time.sleep(0.05)

    def _check_workers(self, when: str) -> None:
        for rank, proc in enumerate(self._workers, start=1):
            if proc.poll() is not None:
                raise TrainingRankFailed(f"training rank {rank} (pid {proc.pid}) exited {how_exited(proc)} {when}")

    def _rebuild(self) -> None:
        """Replace a broken group: kill the survivors, spawn fresh workers, resync them from rank 0."""
        self._teardown()
        if not self._spawn:
            raise TrainingRankFailed(
                "a training rank started by torchrun failed; torchrun restarts the job (the server resumes "
                "from its checkpoint), ranks cannot be respawned from here"
            )
        log.warning("rebuilding the training group world_size=%d", self.world_size)
        try:
            self._connect(self._launch(self.local.config))
        except TrainingRankFailed:
            self._teardown()
            raise
        except Exception as exc:
            self._teardown()
            raise TrainingRankFailed(f"could not rebuild the training group: {exc}") from exc

    def _teardown(self) -> None:
        """Kill the workers and leave the group (idempotent); a later step rebuilds it."""
        self._broken = True
        if hasattr(self, "local"):
            self.local.leave()
        kill_all(self._workers)
        self._workers.clear()
        if dist.is_initialized():
            try:
                dist.destroy_process_group()
            except Exception:
                log.warning("destroying the broken process group failed", exc_info=True)
        self._commands = None

    def _send(self, command: tuple[Any, ...]) -> None:
        dist.broadcast_object_list([command], src=0, group=self._commands)

    def _forward(self, command: tuple[Any, ...]) -> None:
        """Send a command outside a step; a broken group catches up when it is rebuilt (weights + state)."""
        if self._broken or self._closed:
            return
        try:
            self._send(command)
        except Exception:
            log.warning("training workers missed %s; the group is rebuilt before the next step", command[0])
            self._broken = True

    def _failure(self, what: str, exc: Exception) -> Exception:
        """TrainingRankFailed naming the rank that died (if one did), or the original error."""
        deadline = time.monotonic() + 1.0  # the peer's death is what usually broke the collective
        while time.monotonic() < deadline and all(p.poll() is None for p in self._workers):
            time.sleep(0.02)
        dead = [(r, p) for r, p in enumerate(self._workers, start=1) if p.poll() is not None]
        if dead:
            names = ", ".join(f"rank {r} (pid {p.pid}) exited {how_exited(p)}" for r, p in dead)
            return TrainingRankFailed(f"{what} failed: {names}; the step was not applied ({exc})")
        if isinstance(exc, RuntimeError):  # torch.distributed errors: a timeout, a lost connection
            return TrainingRankFailed(f"{what} failed across the training group: {exc}; the step was not applied")
        return exc
