"""The sandbox image: a Debian rootfs with Python and the client deps, tagged by the hash of its inputs.

The inputs are the files under `image_definition/` (beside this module) plus this builder's version; the same inputs
give the same tag `agentjet/sandbox:<hash12>` and the same rootfs directory
`<cache>/sandbox/rootfs-<hash12>`, so a build is skipped when both exist. The bwrap backend uses
the rootfs directly; the docker backend uses the image imported from it. The agentjet source is
not in the image: the backends bind it read-only at run time, so code edits never force a rebuild.

A rootfs is built in a temp directory and renamed into place only when complete (its marker file
written last), so a crashed build never leaves a directory that `find()` accepts.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import platform
import subprocess
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentjet.sandbox.docker import rootfs
from agentjet.sandbox.errors import SandboxError, SandboxUnavailable

__all__ = ["BUILDER_VERSION", "ImageRef", "build", "expected_ref", "find", "inputs_dir", "inputs_hash", "sandbox_cache"]

BUILDER_VERSION = "1"  # bump when a change here changes what the built rootfs contains
REPOSITORY = "agentjet/sandbox"
MARKER = "etc/agentjet-sandbox"  # inside the rootfs; holds the full inputs hash, written last
_IMAGE_CHANGES = [
    "ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
    "ENV LANG=C.UTF-8",
    "WORKDIR /work",
    'CMD ["python3"]',
]

Progress = Callable[[str], None]


@dataclass(frozen=True)
class ImageRef:
    """A sandbox image: its Docker tag and the rootfs directory it was imported from."""

    tag: str
    rootfs: Path


def inputs_dir() -> Path:
    """The image definition: $AGENTJET_SANDBOX_INPUTS, else the `image_definition/` shipped beside this module."""
    override = os.environ.get("AGENTJET_SANDBOX_INPUTS")
    return Path(override) if override else Path(__file__).resolve().parent / "image_definition"


def inputs_hash(inputs: Path | None = None) -> str:
    """sha256 over every file under `inputs` (relative path and bytes), the builder version and the suite/arch."""
    root = inputs or inputs_dir()
    if not (root / "packages.txt").is_file() or not (root / "requirements.txt").is_file():
        raise SandboxError(f"{root} is not a sandbox image definition (needs packages.txt and requirements.txt)")
    digest = hashlib.sha256(f"builder={BUILDER_VERSION} {rootfs.SUITE} {platform.machine()}\n".encode())
    for path in sorted(p for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.parts):
        relative = path.relative_to(root).as_posix().encode()
        content = path.read_bytes()
        digest.update(b"%d:%s%d:" % (len(relative), relative, len(content)))
        digest.update(content)
    return digest.hexdigest()


def sandbox_cache() -> Path:
    """Where rootfs directories live: $AGENTJET_CACHE_DIR/sandbox, else ~/.cache/agentjet/sandbox."""
    root = os.environ.get("AGENTJET_CACHE_DIR") or Path.home() / ".cache" / "agentjet"
    return Path(root) / "sandbox"


def expected_ref() -> ImageRef:
    """The ref the backends should use, built or not: the env overrides, else the current inputs' hash."""
    tag = os.environ.get("AGENTJET_SANDBOX_IMAGE")
    rootfs_dir = os.environ.get("AGENTJET_SANDBOX_ROOTFS")
    if tag and rootfs_dir:  # both overridden: the image definition need not even be there
        return ImageRef(tag=tag, rootfs=Path(rootfs_dir))
    short = inputs_hash()[:12]
    return ImageRef(
        tag=tag or f"{REPOSITORY}:{short}",
        rootfs=Path(rootfs_dir) if rootfs_dir else sandbox_cache() / f"rootfs-{short}",
    )


def find() -> ImageRef | None:
    """The ref to use if one is there, without building: None when the rootfs is missing or half-built.

    `AGENTJET_SANDBOX_ROOTFS` names a rootfs to trust as is (it only needs `/usr/bin/python3`);
    with `AGENTJET_SANDBOX_IMAGE` set the ref is returned even without a rootfs (docker-only use),
    and the bwrap backend must check `ref.rootfs` itself.
    """
    ref = expected_ref()
    if os.environ.get("AGENTJET_SANDBOX_ROOTFS"):
        usable = os.path.lexists(ref.rootfs / "usr/bin/python3")
    else:
        usable = _is_complete(ref.rootfs, inputs_hash())
    return ref if usable or os.environ.get("AGENTJET_SANDBOX_IMAGE") else None


def build(progress: Progress = print, *, docker: bool = True, force: bool = False) -> ImageRef:
    """Build the rootfs (unless complete) and import it into the engine (unless tagged there); return the ref.

    With `docker=True` an unreachable engine only skips the import (the bwrap backend needs just the
    rootfs) unless $AGENTJET_REQUIRE_SANDBOX=1, where it raises. Raises SandboxUnavailable when not root
    or debootstrap is missing, SandboxError when a step fails.
    """
    started = time.monotonic()
    inputs = inputs_dir()
    digest = inputs_hash(inputs)
    short = digest[:12]
    cache = sandbox_cache()
    ref = ImageRef(tag=f"{REPOSITORY}:{short}", rootfs=cache / f"rootfs-{short}")
    cache.mkdir(parents=True, exist_ok=True)
    with _build_lock(cache):
        rebuilt = force or not _is_complete(ref.rootfs, digest)
        if rebuilt:
            _build_rootfs(inputs, digest, ref.rootfs, progress)
        else:
            progress(f"rootfs {ref.rootfs} is up to date")
        if docker:
            _import(ref, force=rebuilt, progress=progress)
    progress(f"sandbox image {ref.tag} ready ({time.monotonic() - started:.0f} s)")
    return ref


def _is_complete(path: Path, digest: str) -> bool:
    try:
        return (path / MARKER).read_text().strip() == digest
    except OSError:
        return False


@contextmanager
def _build_lock(cache: Path) -> Iterator[None]:
    """One build per cache at a time; the others wait and then find the result done."""
    with open(cache / "build.lock", "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _build_rootfs(inputs: Path, digest: str, final: Path, progress: Progress) -> None:
    tool = rootfs.require_tools()
    for stale in final.parent.glob("rootfs-*.*-*"):  # temp/old dirs of crashed builds (we hold the lock)
        progress(f"removing {stale.name} left by an interrupted build")
        rootfs.remove_tree(stale)
    temp = final.with_name(f"{final.name}.tmp-{os.getpid()}")
    packages = [line.split("#")[0].strip() for line in (inputs / "packages.txt").read_text().splitlines()]
    try:
        step = time.monotonic()
        rootfs.debootstrap(tool, temp, [p for p in packages if p], progress)
        progress(f"  debootstrap done ({time.monotonic() - step:.0f} s)")
        step = time.monotonic()
        rootfs.pip_install(temp, inputs / "requirements.txt", progress)
        progress(f"  pip done ({time.monotonic() - step:.0f} s)")
        rootfs.finish(temp, Path(MARKER), digest)
        if final.exists():  # --force: move the old one aside, publish, then delete it
            old = final.with_name(f"{final.name}.old-{os.getpid()}")
            final.rename(old)
            temp.rename(final)
            rootfs.remove_tree(old)
        else:
            temp.rename(final)
    except BaseException:
        rootfs.remove_tree(temp)
        raise
    progress(f"rootfs ready at {final}")


def _import(ref: ImageRef, *, force: bool, progress: Progress) -> None:
    """`tar -C rootfs -c . | docker import` through the SDK, unless the tag is already in the engine."""
    from agentjet.sandbox.docker.engine import connect

    try:
        client = connect(timeout_s=600)
    except SandboxUnavailable as exc:
        if os.environ.get("AGENTJET_REQUIRE_SANDBOX") == "1":
            raise
        progress(f"skipped the Docker import: {exc}")
        return
    try:
        old = _image_id(client, ref.tag)
        if old is not None and not force:
            progress(f"image {ref.tag} is already in the engine")
            return
        progress(f"importing {ref.rootfs.name} into the engine as {ref.tag}")
        repository, tag = ref.tag.rsplit(":", 1)
        with subprocess.Popen(
            ["tar", "--numeric-owner", "-C", str(ref.rootfs), "-cf", "-", "."], stdout=subprocess.PIPE
        ) as tar:
            client.api.import_image_from_stream(tar.stdout, repository=repository, tag=tag, changes=_IMAGE_CHANGES)
        if tar.returncode != 0:
            raise SandboxError(f"tar of {ref.rootfs} failed (exit {tar.returncode}); the import is incomplete")
        if _image_id(client, ref.tag) is None:
            raise SandboxError(f"the engine did not tag {ref.tag} after the import")
        if old is not None and old != _image_id(client, ref.tag):
            _remove_quietly(client, old)
    finally:
        client.close()


def _image_id(client: Any, tag: str) -> str | None:
    from docker.errors import ImageNotFound

    try:
        image = client.images.get(tag)
    except ImageNotFound:
        return None
    return str(image.id)


def _remove_quietly(client: Any, image_id: str) -> None:
    from docker.errors import APIError

    try:
        client.images.remove(image_id)
    except APIError:
        pass  # still used by a container; `docker image prune` later
