"""A training rank > 0: `python -m agentjet.core.step.train_worker` (spawned by `DistributedTrainer`, or torchrun).

RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR and MASTER_PORT come from the environment (env://
rendezvous, loopback). The worker reads what to build from the rendezvous store (the model path,
TrainConfig, device, dtype and seed rank 0 wrote), loads its copy of the policy, says it is
ready, joins the process group and then runs rank 0's commands until `stop`: `step` (its share
of the update, the config change if any first), `load_adapter`, `load_state`. It exits when its
parent process goes (polled), when rank 0's sockets close (the collective raises), or on any
error other than a refused (non-finite) step, which every rank refuses alike.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import threading
import time
from pathlib import Path
from typing import Any

import torch
import torch.distributed as dist
from torch._C._distributed_c10d import PrefixStore
from torch.distributed.rendezvous import rendezvous

from agentjet.core.config import TrainConfig
from agentjet.core.errors import NonFiniteStep
from agentjet.core.step.rank_trainer import RankTrainer
from agentjet.core.step.worker_processes import PARENT_ENV, READY_KEY, SPEC_KEY, WORKER_TIMEOUT

__all__ = ["main", "serve"]

log = logging.getLogger(__name__)

_PARENT_POLL_S = 0.5


def _watch_parent() -> None:
    """Exit the moment the parent process is gone (re-parented to init or a subreaper)."""
    parent = int(os.environ.get(PARENT_ENV) or os.getppid())

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(_PARENT_POLL_S)
        os._exit(3)

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()


def _store(rank: int, world_size: int) -> Any:
    store, _, _ = next(rendezvous("env://", rank=rank, world_size=world_size, timeout=WORKER_TIMEOUT))
    if PARENT_ENV not in os.environ:  # torchrun: the same per-restart prefix as rank 0's
        store = PrefixStore(f"agentjet/{os.environ.get('TORCHELASTIC_RESTART_COUNT', '0')}", store)
    return store


def _build(spec: dict[str, Any], local_rank: int) -> RankTrainer:
    device = spec["device"]
    if device.startswith("cuda"):
        device = f"cuda:{(torch.device(device).index or 0) + local_rank}"
        torch.cuda.set_device(device)
    else:  # the ranks share this machine's cores
        torch.set_num_threads(max(1, (os.cpu_count() or 1) // int(os.environ["WORLD_SIZE"])))
    return RankTrainer(
        Path(spec["model_path"]),
        TrainConfig.model_validate(spec["config"]),
        device=device,
        dtype={"float32": torch.float32, "bfloat16": torch.bfloat16}[spec["dtype"]],
        seed=int(spec["seed"]),
        sampler_is_own_forward=bool(spec["sampler_is_own_forward"]),
    )


def serve(trainer: RankTrainer, commands: Any = None) -> None:
    """Run rank 0's commands until `stop` (`commands`: the group they travel on; None = the default)."""
    while True:
        box: list[Any] = [None]
        dist.broadcast_object_list(box, src=0, group=commands)
        kind, *args = box[0]
        if kind == "stop":
            return
        if kind == "step":
            samples, advantages, config = args
            if config is not None:
                trainer.reconfigure(config)
            trainer.apply_queued_config()
            try:
                trainer.step(samples, advantages)
            except NonFiniteStep as exc:
                log.warning("step refused on every rank: %s", exc)
        elif kind == "load_adapter":
            trainer.load_adapter(Path(args[0]))
        elif kind == "load_state":
            trainer.load_state_dict(args[0])
        else:
            raise ValueError(f"unknown training command {kind!r}")


def main() -> int:
    rank, world_size = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    local_rank = int(os.environ.get("LOCAL_RANK", rank))
    _watch_parent()
    if PARENT_ENV in os.environ:  # spawned: a Ctrl-C is the server's to handle (it stops us), not ours
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    store = _store(rank, world_size)
    store.wait([SPEC_KEY], WORKER_TIMEOUT)  # under torchrun rank 0 builds its trainer at the first update
    spec = json.loads(store.get(SPEC_KEY))
    trainer = _build(spec, local_rank)
    store.set(READY_KEY.format(rank=rank), "1")
    dist.init_process_group(spec["backend"], store=store, rank=rank, world_size=world_size, timeout=WORKER_TIMEOUT)
    commands = dist.new_group(backend="gloo", timeout=WORKER_TIMEOUT) if spec["backend"] == "nccl" else None
    trainer.join(rank, world_size)
    log.info("training rank %d/%d up on %s", rank, world_size, trainer.device)
    serve(trainer, commands)
    dist.destroy_process_group()
    return 0


if __name__ == "__main__":  # an entry point of its own: it installs its log handler
    _format = f"%(asctime)s rank{os.environ.get('RANK')} %(levelname)s %(name)s %(message)s"
    logging.basicConfig(level=logging.INFO, format=_format)
    raise SystemExit(main())
