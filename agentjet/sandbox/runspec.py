"""What both backends set up the same way: the sandbox's paths, its clean env and its entry command.

Staged files are mounted read-only at `/input` and copied into the private `/work` tmpfs by the
entry step, as the sandbox user, before the command starts (a bind of `/work` itself would let
the run write to the host). The host's `agentjet/` package is mounted read-only at
`/opt/agentjet/agentjet`, so code edits never force an image rebuild.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Protocol

__all__ = [
    "BIG_FILE",
    "COPY_FAILED",
    "COPY_IN",
    "INPUT_DIR",
    "SANDBOX_GID",
    "SANDBOX_UID",
    "SOURCE_MOUNT",
    "SWARM_MOUNT",
    "WORK_DIR",
    "Bridge",
    "agentjet_source",
    "entry_command",
    "sandbox_env",
    "split_big_file",
    "tree_bytes",
]

SANDBOX_UID = 65534  # nobody
SANDBOX_GID = 65534  # nogroup
WORK_DIR = "/work"
INPUT_DIR = "/input"
SOURCE_MOUNT = "/opt/agentjet/agentjet"
SWARM_MOUNT = "/run/agentjet"
_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
COPY_FAILED = "agentjet sandbox: copying the work dir into /work failed"
BIG_FILE = "agentjet sandbox: a file reached the size limit: "  # + path, last stderr line
COPY_IN = f"cp -dR --preserve=mode,timestamps {INPUT_DIR}/. {WORK_DIR}/ || {{ echo '{COPY_FAILED}' >&2; exit 125; }}\n"
# Run the command (not exec: the shell stays to look afterwards), then report a file that reached
# RLIMIT_FSIZE: Python ignores SIGXFSZ, so a refused write may leave no other trace.
_RUN = """cd {work} || exit 125
{deadline}"$@"
rc=$?
big=$(find {work} /tmp /dev/shm -xdev -type f -size +{below_cap}c -print -quit 2>/dev/null)
[ -n "$big" ] && echo "{mark}$big" >&2
exit $rc
"""


class Bridge(Protocol):
    """The part of `bridge.SwarmBridge` a backend uses (mount `socket_dir` at SWARM_MOUNT)."""

    @property
    def socket_dir(self) -> Path: ...

    def env(self) -> dict[str, str]: ...

    def wrap(self, command: Sequence[str]) -> list[str]: ...


def agentjet_source() -> Path:
    """The host's `agentjet/` package directory, mounted read-only at SOURCE_MOUNT."""
    return Path(__file__).resolve().parents[1]


def sandbox_env(env: Mapping[str, str], swarm: Bridge | None) -> dict[str, str]:
    """The whole environment of the command: nothing of the host's, then the caller's, then the bridge's."""
    values = {
        "PATH": _PATH,
        "HOME": WORK_DIR,
        "PYTHONPATH": str(Path(SOURCE_MOUNT).parent),
        "LANG": "C.UTF-8",
        "PYTHONDONTWRITEBYTECODE": "1",
    }
    values.update(env)
    if swarm is not None:
        values.update(swarm.env())
    return values


def entry_command(
    command: Sequence[str],
    *,
    copy_input: bool,
    swarm: Bridge | None,
    file_size_bytes: int,
    deadline_s: float | None = None,
) -> list[str]:
    """`command` under the swarm forwarder (if any), after the copy-in step (if there is input),
    followed by the look for a file at the size limit (reported on stderr as BIG_FILE + path).

    `deadline_s`: SIGKILL the command after that long from inside too, a safety net for when the
    host process that enforces the wall clock is gone (kill -9) and nothing else would stop it.
    """
    wrapped = swarm.wrap(command) if swarm is not None else list(command)
    deadline = "" if deadline_s is None else f"timeout -s KILL {deadline_s:.0f} "
    script = (COPY_IN if copy_input else "") + _RUN.format(
        work=WORK_DIR, below_cap=file_size_bytes - 1, mark=BIG_FILE, deadline=deadline
    )
    return ["/bin/sh", "-c", script, "agentjet-entry", *wrapped]


def split_big_file(stderr: str) -> tuple[str, str | None]:
    """The command's own stderr and the BIG_FILE path the entry step appended, if any."""
    head, _, last = stderr.rstrip("\n").rpartition("\n")
    if not last.startswith(BIG_FILE):
        return stderr, None
    return (head + "\n" if head else ""), last[len(BIG_FILE) :]


def tree_bytes(root: Path) -> int:
    """Apparent size of every regular file under `root` (symlinks not followed)."""
    total = 0
    for folder, _, names in os.walk(root):
        for name in names:
            path = os.path.join(folder, name)
            if not os.path.islink(path):
                total += os.path.getsize(path)
    return total
