"""Policies the chat starts itself: the base model, or one checkpoint step of a server's state dir.

Each is an `agentjet server start` child (`ServerProcess`) on a fresh state dir of its own, so the
run it comes from is never touched: for a checkpoint, `checkpoints/step-N` is copied in with a
`LATEST` naming it, and the server starts with the TrainConfig that step was trained under (its
`meta.json`), so it restores exactly that adapter. The chat waits until the restore is done, so no
reply comes from the base weights by mistake, and stops the children when it stops.
"""

from __future__ import annotations

import json
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

import httpx

from agentjet.chat.targets import ChatTarget
from agentjet.core import ConfigError, ServerProcess, ServerStartFailed

__all__ = ["LaunchedPolicy", "copy_checkpoint", "launch_policy", "parse_checkpoint"]

_RESTORED = {"ready", "off"}


@dataclass
class LaunchedPolicy:
    target: ChatTarget
    process: ServerProcess

    def stop(self) -> None:
        self.process.stop()


def parse_checkpoint(spec: str) -> tuple[str, Path, int | None]:
    """`NAME=STATE_DIR[@STEP]` -> (name, state dir, step or None for its latest checkpoint)."""
    name, sep, rest = spec.partition("=")
    where, at, step_text = rest.rpartition("@") if "@" in rest else (rest, "", "")
    if not sep or not name.strip() or not where.strip():
        raise ValueError(f"--checkpoint {spec!r}: expected NAME=STATE_DIR or NAME=STATE_DIR@STEP")
    if at and not step_text.isdigit():
        raise ValueError(f"--checkpoint {spec!r}: the step after @ must be a number")
    return name.strip(), Path(where.strip()).expanduser(), int(step_text) if at else None


def copy_checkpoint(state_dir: Path, step: int | None, into: Path) -> Path:
    """Copy step `step` (None: the one `LATEST` names) of `state_dir` into the fresh state dir `into`;
    returns the path of the TrainConfig file it was trained under."""
    root = state_dir / "checkpoints"
    if step is None:
        latest = root / "LATEST"
        if not latest.is_file():
            raise ConfigError(f"{state_dir} has no checkpoint (no {latest})")
        name = latest.read_text().strip()
    else:
        name = f"step-{step}"
    source = root / name
    if not (source / "meta.json").is_file():
        steps = sorted(p.name for p in root.glob("step-*") if (p / "meta.json").is_file()) if root.is_dir() else []
        raise ConfigError(f"{state_dir} has no checkpoint {name}; it has: {', '.join(steps) or 'none'}")
    meta = json.loads((source / "meta.json").read_text())
    (into / "checkpoints").mkdir(parents=True, exist_ok=True)
    shutil.copytree(source, into / "checkpoints" / name)
    (into / "checkpoints" / "LATEST").write_text(name)
    config = into / "train-config.json"  # JSON is YAML: `--config` reads it
    config.write_text(json.dumps(meta["config"]))
    return config


def launch_policy(
    name: str, model: str, workdir: Path, *, checkpoint: tuple[Path, int | None] | None = None, timeout_s: float = 300.0
) -> LaunchedPolicy:
    """Start a server for `model` (with `checkpoint`'s adapter) and wait until it serves that policy."""
    state_dir = workdir / name
    state_dir.mkdir(parents=True)
    flags: list[str] = []
    if checkpoint is not None:
        flags = ["--config", str(copy_checkpoint(checkpoint[0], checkpoint[1], state_dir))]
    process = ServerProcess(model, state_dir, log_path=workdir / f"{name}.log", flags=flags)
    process.start()
    try:
        deadline = time.monotonic() + timeout_s
        process.wait_ready(deadline)
        _wait_restored(process, deadline)
    except BaseException:
        process.stop()
        raise
    return LaunchedPolicy(ChatTarget(name=name, url=process.url, token=process.token), process)


def _wait_restored(process: ServerProcess, deadline: float) -> None:
    while time.monotonic() < deadline:
        training = httpx.get(f"{process.url}/health", timeout=10).json().get("training")
        if training in _RESTORED:
            return
        if training == "failed":
            raise ServerStartFailed(f"the checkpoint did not load: see {process.log_path}")
        time.sleep(0.2)
    raise ServerStartFailed(f"the server did not finish loading its checkpoint in time: see {process.log_path}")
