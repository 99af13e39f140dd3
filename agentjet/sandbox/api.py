"""`Sandbox`: run a command on a backend chosen once (docker, else bwrap), with files, limits and swarm access.

    result = Sandbox().run("python3 reward.py", files={"reward.py": code}, timeout=10)
    result.ok, result.stopped_by, result.stdout

Files are staged in a private temp dir (deleted afterwards) that the backend copies into the
sandbox's `/work`; a str command runs under `sh -c`. With `swarm`, a `SwarmBridge` serves the
server to the sandbox through a Unix socket for the length of the run (the token stays here); a
sequence of several servers gets one bridge each (`SwarmBridges`).
"""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path, PurePosixPath
from typing import Protocol

from agentjet.sandbox.bridge import SwarmAccess, SwarmBridge, SwarmBridges
from agentjet.sandbox.docker.image import ImageRef
from agentjet.sandbox.errors import SandboxError, SandboxUnavailable
from agentjet.sandbox.limits import Limits
from agentjet.sandbox.result import RunResult
from agentjet.sandbox.runspec import Bridge, tree_bytes
from agentjet.sandbox.verdict import human_size

__all__ = ["BACKEND_NAMES", "Backend", "Files", "Sandbox", "choose_backend", "make_backend"]

BACKEND_NAMES = ("docker", "bwrap")  # auto tries them in this order
Files = Path | Mapping[str, str | bytes]


class Backend(Protocol):
    """A sandbox implementation. `check` raises SandboxUnavailable(reason, fix); `run` is thread-safe."""

    name: str

    def check(self) -> None: ...

    def run(
        self,
        command: Sequence[str],
        *,
        workdir: Path | None,
        limits: Limits,
        env: Mapping[str, str],
        swarm: Bridge | None,
    ) -> RunResult: ...


def make_backend(name: str, image: ImageRef | None = None) -> Backend:
    """The backend called `name`, unchecked."""
    if name == "docker":
        from agentjet.sandbox.docker.backend import DockerBackend

        return DockerBackend(image)
    if name == "bwrap":
        from agentjet.sandbox.bwrap.backend import BwrapBackend

        return BwrapBackend(image)
    raise SandboxError(f"unknown sandbox backend {name!r}: use auto, {' or '.join(BACKEND_NAMES)}")


def choose_backend(name: str = "auto", image: ImageRef | None = None) -> Backend:
    """A checked backend. `auto` (overridable by $AGENTJET_SANDBOX_BACKEND) takes the first that works."""
    if name == "auto":
        name = os.environ.get("AGENTJET_SANDBOX_BACKEND", "").strip() or "auto"
    if name != "auto":
        backend = make_backend(name, image)
        backend.check()
        return backend
    reasons: list[str] = []
    for candidate in BACKEND_NAMES:
        backend = make_backend(candidate, image)
        try:
            backend.check()
        except SandboxUnavailable as exc:
            reasons.append(f"{candidate}: {exc}")
            continue
        return backend
    raise SandboxUnavailable("no sandbox backend works here (" + " | ".join(reasons) + ").", "agentjet sandbox doctor")


class Sandbox:
    """Runs untrusted commands. The backend is chosen and checked here; raises SandboxUnavailable if none works.

    Thread-safe: one Sandbox may serve concurrent `run` calls, each in its own container/namespaces.
    """

    def __init__(self, backend: str = "auto", *, image: ImageRef | None = None) -> None:
        self.backend = choose_backend(backend, image)

    @property
    def name(self) -> str:
        return self.backend.name

    def run(
        self,
        command: str | Sequence[str],
        files: Files | None = None,
        limits: Limits | None = None,
        timeout: float | None = None,
        swarm: SwarmAccess | str | Sequence[SwarmAccess | str] | None = None,
        env: Mapping[str, str] | None = None,
    ) -> RunResult:
        """Run to exit or to the first limit. `timeout` overrides `limits.timeout_s`.

        Raises SandboxError for what cannot run at all (empty command, files over `workdir_bytes`,
        a bad file name); every limit that fires is in the result instead.
        """
        limits = limits or Limits()
        if timeout is not None:
            limits = replace(limits, timeout_s=timeout)
        argv = ["/bin/sh", "-c", command] if isinstance(command, str) else list(command)
        if not argv or (isinstance(command, str) and not command.strip()):
            raise SandboxError("the command is empty")
        variables = dict(env or {})
        _check_strings(argv, variables)
        with staged(files, limits.workdir_bytes) as workdir, _bridge(swarm) as bridge:
            return self.backend.run(argv, workdir=workdir, limits=limits, env=variables, swarm=bridge)


def _check_strings(argv: Sequence[str], env: Mapping[str, str]) -> None:
    """What exec cannot carry: NUL bytes anywhere, `=` in an env name."""
    if any("\0" in arg for arg in argv):
        raise SandboxError("a command argument contains a NUL byte")
    bad = [name for name, value in env.items() if not name or "=" in name or "\0" in name + value]
    if bad:
        raise SandboxError(f"invalid environment variable name(s) or value(s): {bad}")


@contextmanager
def _bridge(swarm: SwarmAccess | str | Sequence[SwarmAccess | str] | None) -> Iterator[Bridge | None]:
    """No bridge, one bridge, or one per server (`SwarmBridges`) for a sequence of several."""
    if swarm is None:
        yield None
        return
    if isinstance(swarm, (str, SwarmAccess)) or len(swarm) == 1:
        with SwarmBridge(swarm if isinstance(swarm, (str, SwarmAccess)) else swarm[0]) as bridge:
            yield bridge
        return
    with SwarmBridges(swarm) as bridges:
        yield bridges


@contextmanager
def staged(files: Files | None, max_bytes: int) -> Iterator[Path | None]:
    """A private copy of `files` (a directory, or name -> content) that uid 65534 can read; removed after.

    Symlinks are copied as links (never followed), sockets and fifos skipped. Raises SandboxError
    when the files total more than `max_bytes` or a name leaves the work dir.
    """
    if files is None:
        yield None
        return
    root = Path(tempfile.mkdtemp(prefix="agentjet-stage-"))
    try:
        if isinstance(files, Path):
            _copy_dir(files, root, max_bytes)
        else:
            _write_files(files, root, max_bytes)
        _open_to_sandbox(root)
        yield root
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _too_big(size: int, max_bytes: int, what: str) -> SandboxError:
    return SandboxError(
        f"{what} holds {human_size(size)}, over the {human_size(max_bytes)} work-dir limit"
        " (Limits.workdir_bytes, `--workdir-size` on the CLI)"
    )


def _copy_dir(source: Path, root: Path, max_bytes: int) -> None:
    if not source.is_dir():
        raise SandboxError(f"{source} is not a directory")
    size = tree_bytes(source)
    if size > max_bytes:
        raise _too_big(size, max_bytes, str(source))

    def special(folder: str, names: list[str]) -> set[str]:
        skipped = set()
        for name in names:
            mode = os.lstat(os.path.join(folder, name)).st_mode
            if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode) or stat.S_ISLNK(mode)):
                skipped.add(name)
        return skipped

    shutil.copytree(source, root, symlinks=True, ignore=special, dirs_exist_ok=True)


def _write_files(files: Mapping[str, str | bytes], root: Path, max_bytes: int) -> None:
    blobs = {name: content.encode() if isinstance(content, str) else content for name, content in files.items()}
    size = sum(len(blob) for blob in blobs.values())
    if size > max_bytes:
        raise _too_big(size, max_bytes, "files")
    for name, blob in blobs.items():
        relative = PurePosixPath(name)
        if not name or relative.is_absolute() or ".." in relative.parts or relative == PurePosixPath("."):
            raise SandboxError(f"file name {name!r} must be a relative path inside the work dir")
        path = root / relative
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(blob)
        except OSError as exc:  # "a" given as a file and as a directory
            raise SandboxError(f"cannot stage file {name!r}: {exc}") from exc


def _open_to_sandbox(root: Path) -> None:
    """Readable (and traversable) by everyone: the sandbox user is not the host user. Links untouched."""
    root.chmod(0o755)
    for path in root.rglob("*"):
        if path.is_symlink():
            continue
        mode = path.stat().st_mode
        executable = path.is_dir() or mode & stat.S_IXUSR
        path.chmod(0o755 if executable else 0o644)
