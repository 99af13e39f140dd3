"""Time a training update on a server's own batch: alone, beside a second OpenMP team, on that team's thread,
and as the server runs it now (between a real decode loop's steps).

Why: on a CPU the server's decode loop runs torch on its own thread (one OpenMP team); an update on an
asyncio worker thread (a second team) ran 1.4x slower than alone, since with more libgomp threads than
cores they sleep between parallel regions (docs/vibe.md, "Why that update was slow"). The server now
runs a CPU update on the decode loop's thread (`training/step_runner.py`); `decode_loop` times that
path: a started `TransformersBackend`, the trainer built in a worker thread as `LazyTrainer` does.
This rebuilds the first `--episodes` training episodes of a state dir's journal with the server's
own `build_samples`, and times `Trainer.step` on them in each mode, a fresh process each, in the
dtype a CPU server's `--dtype auto` picks (bf16 on a CPU with native bf16).

Run from the checkout, e.g. on a vibe run's server state:
`.venv/bin/python scripts/update_threads.py RUN/state RUN/train.yaml --episodes 4` (prints JSON).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import queue
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
MODES = ("alone", "second_team", "same_thread", "decode_loop")


def _time_one(state: Path, train_yaml: Path, episodes: int, model: str, mode: str) -> dict[str, Any]:
    import torch

    from agentjet.core.config import load_train_config
    from agentjet.core.models import resolve_model
    from agentjet.core.placement import resolve_placement
    from agentjet.core.step.trainer import Trainer
    from agentjet.core.training.batches import build_samples
    from agentjet.core.types import EpisodeRecord

    with sqlite3.connect(state / "journal.sqlite") as db:
        rows = db.execute("select record from episodes where kind = 'train' order by seq limit ?", (episodes,))
        records = [EpisodeRecord.from_dict(json.loads(text)) for (text,) in rows]
    config = load_train_config(train_yaml)
    batch = build_samples(records, config)
    torch.manual_seed(0)
    dtype = resolve_placement("cpu").torch_dtype  # as a CPU server's --dtype auto
    if mode == "decode_loop":
        return {"mode": mode, "episodes": len(records), "samples": len(batch.samples), "dtype": str(dtype),
                **asyncio.run(_time_in_server_way(resolve_model(model), config, batch, dtype))}  # fmt: skip
    trainer = Trainer(resolve_model(model), config, device="cpu", dtype=dtype)
    jobs: queue.SimpleQueue[Any] = queue.SimpleQueue()
    ready, done = threading.Event(), threading.Event()
    result: dict[str, Any] = {}

    def team_thread() -> None:  # like the decode loop: its own thread sets the threads and runs torch, then blocks
        torch.set_num_threads(torch.get_num_threads())
        with torch.inference_mode():
            x = torch.randn(256, 256)
            (x @ x).sum()
        ready.set()
        jobs.get()()
        done.set()

    def update() -> None:
        started = time.perf_counter()
        stats = trainer.step(batch.samples, batch.advantages)
        result.update(update_s=round(time.perf_counter() - started, 1), micro_batches=stats.micro_batches)

    if mode != "alone":
        threading.Thread(target=team_thread, daemon=True).start()
        ready.wait()
    if mode == "same_thread":
        jobs.put(update)
        done.wait()
    else:  # the server's way: the update on a worker thread of its own
        worker = threading.Thread(target=update)
        worker.start()
        worker.join()
    return {"mode": mode, "episodes": len(records), "samples": len(batch.samples), "dtype": str(dtype), **result}


async def _time_in_server_way(model_path: Path, config: Any, batch: Any, dtype: Any) -> dict[str, Any]:
    """As a CPU server runs an update: the trainer built in a worker thread, the step between decode steps."""
    from agentjet.core.backends.transformers_backend import TransformersBackend
    from agentjet.core.step.trainer import Trainer
    from agentjet.core.training.step_runner import run_step, shares_decode_thread

    backend = TransformersBackend(model_path, name="served", dtype=dtype)
    await backend.start()
    try:
        trainer = await asyncio.to_thread(Trainer, model_path, config, device="cpu", dtype=dtype)
        assert shares_decode_thread(trainer, backend)
        started = time.perf_counter()
        stats = await run_step(trainer, backend, batch.samples, batch.advantages)
        return {"update_s": round(time.perf_counter() - started, 1), "micro_batches": stats.micro_batches}
    finally:
        await backend.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("state", type=Path, help="a server's state dir (its journal.sqlite)")
    parser.add_argument("train_yaml", type=Path, help="the TrainConfig the server trained with")
    parser.add_argument(
        "--episodes", type=int, default=4, help="training episodes to rebuild (a group's rewards must differ)"
    )
    parser.add_argument("--model", default="smollm2-135m", help="the model the server trained")
    parser.add_argument("--mode", choices=MODES, help="one mode in this process (the parent runs each in a child)")
    args = parser.parse_args()
    if args.mode:
        print(json.dumps(_time_one(args.state, args.train_yaml, args.episodes, args.model, args.mode)))
        return
    runs = []
    for mode in MODES:
        argv = [sys.executable, __file__, str(args.state), str(args.train_yaml), "--episodes", str(args.episodes)]
        argv += ["--model", args.model, "--mode", mode]
        done = subprocess.run(argv, capture_output=True, text=True, check=True)
        runs.append(json.loads(done.stdout.strip().splitlines()[-1]))
    print(json.dumps({"runs": runs}, indent=2))


if __name__ == "__main__":
    main()
