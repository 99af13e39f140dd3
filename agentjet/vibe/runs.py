"""Where vibe runs live besides their workspaces: the checkpoint DB, run locks, and undoing a run that never began.

`<workdir>/.vibe/checkpoints.sqlite` holds LangGraph's checkpoints of every run in the workdir
(one thread per run id); `<workdir>/.vibe/<run_id>.lock` is held (flock) by the one process
driving that run, so a second `--resume` of a run that is still going is refused instead of
racing it. The OS drops the lock when its holder dies, `kill -9` included.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from langgraph.checkpoint.sqlite import SqliteSaver

from agentjet.vibe.errors import VibeError

__all__ = ["CHECKPOINTS", "checkpoint_path", "list_runs", "lock_path", "new_paths", "open_checkpointer", "remove_new"]

CHECKPOINTS = Path(".vibe") / "checkpoints.sqlite"  # under the workdir, beside the run folders


def checkpoint_path(workdir: Path | str) -> Path:
    return Path(workdir).resolve() / CHECKPOINTS


def lock_path(workdir: Path | str, run_id: str) -> Path:
    return checkpoint_path(workdir).parent / f"{run_id}.lock"


@contextmanager
def open_checkpointer(workdir: Path | str) -> Iterator[SqliteSaver]:
    """The workdir's checkpointer (the DB and its folder are made on first use)."""
    path = checkpoint_path(workdir)
    path.parent.mkdir(parents=True, exist_ok=True)
    with SqliteSaver.from_conn_string(str(path)) as saver:
        yield saver


def list_runs(workdir: Path | str) -> list[str]:
    """Run ids with a checkpoint in `workdir` (oldest first)."""
    path = checkpoint_path(workdir)
    if not path.is_file():
        return []
    with sqlite3.connect(path) as conn:
        try:
            query = "SELECT thread_id, MIN(rowid) FROM checkpoints GROUP BY thread_id ORDER BY 2"
            rows = conn.execute(query).fetchall()
        except sqlite3.Error:
            return []
    return [str(row[0]) for row in rows]


@contextmanager
def run_lock(workdir: Path | str, run_id: str) -> Iterator[None]:
    """Hold run `run_id` for this process; VibeError naming the holder's pid when another process has it."""
    path = lock_path(workdir, run_id)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a+") as handle:  # not inherited by the server and client processes (PEP 446)
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError as exc:
            handle.seek(0)
            holder = handle.read().strip() or "?"
            raise VibeError(
                f"run {run_id} is being driven by another process (pid {holder}): wait for it or stop it"
            ) from exc
        handle.seek(0)
        handle.truncate()
        handle.write(f"{os.getpid()}\n")
        handle.flush()
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def new_paths(*paths: Path) -> list[Path]:
    """Those of `paths` (and their missing parents) that do not exist yet, deepest first."""
    missing: list[Path] = []
    for path in paths:
        for candidate in (path, *path.parents):
            if candidate.exists():
                break
            missing.append(candidate)
    return sorted(set(missing), key=lambda p: len(p.parts), reverse=True)


def remove_new(paths: list[Path]) -> None:
    """Remove what a run that never began created (from `new_paths`): a refusal leaves nothing behind."""
    for path in paths:
        if path.is_dir():
            shutil.rmtree(path, ignore_errors=True)
        else:
            for sibling in (path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")):
                sibling.unlink(missing_ok=True)
