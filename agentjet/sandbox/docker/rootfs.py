"""The steps that make a sandbox rootfs in a directory: debootstrap, pip wheels, mount points, cleanup.

Each step runs as root on the host and streams a few progress lines; the caller (`image.build`)
owns the temp directory, the lock and the atomic rename that publishes the result.
"""

from __future__ import annotations

import os
import platform
import re
import shutil
import subprocess
import sys
from collections import deque
from collections.abc import Callable, Sequence
from pathlib import Path

from agentjet.sandbox.errors import SandboxError, SandboxUnavailable

__all__ = [
    "MOUNT_POINTS",
    "PYTHON_VERSION",
    "SUITE",
    "debian_mirror",
    "debootstrap",
    "finish",
    "pip_install",
    "remove_tree",
    "require_tools",
]

SUITE = "bookworm"  # Debian 12: python3 is 3.11, glibc 2.36
PYTHON_VERSION = "3.11"
_GLIBC_MINOR = 36
SITE_PACKAGES = f"usr/local/lib/python{PYTHON_VERSION}/dist-packages"
# Empty directories the backends mount over: work dir, staged input, swarm socket, agentjet source.
MOUNT_POINTS = ("work", "input", "run/agentjet", "opt/agentjet/agentjet", "tmp")
_DEFAULT_MIRROR = "http://deb.debian.org/debian"
_FREED = ("var/cache/apt/archives", "var/lib/apt/lists", "usr/share/doc", "usr/share/man", "usr/share/info")

Progress = Callable[[str], None]


def require_tools() -> str:
    """The debootstrap binary, after checking we are root. Raises SandboxUnavailable with the fix."""
    if os.geteuid() != 0:
        raise SandboxUnavailable(
            "building the sandbox rootfs needs root (debootstrap, file ownership).",
            "run the build as root: `sudo .venv/bin/agentjet sandbox build`",
        )
    found = shutil.which("debootstrap", path=os.environ.get("PATH", "") + ":/usr/sbin:/sbin")
    if found is None:
        raise SandboxUnavailable(
            "debootstrap is not installed.", "`apt-get install -y debootstrap` (or `sandboxes/engine.sh start`)"
        )
    return found


def debian_mirror(sources_dir: Path = Path("/etc/apt")) -> str:
    """$AGENTJET_DEBIAN_MIRROR, else the host's apt source for the suite's release, else deb.debian.org."""
    override = os.environ.get("AGENTJET_DEBIAN_MIRROR", "").strip()
    if override:
        return override
    texts = [p.read_text(errors="replace") for p in sorted(sources_dir.glob("sources.list.d/*.sources"))]
    for stanza in "\n\n".join(texts).split("\n\n"):  # deb822: URIs + Suites per stanza
        fields = dict(re.findall(r"^(\w[\w-]*):\s*(.*)$", stanza, re.MULTILINE))
        if SUITE in fields.get("Suites", "").split() and "deb" in fields.get("Types", "").split():
            return str(fields["URIs"].split()[0])
    legacy = sources_dir / "sources.list"
    if legacy.is_file():
        match = re.search(rf"^deb\s+(?:\[[^]]*\]\s+)?(\S+)\s+{SUITE}\s", legacy.read_text(errors="replace"), re.M)
        if match:
            return match.group(1)
    return _DEFAULT_MIRROR


def debootstrap(tool: str, target: Path, packages: Sequence[str], progress: Progress) -> None:
    """`debootstrap --variant=minbase` into `target`, printing one line each time its phase changes."""
    mirror = debian_mirror()
    progress(f"debootstrap {SUITE} (minbase + {', '.join(packages)}) from {mirror}")
    command = [tool, "--variant=minbase", "--components=main", f"--include={','.join(packages)}"]
    env = {"DEBIAN_FRONTEND": "noninteractive"}
    _stream("debootstrap", [*command, SUITE, str(target), mirror], progress, env=env)


def pip_install(target: Path, requirements: Path, progress: Progress) -> None:
    """Install the pinned wheels with the host's pip into the rootfs's dist-packages (no compiler needed)."""
    site = target / SITE_PACKAGES
    progress(f"pip install -r {requirements.name} (wheels for CPython {PYTHON_VERSION}) into /{SITE_PACKAGES}")
    machine = platform.machine()
    platforms = [f"manylinux_2_{minor}_{machine}" for minor in range(_GLIBC_MINOR, 4, -1)]
    platforms += [f"manylinux2014_{machine}", f"manylinux2010_{machine}", f"manylinux1_{machine}"]
    command = [sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    command += ["--no-warn-script-location", "--target", str(site), "--only-binary=:all:"]
    abi = "cp" + PYTHON_VERSION.replace(".", "")
    command += ["--python-version", PYTHON_VERSION, "--implementation", "cp", "--abi", abi]
    command += [arg for name in platforms for arg in ("--platform", name)]
    _stream("pip install", [*command, "-r", str(requirements)], progress)
    remove_tree(site / "bin")  # console scripts with the host venv's shebang: useless inside


def finish(target: Path, marker: Path, digest: str) -> None:
    """Mount points, no host identity (resolv.conf, hostname), no caches; the marker is written last."""
    for name in MOUNT_POINTS:
        (target / name).mkdir(mode=0o755, parents=True, exist_ok=True)
    (target / "tmp").chmod(0o1777)
    (target / "etc/resolv.conf").write_text("")  # debootstrap copies the host's; the sandbox has no DNS
    (target / "etc/hostname").write_text("sandbox\n")
    for name in _FREED:
        for child in (target / name).glob("*"):
            remove_tree(child)
    (target / marker).write_text(digest + "\n")


def remove_tree(path: Path) -> None:
    """rm -rf that first detaches anything still mounted below `path` (a crashed debootstrap leaves /proc)."""
    if not path.exists() and not path.is_symlink():
        return
    prefix = str(path.resolve()) + "/"
    mounted = [m for m in _mount_points() if m.startswith(prefix)]
    for mount in sorted(mounted, key=len, reverse=True):
        subprocess.run(["umount", "-l", mount], check=False, capture_output=True)
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    else:
        path.unlink()


def _mount_points() -> list[str]:
    try:
        lines = Path("/proc/self/mountinfo").read_text().splitlines()
    except OSError:
        return []
    return [line.split()[4].replace("\\040", " ") for line in lines if len(line.split()) > 4]


def _stream(label: str, command: Sequence[str], progress: Progress, env: dict[str, str] | None = None) -> None:
    """Run `command`, echoing its `I: ` phase lines (once per verb); on failure raise with the output's tail."""
    tail: deque[str] = deque(maxlen=25)
    seen: set[str] = set()
    proc = subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        errors="replace",
        env={**os.environ, **(env or {})},
    )
    assert proc.stdout is not None
    with proc:
        for line in proc.stdout:
            line = line.rstrip()
            tail.append(line)
            verb = line[3:].split(" ", 1)[0]
            if line.startswith("I: ") and (verb not in seen or line.endswith("...")):  # phases, not packages
                progress("  " + line[3:])
                seen.add(verb)
    if proc.returncode != 0:
        shown = "\n".join(tail)
        raise SandboxError(f"{label} failed (exit {proc.returncode}):\n{shown}")
