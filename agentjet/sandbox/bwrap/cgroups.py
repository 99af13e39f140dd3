"""Per-run cgroups for the bwrap backend: whole-tree memory, pids and CPU limits, usage, kill, removal.

Both layouts are handled. cgroup v1 (one hierarchy per controller, `memory`, `pids`, `cpu`,
`cpuacct`): a run's group is `<our own cgroup>/agentjet/<run>` in every hierarchy, so it nests
under whatever limits already apply to us. cgroup v2 (one unified tree): the group is
`<root>/agentjet/<run>`, at the root because v2 forbids enabling controllers for children of a
group that holds processes. Limits on the group bind every process the run ever forks, which
is why memory and pids come from here and not from rlimits (RLIMIT_NPROC counts per uid, and
uid 65534 is shared by every concurrent sandbox).

Not thread-safe per `RunCgroup`; distinct runs may be used from distinct threads.
"""

from __future__ import annotations

import contextlib
import errno
import os
import signal
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from agentjet.sandbox.errors import SandboxError, SandboxUnavailable

__all__ = ["CgroupLayout", "CgroupUsage", "RunCgroup", "detect"]

_V1_CONTROLLERS = ("memory", "pids", "cpu", "cpuacct")
_REQUIRED = ("memory", "pids")
_BASE = "agentjet"
_CPU_PERIOD_US = 100_000
_STALE_S = 120.0  # an empty run group older than this was left by a crashed host process
_FIX_ROOT = "run as root (the bwrap backend needs a writable cgroup filesystem), or use the docker backend"


@dataclass(frozen=True)
class CgroupLayout:
    """Where run groups go: `bases[controller]` is the `agentjet` dir under which each run gets one."""

    version: int  # 1 or 2
    bases: Mapping[str, Path]  # v1: memory/pids/cpu/cpuacct (cpu ones optional); v2: one entry, "unified"


@dataclass(frozen=True)
class CgroupUsage:
    """What the run's tree did, read back from the group."""

    oom_killed: bool  # the kernel OOM-killed a process of the tree
    pids_limit_hit: bool  # a fork or clone was refused by pids.max
    peak_memory_bytes: int | None
    cpu_s: float | None  # user + system of every process the tree ran


def _mounts(mountinfo: str) -> tuple[dict[str, Path], Path | None]:
    """v1 controller -> mount point, and the cgroup2 mount point if any."""
    v1: dict[str, Path] = {}
    v2: Path | None = None
    for line in mountinfo.splitlines():
        left, sep, right = line.partition(" - ")
        if not sep:
            continue
        fields, tail = left.split(), right.split()
        if len(fields) < 5 or len(tail) < 3:
            continue
        mount_point = Path(fields[4].replace("\\040", " "))
        if tail[0] == "cgroup2":
            v2 = v2 or mount_point
        elif tail[0] == "cgroup":
            for option in tail[2].split(","):
                if option in _V1_CONTROLLERS:
                    v1.setdefault(option, mount_point)
    return v1, v2


def _own_paths(proc_cgroup: str) -> dict[str, str]:
    """Controller (or "" for v2) -> our own cgroup path, from /proc/self/cgroup."""
    own: dict[str, str] = {}
    for line in proc_cgroup.splitlines():
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        for controller in parts[1].split(",") if parts[1] else [""]:
            own[controller] = parts[2]
    return own


def detect(
    mountinfo: Path = Path("/proc/self/mountinfo"), proc_cgroup: Path = Path("/proc/self/cgroup")
) -> CgroupLayout:
    """Find the cgroup layout of this machine. Raises SandboxUnavailable when memory or pids is missing."""
    try:
        v1, v2 = _mounts(mountinfo.read_text())
        own = _own_paths(proc_cgroup.read_text())
    except OSError as exc:
        raise SandboxUnavailable(f"cannot read the cgroup layout ({exc}).", "mount /proc and /sys/fs/cgroup") from exc
    if all(name in v1 for name in _REQUIRED):
        bases = {name: mount / own.get(name, "/").lstrip("/") / _BASE for name, mount in v1.items()}
        return CgroupLayout(1, bases)
    if v2 is not None:
        controllers = _read(v2 / "cgroup.controllers") or ""
        missing = [name for name in _REQUIRED if name not in controllers.split()]
        if not missing:
            return CgroupLayout(2, {"unified": v2 / _BASE})
        raise SandboxUnavailable(
            f"cgroup v2 at {v2} lacks the {', '.join(missing)} controller(s).",
            "boot with the memory and pids controllers on the unified hierarchy (systemd does by default)",
        )
    raise SandboxUnavailable(
        "no cgroup filesystem with the memory and pids controllers is mounted.",
        "mount cgroups (`mount -t cgroup2 none /sys/fs/cgroup`) or use the docker backend",
    )


def _read(path: Path) -> str | None:
    try:
        return path.read_text()
    except OSError:
        return None


def _read_int(path: Path) -> int | None:
    text = _read(path)
    try:
        return int(text.split()[0]) if text else None
    except ValueError:
        return None


def _keyed(path: Path) -> dict[str, int]:
    """`key value` lines (memory.events, cpu.stat, pids.events, memory.oom_control) as a dict."""
    values: dict[str, int] = {}
    for line in (_read(path) or "").splitlines():
        key, _, value = line.partition(" ")
        with contextlib.suppress(ValueError):
            values[key] = int(value)
    return values


def _write(path: Path, value: str) -> None:
    try:
        path.write_text(value)
    except OSError as exc:
        raise SandboxError(f"cannot write {value!r} to {path}: {exc}") from exc


class RunCgroup:
    """One run's group. `create` makes and limits it; `close` kills what is left in it and removes it."""

    def __init__(self, layout: CgroupLayout, dirs: Mapping[str, Path]) -> None:
        self.layout = layout
        self.dirs = dict(dirs)  # controller -> this run's directory

    @classmethod
    def create(cls, layout: CgroupLayout, name: str, *, memory_bytes: int, pids: int, cpus: float) -> RunCgroup:
        """Make `<base>/<name>` in every hierarchy and set its limits. Raises SandboxUnavailable if not writable."""
        group = cls(layout, {controller: base / name for controller, base in layout.bases.items()})
        try:
            for path in group.dirs.values():
                _make_dir(layout, path)
            group._limit(memory_bytes, pids, cpus)
        except OSError as exc:
            group.close()
            if exc.errno not in (errno.EACCES, errno.EPERM, errno.EROFS):
                raise SandboxError(f"cannot create the run's cgroup: {exc}") from exc
            raise SandboxUnavailable(f"the cgroup filesystem is not writable ({exc}).", _FIX_ROOT) from exc
        except BaseException:
            group.close()
            raise
        return group

    def _limit(self, memory_bytes: int, pids: int, cpus: float) -> None:
        quota_us = max(1000, int(cpus * _CPU_PERIOD_US))
        if self.layout.version == 2:
            path = self.dirs["unified"]
            _write(path / "memory.max", str(memory_bytes))
            if (path / "memory.swap.max").exists():
                _write(path / "memory.swap.max", "0")  # memory + swap = memory, as on v1 with memsw
            _write(path / "pids.max", str(pids))
            if (path / "cpu.max").exists():
                _write(path / "cpu.max", f"{quota_us} {_CPU_PERIOD_US}")
            return
        memory = self.dirs["memory"]
        _write(memory / "memory.limit_in_bytes", str(memory_bytes))
        if (memory / "memory.memsw.limit_in_bytes").exists():
            _write(memory / "memory.memsw.limit_in_bytes", str(memory_bytes))
        _write(self.dirs["pids"] / "pids.max", str(pids))
        if "cpu" in self.dirs:
            _write(self.dirs["cpu"] / "cpu.cfs_period_us", str(_CPU_PERIOD_US))
            _write(self.dirs["cpu"] / "cpu.cfs_quota_us", str(quota_us))

    @property
    def procs_files(self) -> list[Path]:
        """The `cgroup.procs` files a process writes its pid to (in every hierarchy) to join the run."""
        return [path / "cgroup.procs" for path in self.dirs.values()]

    def add(self, pid: int) -> None:
        for procs in self.procs_files:
            _write(procs, str(pid))

    def pids(self) -> set[int]:
        """Every process still in the group (any hierarchy)."""
        found: set[int] = set()
        for procs in self.procs_files:
            found.update(int(pid) for pid in (_read(procs) or "").split())
        return found

    def usage(self) -> CgroupUsage:
        """Read back OOM kills, refused forks, peak memory and CPU time. Missing files read as unknown."""
        if self.layout.version == 2:
            path = self.dirs["unified"]
            usec = _keyed(path / "cpu.stat").get("usage_usec")
            return CgroupUsage(
                oom_killed=_keyed(path / "memory.events").get("oom_kill", 0) > 0,
                pids_limit_hit=_keyed(path / "pids.events").get("max", 0) > 0,
                peak_memory_bytes=_read_int(path / "memory.peak"),
                cpu_s=None if usec is None else usec / 1e6,
            )
        memory, cpuacct = self.dirs["memory"], self.dirs.get("cpuacct")
        nanoseconds = None if cpuacct is None else _read_int(cpuacct / "cpuacct.usage")
        return CgroupUsage(
            oom_killed=_keyed(memory / "memory.oom_control").get("oom_kill", 0) > 0,
            pids_limit_hit=_keyed(self.dirs["pids"] / "pids.events").get("max", 0) > 0,
            peak_memory_bytes=_read_int(memory / "memory.max_usage_in_bytes"),
            cpu_s=None if nanoseconds is None else nanoseconds / 1e9,
        )

    def kill(self, timeout_s: float = 5.0) -> bool:
        """SIGKILL every process in the group until it is empty; a forking tree is chased. True if emptied."""
        kill_file = self.dirs.get("unified", Path("/nonexistent")) / "cgroup.kill"
        deadline = time.monotonic() + timeout_s
        while True:
            remaining = self.pids()
            if not remaining:
                return True
            if kill_file.exists():
                with contextlib.suppress(OSError):
                    kill_file.write_text("1")
            for pid in remaining:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            if time.monotonic() > deadline:
                return False
            time.sleep(0.005)

    def close(self, timeout_s: float = 5.0) -> None:
        """Kill what is left, then remove the group (retrying while the kernel still counts dying tasks)."""
        self.kill(timeout_s)
        deadline = time.monotonic() + timeout_s
        for path in self.dirs.values():
            while path.exists():
                try:
                    path.rmdir()
                except FileNotFoundError:
                    break
                except OSError as exc:
                    if exc.errno != errno.EBUSY or time.monotonic() > deadline:
                        raise SandboxError(f"cannot remove cgroup {path}: {exc}") from exc
                    self.kill(0.0)
                    time.sleep(0.01)
            with contextlib.suppress(OSError):
                path.parent.rmdir()  # the shared `agentjet` base, once its last run is gone


def _make_dir(layout: CgroupLayout, path: Path) -> None:
    """mkdir the run group; its base may be removed by a finishing run meanwhile, so retry."""
    for _ in range(20):
        try:
            if not path.parent.is_dir():
                path.parent.mkdir(exist_ok=True)
                if layout.version == 2:
                    _enable_controllers(path.parent)
            _sweep(path.parent)
            path.mkdir()
            return
        except FileNotFoundError:
            continue
    raise SandboxError(f"cannot create cgroup {path}")


def _enable_controllers(base: Path) -> None:
    """v2: controllers must be enabled on every ancestor's subtree_control before a child can use them."""
    wanted = ["memory", "pids", "cpu"]
    for parent in (base.parent, base):
        available = (_read(parent / "cgroup.controllers") or "").split()
        line = " ".join(f"+{name}" for name in wanted if name in available)
        try:
            (parent / "cgroup.subtree_control").write_text(line)
        except OSError as exc:
            raise SandboxUnavailable(
                f"cannot enable cgroup v2 controllers in {parent} ({exc}); a group holding processes cannot"
                " delegate them.",
                "run from a delegated cgroup (e.g. `systemd-run --scope -p Delegate=yes ...`) or as root",
            ) from exc


def _sweep(base: Path) -> None:
    """Remove empty run groups a crashed host process left behind (old enough not to be starting)."""
    now = time.time()
    for child in base.iterdir():
        with contextlib.suppress(OSError):
            if child.is_dir() and now - child.stat().st_mtime > _STALE_S:
                child.rmdir()  # refused (EBUSY) while processes are still in it
