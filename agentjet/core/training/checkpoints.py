"""Checkpoints on disk: what a restart needs to continue training exactly where it stopped.

`<state_dir>/checkpoints/step-N/` holds `adapter/` (a PEFT adapter folder), `trainer.pt`
(optimiser state, step, torch RNG state) and `meta.json` (step, policy version, the journal
seqs consumed by training so far, the TrainConfig, time). A checkpoint is written into a
temp folder in the same parent, fsynced, then renamed into place, and only then does the
`LATEST` file (itself replaced atomically) name it: a kill -9 at any moment leaves either the
old or the new checkpoint, never half of one. Readers ignore temp folders and a `LATEST` that
names a missing folder (they fall back to the newest complete `step-N`).
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import tempfile
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentjet.core.config import TrainConfig

if TYPE_CHECKING:
    from agentjet.core.step.step_trainer import StepTrainer

__all__ = [
    "Checkpoint",
    "checkpoint_steps",
    "latest_checkpoint",
    "load_trainer_state",
    "prune_adapters",
    "prune_state_adapters",
    "restore_trainer",
    "truncate_metrics",
    "write_checkpoint",
]

log = logging.getLogger(__name__)

LATEST = "LATEST"
_PREFIX = "step-"
_TMP_PREFIX = ".tmp-"


@dataclass(frozen=True)
class Checkpoint:
    """One complete checkpoint folder, as read back from its `meta.json`."""

    path: Path
    step: int
    policy_version: int
    consumed: tuple[int, ...]

    @property
    def adapter_dir(self) -> Path:
        return self.path / "adapter"

    @property
    def trainer_file(self) -> Path:
        return self.path / "trainer.pt"


def _fsync_tree(root: Path) -> None:
    """fsync every file and folder under `root`: a rename must never expose unwritten data."""
    for folder, _dirs, files in os.walk(root):
        for name in files:
            fd = os.open(Path(folder) / name, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
        _fsync_dir(Path(folder))


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def atomic_write_text(path: Path, text: str) -> None:
    """Replace `path` with `text` in one rename (temp file in the same folder, fsynced first)."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=_TMP_PREFIX)
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    _fsync_dir(path.parent)


def write_checkpoint(
    root: Path,
    *,
    step: int,
    policy_version: int,
    adapter_dir: Path,
    trainer_state: dict[str, Any],
    consumed: Iterable[int],
    config: TrainConfig,
    keep: int = 2,
) -> Path:
    """Write `root/step-<step>` atomically, point `LATEST` at it, keep the newest `keep`."""
    import torch

    root.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(dir=root, prefix=f"{_TMP_PREFIX}{_PREFIX}{step}-"))
    try:
        shutil.copytree(adapter_dir, tmp / "adapter")
        torch.save({**trainer_state, "rng": torch.get_rng_state()}, tmp / "trainer.pt")
        meta = {
            "step": step,
            "policy_version": policy_version,
            "consumed": sorted(set(consumed)),
            "config": config.model_dump(mode="json"),
            "time": time.time(),
        }
        (tmp / "meta.json").write_text(json.dumps(meta))
        _fsync_tree(tmp)
        final = root / f"{_PREFIX}{step}"
        if final.exists():  # a step redone after a restart from an older checkpoint
            shutil.rmtree(final)
        os.rename(tmp, final)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    _fsync_dir(root)
    atomic_write_text(root / LATEST, final.name)
    _prune(root, keep)
    log.info("checkpoint written step=%d path=%s", step, final)
    return final


def _step_of(path: Path) -> int | None:
    """The step a complete checkpoint folder name stands for; None for anything else."""
    if not path.is_dir() or not path.name.startswith(_PREFIX):
        return None
    suffix = path.name[len(_PREFIX) :]
    return int(suffix) if suffix.isdigit() else None


def _complete(root: Path) -> list[tuple[int, Path]]:
    """Complete checkpoints, oldest first (a renamed folder is complete by construction)."""
    found = [(step, p) for p in root.iterdir() if (step := _step_of(p)) is not None and (p / "meta.json").is_file()]
    return sorted(found)


def _prune(root: Path, keep: int) -> None:
    """Delete all but the newest `keep` checkpoints and any temp folder left by a killed writer."""
    for _step, path in _complete(root)[:-keep]:
        shutil.rmtree(path, ignore_errors=True)
    for path in root.iterdir():
        if path.name.startswith(_TMP_PREFIX):
            if path.is_dir():
                shutil.rmtree(path, ignore_errors=True)
            else:
                path.unlink(missing_ok=True)


def checkpoint_steps(root: Path) -> set[int]:
    """Steps of the complete checkpoints under `root` (none if it does not exist)."""
    return {step for step, _ in _complete(root)} if root.is_dir() else set()


def prune_adapters(adapters: Path, *, newest: int, also: set[int]) -> list[int]:
    """Delete `adapters/step-N` folders but the `newest` ones and the steps in `also`; the steps deleted.

    Every step writes an adapter folder; without pruning they grow without bound. A checkpoint
    holds its own copy, so what is kept here is for serving (the last few) and for inspection."""
    if not adapters.is_dir():
        return []
    steps = sorted(step for p in adapters.iterdir() if (step := _step_of(p)) is not None)
    doomed = [step for step in steps[: max(len(steps) - newest, 0)] if step not in also]
    for step in doomed:
        shutil.rmtree(adapters / f"{_PREFIX}{step}", ignore_errors=True)
    if doomed:
        log.info("adapters pruned steps=%s kept=%d", doomed, len(steps) - len(doomed))
    return doomed


def prune_state_adapters(state_dir: Path, *, keep: int) -> None:
    """After a step: `<state_dir>/adapters` down to the newest `keep` plus the checkpoints' steps.
    A failure is logged, never raised: the step it follows succeeded."""
    try:
        prune_adapters(state_dir / "adapters", newest=keep, also=checkpoint_steps(state_dir / "checkpoints"))
    except OSError as exc:
        log.warning("adapter pruning failed: %s", exc)


def latest_checkpoint(root: Path) -> Checkpoint | None:
    """The checkpoint `LATEST` names, else the newest complete one, else None."""
    if not root.is_dir():
        return None
    pointer = root / LATEST
    path: Path | None = None
    if pointer.is_file():
        named = root / pointer.read_text().strip()
        if _step_of(named) is not None and (named / "meta.json").is_file():
            path = named
        else:
            log.warning("checkpoint pointer stale latest=%s; using the newest complete one", named.name)
    if path is None:
        complete = _complete(root)
        if not complete:
            return None
        path = complete[-1][1]
    meta = json.loads((path / "meta.json").read_text())
    return Checkpoint(path, int(meta["step"]), int(meta["policy_version"]), tuple(int(s) for s in meta["consumed"]))


def load_trainer_state(checkpoint: Checkpoint) -> dict[str, Any]:
    """`trainer.pt` as saved; restores the torch RNG state as a side effect (sampling-free resume)."""
    import torch

    state: dict[str, Any] = torch.load(checkpoint.trainer_file, weights_only=True)
    rng = state.pop("rng", None)
    if rng is not None:
        torch.set_rng_state(rng)
    return state


def restore_trainer(trainer: StepTrainer, checkpoint: Checkpoint) -> None:
    """Weights from the adapter folder, then optimiser + step (+ RNG) from trainer.pt. Blocking."""
    trainer.load_adapter(checkpoint.adapter_dir)
    trainer.load_state_dict(load_trainer_state(checkpoint))


def truncate_metrics(path: Path, step: int) -> int:
    """Keep the metric lines with step <= `step` (later steps will be redone); atomic; lines dropped."""
    if not path.is_file():
        return 0
    lines = path.read_text().splitlines()
    kept = []
    for line in lines:
        try:
            if int(json.loads(line)["step"]) <= step:
                kept.append(line)
        except (ValueError, KeyError, TypeError):
            continue  # a torn last line from a kill mid-append
    if len(kept) != len(lines):
        atomic_write_text(path, "".join(line + "\n" for line in kept))
    return len(lines) - len(kept)
