"""The bubblewrap backend: untrusted code in fresh namespaces as uid 65534, limited by its own cgroup.

`bwrap_launch` builds the launch chain (private mount namespace, cgroup joined before exec,
prlimit, setpriv to 65534, `bwrap --unshare-all` over the image's rootfs with `--size`-capped
tmpfs `/work`, `/tmp` and `/dev/shm`); `bwrap_watch` reads the output and enforces wall time and
output size from the host; past a limit the whole cgroup is killed, so no grandchild survives.

Every tmpfs page is also charged to the run's memory cgroup, so filling `/work` counts against
`Limits.memory_bytes` as well as `workdir_bytes`. Needs root (for setpriv, the private mounts and a
writable cgroup filesystem) and user namespaces.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import threading
import time
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path

from agentjet.sandbox.bwrap.cgroups import CgroupLayout, CgroupUsage, RunCgroup, detect
from agentjet.sandbox.bwrap.launch import HOST_ENV, TOOLS, Launch, launch_argv, mount_base
from agentjet.sandbox.bwrap.watch import Watched, watch
from agentjet.sandbox.docker import image as sandbox_image
from agentjet.sandbox.errors import SandboxError, SandboxUnavailable
from agentjet.sandbox.limits import Limits
from agentjet.sandbox.result import RunResult, StopReason
from agentjet.sandbox.runspec import SANDBOX_UID, Bridge, sandbox_env
from agentjet.sandbox.verdict import Evidence, Verdict, decide, human_size

__all__ = ["BwrapBackend"]

_MOUNT_POINTS = ("work", "input", "tmp", "run/agentjet", "opt/agentjet/agentjet")
_HELPER_PIDS = 8  # bwrap's monitor, its pid-1 reaper, our shell, the swarm forwarder and its threads
_PROBE_LIMITS = Limits(memory_bytes=64 << 20, pids=16, timeout_s=30)


class BwrapBackend:
    """Runs commands under bubblewrap. Thread-safe: concurrent runs get separate cgroups and namespaces."""

    name = "bwrap"
    _probed: set[Path] = set()
    _probe_lock = threading.Lock()

    def __init__(self, image: sandbox_image.ImageRef | None = None) -> None:
        self._image = image
        self._ready: tuple[Path, CgroupLayout] | None = None  # set by the first check() that passes

    def check(self) -> None:
        """Raise SandboxUnavailable(reason, fix) unless a run can work here. Probes once per rootfs."""
        missing = [tool for tool in TOOLS if shutil.which(tool, path=HOST_ENV["PATH"]) is None]
        if missing:
            raise SandboxUnavailable(f"{', '.join(missing)} not installed.", "apt-get install bubblewrap util-linux")
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
        self._ready = (rootfs, layout)

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
        """One trivial run: proves the cgroup is writable, the mounts work and uid 65534 gets its namespaces."""
        try:
            result = self._run(["/bin/true"], rootfs, layout, workdir=None, limits=_PROBE_LIMITS, env={}, swarm=None)
        except SandboxUnavailable:
            raise
        except SandboxError as exc:
            fix = "run as root with /sys/fs/cgroup writable"
            raise SandboxUnavailable(f"cannot use cgroups here: {exc}", fix) from exc
        if not result.ok:
            raise SandboxUnavailable(
                f"a trivial bwrap run as uid {SANDBOX_UID} failed: {result.detail} {result.stderr.strip()[-300:]}",
                "enable user namespaces (sysctl -w user.max_user_namespaces=15000; on Ubuntu also"
                " kernel.apparmor_restrict_unprivileged_userns=0), or use the docker backend",
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
        """Run `command` with `workdir`'s files copied into /work; uid 65534 must be able to read them (as
        `api.staged` makes them). Always kills the whole tree and removes the cgroup."""
        if not command:
            raise ValueError("command must not be empty")
        if self._ready is None:
            self.check()
        assert self._ready is not None
        return self._run(command, *self._ready, workdir=workdir, limits=limits, env=env, swarm=swarm)

    def _run(
        self,
        command: Sequence[str],
        rootfs: Path,
        layout: CgroupLayout,
        *,
        workdir: Path | None,
        limits: Limits,
        env: Mapping[str, str],
        swarm: Bridge | None,
    ) -> RunResult:
        started = time.monotonic()
        with contextlib.ExitStack() as stack:
            base = stack.enter_context(mount_base())
            group = RunCgroup.create(
                layout, uuid.uuid4().hex, memory_bytes=limits.memory_bytes, pids=limits.pids + _HELPER_PIDS,
                cpus=limits.cpus,
            )  # fmt: skip
            stack.callback(group.close)
            launch = Launch(group.procs_files, base, rootfs, workdir, swarm, limits, sandbox_env(env, swarm))
            watched = _start_and_watch(launch_argv(launch, command), limits, group, stack)
            usage = group.usage()
        return _result(watched, usage, limits, time.monotonic() - started)


def _start_and_watch(argv: list[str], limits: Limits, group: RunCgroup, stack: contextlib.ExitStack) -> Watched:
    status_read, status_write = os.pipe()
    try:
        proc = subprocess.Popen(
            argv, stdin=status_write, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=HOST_ENV, close_fds=True
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
