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
    "COPY_FAILED",
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
_COPY_IN = (
    f"cp -R --preserve=mode,timestamps {INPUT_DIR}/. {WORK_DIR}/ || {{ echo '{COPY_FAILED}' >&2; exit 125; }}; "
    f'cd {WORK_DIR} && exec "$@"'
)


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


def entry_command(command: Sequence[str], *, copy_input: bool, swarm: Bridge | None) -> list[str]:
    """`command` under the swarm forwarder (if any), after the copy-in step (if there is input)."""
    wrapped = swarm.wrap(command) if swarm is not None else list(command)
    if not copy_input:
        return wrapped
    return ["/bin/sh", "-c", _COPY_IN, "agentjet-entry", *wrapped]


def tree_bytes(root: Path) -> int:
    """Apparent size of every regular file under `root` (symlinks not followed)."""
    total = 0
    for folder, _, names in os.walk(root):
        for name in names:
            path = os.path.join(folder, name)
            if not os.path.islink(path):
                total += os.path.getsize(path)
    return total
