"""The bubblewrap backend: untrusted code in fresh namespaces as uid 65534, limited by its own cgroup.

Launch chain, each step exec'ing the next so one pid carries it all:
`sh` (writes its pid into the run's cgroup, as root, before anything untrusted exists) ->
`prlimit` (RLIMIT_CPU, RLIMIT_FSIZE, RLIMIT_NOFILE, no core dumps) -> `setpriv` (uid/gid 65534, no
groups, no capabilities, no-new-privs) -> `bwrap --unshare-all` (own user, pid, net (only `lo`),
ipc, uts and cgroup namespaces; the image's rootfs read-only as `/`; private tmpfs `/work`, `/tmp`
and `/dev/shm` with `--size` caps; the host's `agentjet/` read-only at `/opt/agentjet/agentjet`)
-> a shell that copies `/input` into `/work`, runs the command and reports its status.

Every tmpfs page is also charged to the run's memory cgroup, so filling `/work` counts against
`Limits.memory_bytes` as well as `workdir_bytes`. Wall time and output size are watched here;
past either the whole cgroup is killed, so no grandchild survives. Needs root (for setpriv and a
writable cgroup filesystem) and user namespaces.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import shutil
import subprocess
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

from agentjet.sandbox import image as sandbox_image
from agentjet.sandbox.bwrap_watch import Watched, watch
from agentjet.sandbox.cgroups import CgroupLayout, CgroupUsage, RunCgroup, detect
from agentjet.sandbox.errors import SandboxError, SandboxUnavailable
from agentjet.sandbox.limits import Limits
from agentjet.sandbox.result import RunResult, StopReason
from agentjet.sandbox.runspec import (
    COPY_FAILED,
    INPUT_DIR,
    SANDBOX_GID,
    SANDBOX_UID,
    SOURCE_MOUNT,
    SWARM_MOUNT,
    WORK_DIR,
    Bridge,
    agentjet_source,
    sandbox_env,
)
from agentjet.sandbox.verdict import Evidence, Verdict, decide, human_size

__all__ = ["BwrapBackend"]

_MOUNT_POINTS = ("work", "input", "tmp", "run/agentjet", "opt/agentjet/agentjet")
_TOOLS = ("bwrap", "setpriv", "prlimit")
_HELPER_PIDS = 8  # bwrap's monitor, its pid-1 reaper, our shell, the swarm forwarder and its threads
_NOFILE = 1024
_HOST_ENV = {"PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "LANG": "C.UTF-8"}
# Inside: stdin is the status pipe (dash cannot name fds above 9); move it to fd 3, give the
# command /dev/null, report "started", the command's status and any file that reached the
# RLIMIT_FSIZE cap (Python ignores SIGXFSZ and sees EFBIG instead).
_INNER = """exec 3>&0 0</dev/null
echo started >&3
{copy}"$@" 3>&-
rc=$?
echo "rc $rc" >&3
big=$(find /work /tmp /dev/shm -xdev -type f -size +{below_cap}c -print -quit 2>/dev/null)
[ -n "$big" ] && echo "big $big" >&3
exit $rc
"""
_COPY = (
    f"cp -dR --preserve=mode,timestamps {INPUT_DIR}/. {WORK_DIR}/"
    f" || {{ echo '{COPY_FAILED}' >&2; exit 125; }}\n"
)


class BwrapBackend:
    """Runs commands under bubblewrap. Thread-safe: concurrent runs get separate cgroups and namespaces."""

    name = "bwrap"
    _probed: set[Path] = set()
    _probe_lock = threading.Lock()

    def __init__(self, image: sandbox_image.ImageRef | None = None) -> None:
        self._image = image

    def check(self) -> None:
        """Raise SandboxUnavailable(reason, fix) unless a run can work here. Probes once per rootfs."""
        missing = [tool for tool in _TOOLS if shutil.which(tool, path=_HOST_ENV["PATH"]) is None]
        if missing:
            raise SandboxUnavailable(
                f"{', '.join(missing)} not installed.", "apt-get install bubblewrap util-linux"
            )
        if os.geteuid() != 0:
            raise SandboxUnavailable(
                "the bwrap backend must start as root (to drop to uid 65534 and manage cgroups).",
                "run as root, or use the docker backend",
            )
        if _read_int(Path("/proc/sys/user/max_user_namespaces")) == 0:
            raise SandboxUnavailable("user namespaces are disabled.", "sysctl -w user.max_user_namespaces=15000")
        rootfs = self._rootfs()
        layout = detect()
        with self._probe_lock:
            if rootfs not in self._probed:
                self._probe(rootfs, layout)
                self._probed.add(rootfs)

    def _rootfs(self) -> Path:
        ref = self._image or sandbox_image.find()
        fix = "agentjet sandbox build (or point AGENTJET_SANDBOX_ROOTFS at a built rootfs)"
        if ref is None or not (ref.rootfs / "usr/bin/python3").exists():
            where = "" if ref is None else f" at {ref.rootfs}"
            raise SandboxUnavailable(f"no sandbox rootfs is built{where}.", fix)
        absent = [name for name in _MOUNT_POINTS if not (ref.rootfs / name).is_dir()]
        if absent:
            raise SandboxUnavailable(f"the rootfs {ref.rootfs} lacks mount points /{', /'.join(absent)}.", fix)
        return ref.rootfs

    def _probe(self, rootfs: Path, layout: CgroupLayout) -> None:
        """One trivial run: proves the cgroup is writable and user namespaces work for uid 65534."""
        try:
            RunCgroup.create(layout, f"probe-{uuid.uuid4().hex[:12]}", memory_bytes=64 << 20, pids=16, cpus=1).close()
        except SandboxUnavailable:
            raise
        except SandboxError as exc:
            fix = "run as root with /sys/fs/cgroup writable"
            raise SandboxUnavailable(f"cannot use cgroups here: {exc}", fix) from exc
        argv = [*_drop_privileges(), *_bwrap_args(rootfs, None, None, Limits()), "/bin/true"]
        done = subprocess.run(argv, env=_HOST_ENV, capture_output=True, text=True, timeout=30, check=False)
        if done.returncode != 0:
            raise SandboxUnavailable(
                f"bwrap cannot create its namespaces as uid {SANDBOX_UID}: {done.stderr.strip()}",
                "enable unprivileged user namespaces (sysctl -w kernel.unprivileged_userns_clone=1,"
                " user.max_user_namespaces=15000), or use the docker backend",
            )

    def run(
        self,
        command: Sequence[str],
        *,
        workdir: Path | None,
        limits: Limits,
        env: Mapping[str, str],
        swarm: Bridge | None,
    ) -> RunResult:
        """Run `command` with `workdir`'s files copied into /work. Always removes its cgroup and temp dirs."""
        if not command:
            raise ValueError("command must not be empty")
        self.check()
        rootfs, layout = self._rootfs(), detect()
        started = time.monotonic()
        with contextlib.ExitStack() as stack:
            staging = stack.enter_context(_staged(workdir)) if workdir is not None else None
            group = RunCgroup.create(
                layout, uuid.uuid4().hex, memory_bytes=limits.memory_bytes, pids=limits.pids + _HELPER_PIDS,
                cpus=limits.cpus,
            )
            stack.callback(group.close)
            argv = _launch_argv(group, rootfs, staging, swarm, limits, sandbox_env(env, swarm), command)
            watched = _start_and_watch(argv, limits, group, stack)
            usage = group.usage()
        return _result(watched, usage, limits, time.monotonic() - started)


def _start_and_watch(argv: list[str], limits: Limits, group: RunCgroup, stack: contextlib.ExitStack) -> Watched:
    status_read, status_write = os.pipe()
    try:
        proc = subprocess.Popen(
            argv, stdin=status_write, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=_HOST_ENV, close_fds=True
        )
    except BaseException:
        os.close(status_read)
        raise
    finally:
        os.close(status_write)

    def stop() -> None:  # runs before group.close: kill the tree, reap our child, then the group can go
        group.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=10)
        for pipe in (proc.stdout, proc.stderr):
            if pipe is not None:
                pipe.close()

    stack.callback(stop)
    return watch(proc, status_read, limits, on_limit=group.kill)


def _launch_argv(
    group: RunCgroup,
    rootfs: Path,
    staging: Path | None,
    swarm: Bridge | None,
    limits: Limits,
    env: Mapping[str, str],
    command: Sequence[str],
) -> list[str]:
    join = " && ".join(f"echo $$ > {shlex.quote(str(procs))}" for procs in group.procs_files)
    inner = _INNER.format(copy=_COPY if staging else "", below_cap=limits.file_size_bytes - 1)
    sandbox_argv = [*(swarm.wrap(command) if swarm is not None else command)]
    return [
        "/bin/sh", "-c", f'{join} && exec "$@"', "agentjet-launch",
        *_rlimits(limits), *_drop_privileges(),
        *_bwrap_args(rootfs, staging, swarm, limits),
        *[arg for name, value in env.items() for arg in ("--setenv", name, value)],
        "--", "/bin/sh", "-c", inner, "agentjet-sandbox", *sandbox_argv,
    ]  # fmt: skip


def _rlimits(limits: Limits) -> list[str]:
    args = ["prlimit", f"--fsize={limits.file_size_bytes}", f"--nofile={_NOFILE}", "--core=0"]
    if limits.cpu_seconds is not None:  # SIGXCPU at the soft limit, SIGKILL a second later if ignored
        args.append(f"--cpu={limits.cpu_seconds}:{limits.cpu_seconds + 1}")
    return [*args, "--"]


def _drop_privileges() -> list[str]:
    uid, gid = str(SANDBOX_UID), str(SANDBOX_GID)
    return ["setpriv", "--reuid", uid, "--regid", gid, "--clear-groups", "--inh-caps=-all", "--no-new-privs", "--"]


def _bwrap_args(rootfs: Path, staging: Path | None, swarm: Bridge | None, limits: Limits) -> list[str]:
    args = [
        "bwrap", "--unshare-all", "--unshare-user", "--disable-userns", "--die-with-parent", "--new-session",
        "--cap-drop", "ALL", "--clearenv", "--hostname", "sandbox",
        "--ro-bind", str(rootfs), "/", "--proc", "/proc", "--dev", "/dev",
        "--size", str(limits.tmp_bytes), "--tmpfs", "/dev/shm",
        "--size", str(limits.tmp_bytes), "--tmpfs", "/tmp",
        "--size", str(limits.workdir_bytes), "--tmpfs", WORK_DIR,
        "--ro-bind", str(agentjet_source()), SOURCE_MOUNT,
    ]  # fmt: skip
    if staging is not None:
        args += ["--ro-bind", str(staging), INPUT_DIR]
    if swarm is not None:
        args += ["--ro-bind", str(swarm.socket_dir), SWARM_MOUNT]
    return [*args, "--chdir", WORK_DIR]


@contextlib.contextmanager
def _staged(workdir: Path) -> Iterator[Path]:
    """A copy of `workdir` uid 65534 can read (the caller's may be 0700); symlinks stay links, never followed."""
    if not workdir.is_dir():
        raise SandboxError(f"workdir {workdir} is not a directory")
    root = Path(tempfile.mkdtemp(prefix="agentjet-bwrap-"))
    try:
        staging = root / "input"
        shutil.copytree(workdir, staging, symlinks=True)
        for path in (root, *staging.rglob("*")):
            if path.is_symlink():
                continue
            executable = path.is_dir() or path.stat().st_mode & 0o111
            path.chmod(0o755 if executable else 0o644)
        staging.chmod(0o755)
        yield staging
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _read_int(path: Path) -> int | None:
    try:
        return int(path.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def _result(watched: Watched, usage: CgroupUsage, limits: Limits, wall_s: float) -> RunResult:
    verdict = _verdict(watched, usage, limits)
    return RunResult(
        backend="bwrap",
        exit_code=verdict.exit_code,
        stopped_by=verdict.stopped_by,
        stdout=watched.stdout.decode(errors="replace"),
        stderr=watched.stderr.decode(errors="replace"),
        stdout_truncated=watched.stdout_truncated,
        stderr_truncated=watched.stderr_truncated,
        wall_s=wall_s,
        cpu_s=usage.cpu_s,
        peak_memory_bytes=usage.peak_memory_bytes,
        detail=verdict.detail,
    )


def _verdict(watched: Watched, usage: CgroupUsage, limits: Limits) -> Verdict:
    """The shared verdict, plus what only this backend sees: a sandbox that never started, a file at the cap."""
    if not watched.started and watched.killed_for is None and not usage.oom_killed:
        stderr = watched.stderr.decode(errors="replace").strip()[-500:]
        return Verdict(StopReason.ERROR, None, f"the sandbox did not start: {stderr}")
    status = watched.status_rc if watched.status_rc is not None else watched.returncode
    if status is not None and status < 0:  # bwrap itself killed (our cgroup kill): shell-style 128+N
        status = 128 - status
    verdict = decide(
        Evidence(
            status=status,
            killed_for=watched.killed_for,
            oom_killed=usage.oom_killed,
            pids_limit_hit=usage.pids_limit_hit,
            cpu_s=usage.cpu_s,
            stderr=watched.stderr.decode(errors="replace"),
        ),
        limits,
    )
    if watched.big_file and verdict.stopped_by in (StopReason.EXITED, StopReason.SIGNALED) and status != 0:
        size = human_size(limits.file_size_bytes)
        detail = f"{watched.big_file} reached the {size} file size limit (RLIMIT_FSIZE)"
        return Verdict(StopReason.FILE_SIZE, verdict.exit_code, detail)
    return verdict
