"""The built wheel is a working `agentjet` without the checkout: its package data, `--version`, models, a server.

The wheel is built from a copy of the tracked files (a stale `build/` in the checkout cannot leak into it) and
installed with `--no-deps` into a fresh venv whose only other path is the dev venv's site-packages, added by a
`.pth` line. Such a line does not run that site's own `.pth` files, so the checkout's editable install stays
out: `agentjet` can only come from the wheel, and every command runs from an empty folder.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import sysconfig
import time
import zipfile
from pathlib import Path

import httpx
import pytest

from tests.conftest import TOKEN

ROOT = Path(__file__).resolve().parents[2]
VERSION_LINE = next(line for line in (ROOT / "pyproject.toml").read_text().splitlines() if line.startswith("version"))
VERSION = VERSION_LINE.split('"')[1]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`pip wheel` of a copy of the tracked (and new, not ignored) files."""
    base = tmp_path_factory.mktemp("wheel")
    listed = subprocess.run(
        ["git", "-C", str(ROOT), "ls-files", "-co", "--exclude-standard", "-z"], capture_output=True, check=True
    )
    source = base / "source"
    for name in filter(None, listed.stdout.decode().split("\0")):
        if (ROOT / name).is_file():
            (source / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, source / name)
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(base / "dist"),
         str(source)],
        capture_output=True, text=True,
    )  # fmt: skip
    assert built.returncode == 0, built.stderr[-3000:]
    (found,) = (base / "dist").glob("agentjet-*.whl")
    return found


@pytest.fixture(scope="module")
def fresh_venv(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A new venv with the wheel installed (no deps), the dev venv's packages visible through one `.pth` line."""
    venv = tmp_path_factory.mktemp("venv") / "fresh"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    installed = subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", "--no-index", "-q", str(wheel)],
        capture_output=True, text=True,
    )  # fmt: skip
    assert installed.returncode == 0, installed.stderr[-3000:]
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    Path(site, "_dev_venv_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n", encoding="utf-8")
    return venv


def _env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    return {**env, "AGENTJET_CACHE_DIR": str(home / "cache"), "HOME": str(home), "AGENTJET_TOKEN": TOKEN}


def _agentjet(venv: Path, cwd: Path, *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(venv / "bin" / "agentjet"), *args], cwd=cwd, env=_env(cwd), capture_output=True, text=True,
        timeout=timeout,
    )  # fmt: skip


def test_the_wheel_holds_the_package_data_and_no_tests(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    expected = [
        "agentjet/sandbox/docker/image_definition/packages.txt",
        "agentjet/sandbox/docker/image_definition/requirements.txt",
        "agentjet/a3r/plan/example_plans/quick-tiny.md",
        "agentjet/nightly/references/merge.json",
        "agentjet/vibe/generate/templates/werewolves/client.py",
        "agentjet/chat/static/playground.js",
        "agentjet/deploy/files/Dockerfile",
        "agentjet/deploy/files/compose.yaml",
    ]
    missing = [name for name in expected if name not in names]
    assert not missing, f"not in the wheel: {missing}"
    assert not any(name.startswith(("tests/", "docs/", "campaigns/")) for name in names)
    assert f"agentjet-{VERSION}.dist-info/entry_points.txt" in names


def test_the_installed_agentjet_runs_outside_the_checkout(fresh_venv: Path, tmp_path: Path) -> None:
    where = subprocess.run(
        [str(fresh_venv / "bin" / "python"), "-c", "import agentjet; print(agentjet.__file__, agentjet.__version__)"],
        cwd=tmp_path, env=_env(tmp_path), capture_output=True, text=True, check=True,
    ).stdout.split()  # fmt: skip
    assert where[0].startswith(str(fresh_venv)) and where[1] == VERSION
    version = _agentjet(fresh_venv, tmp_path, "--version")
    assert version.returncode == 0 and version.stdout.strip() == f"agentjet {VERSION}"
    examples = _agentjet(fresh_venv, tmp_path, "campaign", "examples")
    assert examples.returncode == 0 and "quick-tiny" in examples.stdout and str(fresh_venv) in examples.stdout
    dry = _agentjet(fresh_venv, tmp_path, "campaign", "start", "quick-tiny", "--dry-run")
    assert dry.returncode == 0 and "nothing was started" in dry.stdout, dry.stderr
    vibe = _agentjet(fresh_venv, tmp_path, "vibe", "train a model to solve countdown", "--dry-run")
    assert vibe.returncode == 0 and "countdown" in vibe.stdout, vibe.stderr
    shipped = subprocess.run(
        [str(fresh_venv / "bin" / "python"), "-c",
         "from agentjet.sandbox.docker import image; print(image.inputs_dir()); print(image.inputs_hash()[:12])"],
        cwd=tmp_path, env=_env(tmp_path), capture_output=True, text=True, check=True,
    ).stdout.split()  # fmt: skip
    from agentjet.sandbox.docker import image

    assert image.inputs_dir().is_relative_to(ROOT)  # this process reads the checkout's copy ...
    assert shipped[0].startswith(str(fresh_venv))
    assert shipped[1] == image.inputs_hash()[:12]  # ... and the wheel's copy names the same sandbox image
    assert list(p.name for p in tmp_path.iterdir() if p.name != "cache") == []
    compose = _agentjet(fresh_venv, tmp_path, "deploy", "compose", "--out", str(tmp_path / "deploy"))
    assert compose.returncode == 0 and (tmp_path / "deploy" / "compose.yaml").is_file(), compose.stderr


def test_the_installed_agentjet_prepares_tiny_and_serves_it(fresh_venv: Path, tmp_path: Path, free_port: int) -> None:
    prepared = _agentjet(fresh_venv, tmp_path, "models", "prepare", "tiny")
    assert prepared.returncode == 0, prepared.stderr
    assert (tmp_path / "cache" / "models" / "tiny" / "config.json").is_file()
    assert prepared.stdout.strip() == str(tmp_path / "cache" / "models" / "tiny")
    server = subprocess.Popen(
        [str(fresh_venv / "bin" / "agentjet"), "server", "start", "--model", "tiny", "--port", str(free_port),
         "--state-dir", str(tmp_path / "state"), "--log-level", "WARNING"],
        cwd=tmp_path, env=_env(tmp_path), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                health = httpx.get(f"http://127.0.0.1:{free_port}/health", timeout=2)
                if health.status_code == 200 and httpx.get(f"http://127.0.0.1:{free_port}/ready").status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert server.poll() is None, server.communicate()[1][-2000:]
            assert time.monotonic() < deadline, "the installed server did not answer /health in 120 s"
            time.sleep(0.2)
        url, headers = f"http://127.0.0.1:{free_port}", {"Authorization": f"Bearer {TOKEN}"}
        opened = httpx.post(f"{url}/swarm/episodes", json={"task_id": "wheel"}, headers=headers, timeout=30)
        assert opened.status_code == 200, opened.text
        episode = opened.json()
        reply = httpx.post(
            f"{episode['base_url']}/chat/completions", headers={"Authorization": f"Bearer {episode['api_key']}"},
            json={"model": "tiny", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 4}, timeout=60,
        )  # fmt: skip
        assert reply.status_code == 200, reply.text
        assert reply.json()["choices"][0]["message"]["role"] == "assistant"
    finally:
        server.send_signal(signal.SIGINT)
        server.communicate(timeout=30)
    assert server.returncode in (0, 130)  # 130: stopped by the SIGINT, as after Ctrl-C
