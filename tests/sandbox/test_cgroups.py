"""Per-run cgroups: layout detection and read-back on scripted v1/v2 trees, then the real hierarchy here."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentjet.sandbox.bwrap.cgroups import CgroupLayout, RunCgroup, detect
from agentjet.sandbox.errors import SandboxError, SandboxUnavailable

V1_MOUNTINFO = """\
31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
32 31 0:29 / /sys/fs/cgroup/cpu,cpuacct rw,relatime - cgroup cgroup rw,cpu,cpuacct
35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
39 31 0:36 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids
40 31 0:37 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,name=systemd
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
"""
V1_SELF = "9:name=systemd:/\n8:pids:/\n4:memory:/outer/job\n1:cpu,cpuacct:/\n0::/\n"


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_detect_v1_nests_under_our_own_group_and_maps_comounted_cpu(tmp_path: Path) -> None:
    layout = detect(_write(tmp_path / "mountinfo", V1_MOUNTINFO), _write(tmp_path / "cgroup", V1_SELF))

    assert layout.version == 1
    assert layout.bases["memory"] == Path("/sys/fs/cgroup/memory/outer/job/agentjet")
    assert layout.bases["pids"] == Path("/sys/fs/cgroup/pids/agentjet")
    assert layout.bases["cpu"] == layout.bases["cpuacct"] == Path("/sys/fs/cgroup/cpu,cpuacct/agentjet")


def test_detect_v2_uses_the_root_of_the_unified_tree(tmp_path: Path) -> None:
    mount = tmp_path / "cg2"
    _write(mount / "cgroup.controllers", "cpuset cpu io memory pids\n")
    mountinfo = f"25 1 0:26 / {mount} rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n"

    layout = detect(_write(tmp_path / "mountinfo", mountinfo), _write(tmp_path / "cgroup", "0::/user.slice/x\n"))

    assert layout == CgroupLayout(2, {"unified": mount / "agentjet"})


def test_detect_says_what_is_missing(tmp_path: Path) -> None:
    mount = tmp_path / "cg2"
    _write(mount / "cgroup.controllers", "cpu io\n")
    mountinfo = _write(tmp_path / "mountinfo", f"25 1 0:26 / {mount} rw - cgroup2 cgroup2 rw\n")
    with pytest.raises(SandboxUnavailable, match="lacks the memory, pids controller"):
        detect(mountinfo, _write(tmp_path / "cgroup", "0::/\n"))
    with pytest.raises(SandboxUnavailable, match="no cgroup filesystem"):
        detect(_write(tmp_path / "none", "22 1 0:5 / /proc rw - proc proc rw\n"), tmp_path / "cgroup")


def test_v2_limits_and_read_back_on_a_scripted_tree(tmp_path: Path) -> None:
    root = tmp_path / "cg2"
    _write(root / "cgroup.controllers", "cpu memory pids\n")
    layout = CgroupLayout(2, {"unified": root / "agentjet"})
    (root / "agentjet").mkdir()
    run = root / "agentjet" / "run1"
    run.mkdir()
    _write(run / "cpu.max", "max 100000\n")  # the kernel creates it; memory.max and pids.max we write anyway
    group = RunCgroup(layout, {"unified": run})
    group._limit(256 << 20, 32, 0.5)

    assert (run / "memory.max").read_text() == str(256 << 20)
    assert (run / "pids.max").read_text() == "32"
    assert (run / "cpu.max").read_text() == "50000 100000"
    _write(run / "memory.events", "low 0\nhigh 0\nmax 12\noom 1\noom_kill 1\noom_group_kill 0\n")
    _write(run / "pids.events", "max 3\n")
    _write(run / "memory.peak", "268435456\n")
    _write(run / "cpu.stat", "usage_usec 1500000\nuser_usec 1000000\nsystem_usec 500000\n")
    usage = group.usage()
    assert usage.oom_killed and usage.pids_limit_hit
    assert usage.peak_memory_bytes == 256 << 20
    assert usage.cpu_s == pytest.approx(1.5)


def test_v1_read_back_on_a_scripted_tree_and_unknowns_stay_none(tmp_path: Path) -> None:
    dirs = {name: tmp_path / name / "agentjet" / "run" for name in ("memory", "pids")}
    for path in dirs.values():
        path.mkdir(parents=True)
    _write(dirs["memory"] / "memory.oom_control", "oom_kill_disable 0\nunder_oom 0\noom_kill 0\n")
    _write(dirs["memory"] / "memory.max_usage_in_bytes", "1048576\n")
    _write(dirs["pids"] / "pids.events", "max 0\n")
    group = RunCgroup(CgroupLayout(1, {k: v.parent for k, v in dirs.items()}), dirs)

    usage = group.usage()

    assert not usage.oom_killed and not usage.pids_limit_hit
    assert usage.peak_memory_bytes == 1048576
    assert usage.cpu_s is None  # no cpuacct hierarchy


def test_an_unwritable_cgroup_filesystem_is_unavailable_with_a_fix() -> None:
    layout = CgroupLayout(1, {"memory": Path("/sys/agentjet-test"), "pids": Path("/sys/agentjet-test")})
    if os.geteuid() != 0:
        pytest.skip("needs root to get EPERM from sysfs rather than EACCES")
    with pytest.raises(SandboxUnavailable) as info:
        RunCgroup.create(layout, "x", memory_bytes=1 << 20, pids=4, cpus=1)
    assert "not writable" in info.value.reason and "root" in info.value.fix


# The real hierarchy of this machine (root and a writable cgroup filesystem).


@pytest.fixture
def layout() -> CgroupLayout:
    try:
        found = detect()
        RunCgroup.create(found, f"probe-{uuid.uuid4().hex}", memory_bytes=1 << 24, pids=8, cpus=1).close()
    except SandboxError as exc:
        if os.environ.get("AGENTJET_REQUIRE_SANDBOX") == "1":
            pytest.fail(f"cgroups unusable but AGENTJET_REQUIRE_SANDBOX=1: {exc}")
        pytest.skip(f"cgroups unusable here: {exc}")
    return found


@pytest.fixture
def group(layout: CgroupLayout) -> Iterator[RunCgroup]:
    made = RunCgroup.create(layout, f"test-{uuid.uuid4().hex}", memory_bytes=64 << 20, pids=16, cpus=0.5)
    yield made
    made.close()


def _join(group: RunCgroup, code: str) -> subprocess.Popen[bytes]:
    """A child that joins the group before exec'ing python, as the backend's launcher does."""
    join = " && ".join(f"echo $$ > {procs}" for procs in group.procs_files)
    return subprocess.Popen(["/bin/sh", "-c", f'{join} && exec "$@"', "sh", sys.executable, "-c", code])


@pytest.mark.bwrap
def test_real_group_limits_oom_peak_and_cpu(group: RunCgroup) -> None:
    if group.layout.version == 1:
        assert (group.dirs["memory"] / "memory.limit_in_bytes").read_text().strip() == str(64 << 20)
        assert (group.dirs["pids"] / "pids.max").read_text().strip() == "16"
        if "cpu" in group.dirs:
            assert (group.dirs["cpu"] / "cpu.cfs_quota_us").read_text().strip() == "50000"

    proc = _join(group, "x = bytearray(200 << 20)")

    assert proc.wait(timeout=30) == -9
    usage = group.usage()
    assert usage.oom_killed
    assert usage.peak_memory_bytes is not None and usage.peak_memory_bytes >= 60 << 20
    assert usage.cpu_s is not None and usage.cpu_s > 0


@pytest.mark.bwrap
def test_real_group_counts_a_refused_fork(group: RunCgroup) -> None:
    code = "import os, time\ntry:\n    while True:\n        os.fork() or time.sleep(60)\nexcept OSError:\n    pass"
    proc = _join(group, code)
    deadline = time.monotonic() + 30
    while not group.usage().pids_limit_hit and time.monotonic() < deadline:
        time.sleep(0.05)

    assert group.usage().pids_limit_hit
    assert len(group.pids()) <= 16
    assert group.kill(timeout_s=10)
    proc.wait(timeout=10)
    assert group.pids() == set()


@pytest.mark.bwrap
def test_close_kills_a_forking_tree_and_removes_the_group(layout: CgroupLayout) -> None:
    group = RunCgroup.create(layout, f"test-{uuid.uuid4().hex}", memory_bytes=64 << 20, pids=64, cpus=1)
    marker = f"{time.time():.6f}"
    proc = _join(group, f"import os, time\nfor _ in range(5): os.fork()\ntime.sleep(600)  # {marker}")
    deadline = time.monotonic() + 30
    while len(group.pids()) < 32 and time.monotonic() < deadline:
        time.sleep(0.05)
    pids = group.pids()
    assert len(pids) == 32

    group.close()
    proc.wait(timeout=10)

    assert not any(path.exists() for path in group.dirs.values())
    assert not any(Path(f"/proc/{pid}").exists() and marker in _cmdline(pid) for pid in pids)


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace")
    except OSError:
        return ""
