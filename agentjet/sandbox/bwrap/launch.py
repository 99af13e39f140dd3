"""The command line that starts one bwrap sandbox, and the private mount base it needs.

One pid carries the whole chain, each step exec'ing the next, all before untrusted code exists:
`unshare --mount` (a private mount namespace, as root) -> `sh` (joins the run's cgroup, then
bind-mounts the rootfs, the agentjet source, the staged input and the swarm socket dir onto an
empty 0755 base dir, so uid 65534 can reach them even when they live under a 0700 home) ->
`prlimit` -> `setpriv` (uid/gid 65534, no groups, no capabilities, no-new-privs) -> `bwrap
--unshare-all` -> a shell inside that copies `/input` into `/work`, runs the command and writes
its status lines to the status pipe (which arrives as stdin: dash cannot name fds above 9).
"""

from __future__ import annotations

import contextlib
import shlex
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from agentjet.sandbox.limits import Limits
from agentjet.sandbox.runspec import (
    COPY_IN,
    INPUT_DIR,
    SANDBOX_GID,
    SANDBOX_UID,
    SOURCE_MOUNT,
    SWARM_MOUNT,
    WORK_DIR,
    Bridge,
    agentjet_source,
)

__all__ = ["HOST_ENV", "TOOLS", "Launch", "launch_argv", "mount_base"]

TOOLS = ("bwrap", "setpriv", "prlimit", "unshare", "mount")
HOST_ENV = {  # the launcher's whole env: nothing of ours (no token) shows in /proc/PID/environ
    "PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
    "LANG": "C.UTF-8",
}
_NOFILE = 1024
_BASE_DIRS = ("rootfs", "source", "input", "swarm")
_INNER = """exec 3>&0 0</dev/null
echo started >&3
{copy}"$@" 3>&-
rc=$?
echo "rc $rc" >&3
big=$(find /work /tmp /dev/shm -xdev -type f -size +{below_cap}c -print -quit 2>/dev/null)
[ -n "$big" ] && echo "big $big" >&3
exit $rc
"""  # the last lines report a file at the RLIMIT_FSIZE cap: Python ignores SIGXFSZ and sees EFBIG


@dataclass(frozen=True)
class Launch:
    """Everything one run mounts and limits."""

    procs_files: Sequence[Path]  # the run cgroup's `cgroup.procs`, one per hierarchy
    base: Path  # from `mount_base()`
    rootfs: Path
    workdir: Path | None
    swarm: Bridge | None
    limits: Limits
    env: Mapping[str, str]


@contextlib.contextmanager
def mount_base() -> Iterator[Path]:
    """An empty, world-traversable dir with one empty mount point per host source; removed afterwards.

    The binds onto it happen only inside the run's private mount namespace. Removal uses rmdir, so
    even a bind that somehow stayed visible here could never have its contents deleted.
    """
    base = Path(tempfile.mkdtemp(prefix="agentjet-bwrap-"))
    try:
        for name in _BASE_DIRS:
            (base / name).mkdir()
            (base / name).chmod(0o755)
        base.chmod(0o755)
        yield base
    finally:
        for name in _BASE_DIRS:
            with contextlib.suppress(OSError):
                (base / name).rmdir()
        with contextlib.suppress(OSError):
            base.rmdir()


def launch_argv(launch: Launch, command: Sequence[str]) -> list[str]:
    """The host command line for one run of `command`."""
    return [
        "unshare", "--mount", "--propagation", "private", "--",
        "/bin/sh", "-c", _host_script(launch), "agentjet-launch",
        *_rlimits(launch.limits), *_drop_privileges(), *_bwrap_args(launch),
        "--", "/bin/sh", "-c", _inner_script(launch), "agentjet-sandbox",
        *(launch.swarm.wrap(command) if launch.swarm is not None else command),
    ]  # fmt: skip


def _sources(launch: Launch) -> dict[str, Path]:
    sources = {"rootfs": launch.rootfs, "source": agentjet_source()}
    if launch.workdir is not None:
        sources["input"] = launch.workdir
    if launch.swarm is not None:
        sources["swarm"] = launch.swarm.socket_dir
    return sources


def _host_script(launch: Launch) -> str:
    """Root, in the private mount namespace: join the cgroup first, then bind the sources onto the base."""
    steps = [f"echo $$ > {shlex.quote(str(procs))}" for procs in launch.procs_files]
    for name, source in _sources(launch).items():
        steps.append(f"mount --bind {shlex.quote(str(source))} {shlex.quote(str(launch.base / name))}")
    return " && ".join([*steps, 'exec "$@"'])


def _inner_script(launch: Launch) -> str:
    copy = COPY_IN if launch.workdir is not None else ""
    return _INNER.format(copy=copy, below_cap=launch.limits.file_size_bytes - 1)


def _rlimits(limits: Limits) -> list[str]:
    args = ["prlimit", f"--fsize={limits.file_size_bytes}", f"--nofile={_NOFILE}", "--core=0"]
    if limits.cpu_seconds is not None:  # SIGXCPU at the soft limit, SIGKILL a second later if ignored
        args.append(f"--cpu={limits.cpu_seconds}:{limits.cpu_seconds + 1}")
    return [*args, "--"]


def _drop_privileges() -> list[str]:
    uid, gid = str(SANDBOX_UID), str(SANDBOX_GID)
    return ["setpriv", "--reuid", uid, "--regid", gid, "--clear-groups", "--inh-caps=-all", "--no-new-privs", "--"]


def _bwrap_args(launch: Launch) -> list[str]:
    limits, base = launch.limits, launch.base
    args = [
        "bwrap", "--unshare-all", "--unshare-user", "--disable-userns", "--die-with-parent", "--new-session",
        "--cap-drop", "ALL", "--clearenv", "--hostname", "sandbox",
        "--ro-bind", str(base / "rootfs"), "/", "--proc", "/proc", "--dev", "/dev",
        "--size", str(limits.tmp_bytes), "--tmpfs", "/dev/shm",
        "--size", str(limits.tmp_bytes), "--tmpfs", "/tmp",
        "--size", str(limits.workdir_bytes), "--tmpfs", WORK_DIR,
        "--ro-bind", str(base / "source"), SOURCE_MOUNT,
    ]  # fmt: skip
    if launch.workdir is not None:
        args += ["--ro-bind", str(base / "input"), INPUT_DIR]
    if launch.swarm is not None:
        args += ["--ro-bind", str(base / "swarm"), SWARM_MOUNT]
    for name, value in launch.env.items():
        args += ["--setenv", name, value]
    return [*args, "--chdir", WORK_DIR]
