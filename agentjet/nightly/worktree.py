"""A commit's own checkout and Python environment, so each commit is measured with its own code.

Checkouts are `git worktree`s under the nightly cache, one per commit, reused when the commit was
seen before. Environments are keyed by the hash of the commit's dependencies (`pyproject.toml`'s dependency
tables and `constraints.txt`): a commit whose dependencies match the running checkout's measures with the
running interpreter; one whose dependencies changed gets a venv of its own, built once by that
commit's `make setup` (its own recipe), and reused by every commit with the same dependencies.
The commit's code always comes first on `sys.path` (PYTHONPATH), whatever the venv holds.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tomllib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

__all__ = ["InfraError", "Revision", "Worktrees", "deps_key", "git", "resolve", "revisions"]

DEPENDENCY_FILES = ("pyproject.toml", "constraints.txt")
Progress = Callable[[str], None]


class InfraError(RuntimeError):
    """The harness could not measure (git, the environment, a crash outside any probe): never a regression."""


@dataclass(frozen=True)
class Revision:
    sha: str
    subject: str
    order: int  # commits reachable from it: orders the history


def git(repo: Path, *args: str, check: bool = True) -> str:
    done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True)
    if check and done.returncode != 0:
        raise InfraError(f"git {' '.join(args)} failed: {(done.stderr or done.stdout).strip().splitlines()[-1:]}")
    return done.stdout.strip()


def resolve(repo: Path, rev: str) -> Revision:
    done = subprocess.run(
        ["git", "-C", str(repo), "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}"],
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        raise ValueError(f"{rev!r} is not a commit of {repo}")
    sha = done.stdout.strip()
    return Revision(sha, git(repo, "log", "-1", "--format=%s", sha), int(git(repo, "rev-list", "--count", sha)))


def revisions(repo: Path, spec: str) -> list[Revision]:
    """`A..B`: every commit after A up to B, oldest first (first-parent line); otherwise the one commit."""
    if ".." not in spec:
        return [resolve(repo, spec)]
    start, _, end = spec.partition("..")
    resolve(repo, start or "HEAD"), resolve(repo, end or "HEAD")  # clear errors for either end
    shas = git(repo, "rev-list", "--reverse", "--first-parent", f"{start or 'HEAD'}..{end or 'HEAD'}").split()
    if not shas:
        raise ValueError(f"the range {spec!r} holds no commits")
    return [resolve(repo, sha) for sha in shas]


def _dependency_text(tree: Path, name: str) -> str:
    """What of the file decides the environment: pyproject's dependency tables (not its tool settings), all of
    constraints.txt. An unreadable pyproject counts whole."""
    path = tree / name
    if not path.is_file():
        return ""
    if name != "pyproject.toml":
        return path.read_text()
    try:
        data = tomllib.loads(path.read_text())
    except tomllib.TOMLDecodeError:
        return path.read_text()
    project = data.get("project", {})
    wanted = {
        "requires-python": project.get("requires-python"),
        "dependencies": project.get("dependencies"),
        "optional-dependencies": project.get("optional-dependencies"),
        "build-system": data.get("build-system"),
    }
    return json.dumps(wanted, sort_keys=True)


def deps_key(tree: Path) -> str:
    """The environment's identity: equal keys share one venv."""
    digest = hashlib.sha256()
    for name in DEPENDENCY_FILES:
        digest.update(f"{name}\0{_dependency_text(tree, name)}\0".encode())
    return digest.hexdigest()[:16]


def _running_checkout() -> Path | None:
    root = Path(__file__).resolve().parents[2]
    return root if (root / "pyproject.toml").is_file() else None


@dataclass
class Worktrees:
    """Checkouts and environments under `cache` (default ~/.cache/agentjet/nightly)."""

    repo: Path
    cache: Path

    def checkout(self, revision: Revision) -> Path:
        path = self.cache / "trees" / revision.sha[:12]
        if path.is_dir() and git(path, "rev-parse", "HEAD", check=False) == revision.sha:
            return path
        if path.exists():
            git(self.repo, "worktree", "remove", "--force", str(path), check=False)
            shutil.rmtree(path, ignore_errors=True)
        git(self.repo, "worktree", "prune")
        path.parent.mkdir(parents=True, exist_ok=True)
        git(self.repo, "worktree", "add", "--detach", "--force", str(path), revision.sha)
        return path

    def remove(self, path: Path) -> None:
        git(self.repo, "worktree", "remove", "--force", str(path), check=False)
        shutil.rmtree(path, ignore_errors=True)

    def python(self, tree: Path, progress: Progress) -> Path:
        """The interpreter to measure `tree` with (see the module docstring)."""
        key, running = deps_key(tree), _running_checkout()
        if running is not None and deps_key(running) == key:
            return Path(sys.executable)
        venv = self.cache / "envs" / key
        stamp = venv / ".agentjet-nightly-ready"
        if stamp.is_file():
            return venv / "bin" / "python"
        progress(f"dependencies changed ({key}): building an environment with the commit's `make setup`")
        shutil.rmtree(venv, ignore_errors=True)
        done = subprocess.run(
            ["make", "-C", str(tree), "setup", f"VENV={venv}"],
            capture_output=True,
            text=True,
            env={**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1"},
        )
        if done.returncode != 0:
            tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
            raise InfraError(
                f"building the environment failed (make setup, exit {done.returncode}): {' | '.join(tail)}"
            )
        stamp.write_text(key + "\n")
        return venv / "bin" / "python"
