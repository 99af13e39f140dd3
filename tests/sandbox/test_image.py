"""The sandbox image: content-hash tags, `find()` and its overrides, crash safety, and the built image itself.

Nothing here rebuilds the real image (`make test` builds it once before pytest); the failing
build points debootstrap at a refused port on loopback, so it fails fast and sends no packet out.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentjet.cli.main import app
from agentjet.sandbox.docker import image, rootfs
from agentjet.sandbox.docker.engine import connect
from agentjet.sandbox.errors import SandboxError, SandboxUnavailable

_OVERRIDES = ("AGENTJET_SANDBOX_IMAGE", "AGENTJET_SANDBOX_ROOTFS", "AGENTJET_SANDBOX_INPUTS")


@pytest.fixture
def inputs(tmp_path: Path) -> Path:
    """A private copy of `image_definition/` to edit."""
    return Path(shutil.copytree(image.inputs_dir(), tmp_path / "inputs"))


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty cache dir and no image overrides: `find()` sees only what a test puts there."""
    for name in _OVERRIDES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AGENTJET_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache" / "sandbox"


def _fake_rootfs(path: Path, marker: str | None) -> Path:
    (path / "usr/bin").mkdir(parents=True)
    (path / "usr/bin/python3").write_text("")
    if marker is not None:
        (path / image.MARKER).parent.mkdir(parents=True, exist_ok=True)
        (path / image.MARKER).write_text(marker + "\n")
    return path


def test_inputs_hash_follows_content_only(inputs: Path) -> None:
    first = image.inputs_hash(inputs)
    assert first == image.inputs_hash(image.inputs_dir())  # a copy elsewhere: same hash
    os.utime(inputs / "requirements.txt", (1, 1))
    assert image.inputs_hash(inputs) == first  # mtimes do not count

    requirements = inputs / "requirements.txt"
    original = requirements.read_text()
    requirements.write_text(original.replace("httpx==0.28.1", "httpx==0.28.0"))
    assert image.inputs_hash(inputs) != first
    requirements.write_text(original)
    assert image.inputs_hash(inputs) == first

    (inputs / "extra.txt").write_text("x")
    assert image.inputs_hash(inputs) != first  # a new file is a new input
    (inputs / "extra.txt").unlink()
    (inputs / "packages.txt").rename(inputs / "packages2.txt")
    with pytest.raises(SandboxError, match="packages.txt"):
        image.inputs_hash(inputs)


def test_inputs_dir_override_changes_the_tag(inputs: Path, cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    before = image.expected_ref()
    (inputs / "packages.txt").write_text("python3\nca-certificates\nprocps\n")
    monkeypatch.setenv("AGENTJET_SANDBOX_INPUTS", str(inputs))
    after = image.expected_ref()
    assert after.tag == f"agentjet/sandbox:{image.inputs_hash(inputs)[:12]}" != before.tag
    assert after.rootfs == cache / f"rootfs-{image.inputs_hash(inputs)[:12]}"


def test_find_ignores_missing_and_half_built_rootfs(cache: Path) -> None:
    digest = image.inputs_hash()
    final = cache / f"rootfs-{digest[:12]}"
    assert image.find() is None

    _fake_rootfs(cache / f"rootfs-{digest[:12]}.tmp-4242", marker=digest)  # a build that never got renamed
    assert image.find() is None
    _fake_rootfs(final, marker=None)  # renamed by hand, no marker
    assert image.find() is None
    (final / image.MARKER).parent.mkdir(parents=True)
    (final / image.MARKER).write_text("0" * 64)  # another build's marker
    assert image.find() is None

    (final / image.MARKER).write_text(digest + "\n")
    assert image.find() == image.ImageRef(tag=f"agentjet/sandbox:{digest[:12]}", rootfs=final)


def test_find_honours_overrides(cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    default_tag = image.expected_ref().tag
    empty = tmp_path / "empty"
    empty.mkdir()
    monkeypatch.setenv("AGENTJET_SANDBOX_ROOTFS", str(empty))
    assert image.find() is None  # no python3 in it

    mine = _fake_rootfs(tmp_path / "mine", marker=None)  # a trusted rootfs needs no marker
    monkeypatch.setenv("AGENTJET_SANDBOX_ROOTFS", str(mine))
    assert image.find() == image.ImageRef(tag=default_tag, rootfs=mine)

    monkeypatch.setenv("AGENTJET_SANDBOX_IMAGE", "agentjet/sandbox:dev")
    assert image.find() == image.ImageRef(tag="agentjet/sandbox:dev", rootfs=mine)
    monkeypatch.delenv("AGENTJET_SANDBOX_ROOTFS")
    ref = image.find()  # docker-only use: the tag without a rootfs
    assert ref is not None and ref.tag == "agentjet/sandbox:dev" and not ref.rootfs.exists()


def test_debian_mirror_from_host_sources(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AGENTJET_DEBIAN_MIRROR", raising=False)
    apt = tmp_path / "apt"
    (apt / "sources.list.d").mkdir(parents=True)
    assert rootfs.debian_mirror(apt) == "http://deb.debian.org/debian"
    (apt / "sources.list").write_text("deb [arch=amd64] http://legacy.example/debian bookworm main\n")
    assert rootfs.debian_mirror(apt) == "http://legacy.example/debian"
    (apt / "sources.list.d/debian.sources").write_text(
        "Types: deb\nURIs: http://sec.example/debian-security\nSuites: bookworm-security\nComponents: main\n\n"
        "Types: deb\n# a comment\nURIs: http://mirror.example/debian\nSuites: bookworm bookworm-updates\n"
    )
    assert rootfs.debian_mirror(apt) == "http://mirror.example/debian"
    monkeypatch.setenv("AGENTJET_DEBIAN_MIRROR", "http://override.example/debian")
    assert rootfs.debian_mirror(apt) == "http://override.example/debian"


def test_build_skips_a_complete_rootfs(cache: Path) -> None:
    digest = image.inputs_hash()
    final = _fake_rootfs(cache / f"rootfs-{digest[:12]}", marker=digest)
    result = CliRunner().invoke(app, ["sandbox", "build", "--no-docker"])
    assert result.exit_code == 0, result.output
    assert f"agentjet/sandbox:{digest[:12]}" in result.stdout
    assert "up to date" in result.output
    assert (final / "usr/bin/python3").read_text() == ""  # untouched: no debootstrap ran


_ROOT_WITH_DEBOOTSTRAP = os.geteuid() == 0 and shutil.which("debootstrap", path="/usr/sbin:/usr/bin:/sbin") is not None


@pytest.mark.skipif(not _ROOT_WITH_DEBOOTSTRAP, reason="needs root and debootstrap")
def test_failed_build_leaves_nothing_find_accepts(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    digest = image.inputs_hash()
    stale = cache / f"rootfs-{digest[:12]}.tmp-99999"  # left by a crashed build
    _fake_rootfs(stale, marker=digest)
    monkeypatch.setenv("AGENTJET_DEBIAN_MIRROR", "http://127.0.0.1:9/debian")  # refused on loopback
    lines: list[str] = []
    with pytest.raises(SandboxError, match="debootstrap failed"):
        image.build(lines.append, docker=False)
    assert any("interrupted build" in line for line in lines)
    assert sorted(p.name for p in cache.iterdir()) == ["build.lock"]
    assert image.find() is None


@pytest.mark.skipif(os.geteuid() != 0, reason="mounting needs root")
def test_remove_tree_detaches_mounts_first(tmp_path: Path) -> None:
    tree = tmp_path / "rootfs-x.tmp-1"
    (tree / "proc").mkdir(parents=True)
    subprocess.run(["mount", "-t", "tmpfs", "tmpfs", str(tree / "proc")], check=True)
    (tree / "proc/file").write_text("on the mount")
    rootfs.remove_tree(tree)
    assert not tree.exists()
    assert str(tree) not in Path("/proc/self/mountinfo").read_text()


@pytest.mark.docker
def test_built_image_imports_client_deps_without_network() -> None:
    required = os.environ.get("AGENTJET_REQUIRE_SANDBOX") == "1"
    try:
        client = connect(timeout_s=30)
    except SandboxUnavailable as exc:
        (pytest.fail if required else pytest.skip)(str(exc))
    tag = image.expected_ref().tag
    try:
        if not client.images.list(name=tag):
            (pytest.fail if required else pytest.skip)(f"{tag} is not built: run `agentjet sandbox build`")
        code = "import openai, httpx, pydantic, yaml, langgraph, os; print(os.getuid(), os.listdir('/sys/class/net'))"
        output = client.containers.run(
            tag,
            ["python3", "-c", code],
            network_mode="none",
            read_only=True,
            user="65534:65534",
            cap_drop=["ALL"],
            remove=True,
        )
    finally:
        client.close()
    assert output.decode().split() == ["65534", "['lo']"]
