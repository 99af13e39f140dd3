"""A vibe run's workspace: a folder that is a git repo, where every generated file, repair and decision is a commit.

The history is the audit trail of a run (what was generated, what failed, what was repaired and
why), so nothing is written without a commit following it. Commits are made with GitPython under a
fixed author, so no global git configuration is needed. Paths given to `write` come from LLM
replies too: they must stay inside the workspace and out of `.git`.
"""

from __future__ import annotations

import threading
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath

import git

from agentjet.vibe.errors import VibeError

__all__ = ["AUTHOR", "DECISIONS", "IGNORED", "Commit", "Workspace"]

AUTHOR = git.Actor("AgentJet vibe", "vibe@agentjet.local")
DECISIONS = "decisions.md"
# run state, not generated files (a training held beside checks that failed is moved to state.discarded/)
IGNORED = ("state/", "state.discarded/", ".vibe/", "__pycache__/", "*.pyc", ".pytest_cache/")

Commit = tuple[str, str]  # (sha, first line of the message)
_DECISIONS_HEADER = "# Decisions\n\nWhat each step of the run decided, and why.\n"


class Workspace:
    """The workspace at `path`. Call `init()` once (idempotent) before writing. Thread-safe."""

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path).resolve()
        self._lock = threading.Lock()
        self._repo: git.Repo | None = None

    @property
    def repo(self) -> git.Repo:
        if self._repo is None:
            try:
                self._repo = git.Repo(self.path)
            except (git.InvalidGitRepositoryError, git.NoSuchPathError) as exc:
                raise VibeError(f"{self.path} is not a vibe workspace yet: call Workspace.init() first") from exc
        return self._repo

    def init(self) -> Workspace:
        """Create the folder and its repo (with a .gitignore for run state) unless they exist."""
        with self._lock:
            if (self.path / ".git").is_dir():
                self._repo = git.Repo(self.path)
                return self
            self.path.mkdir(parents=True, exist_ok=True)
            self._repo = git.Repo.init(self.path)
            with self._repo.config_writer() as config:  # so a person can commit here by hand too
                config.set_value("user", "name", AUTHOR.name)
                config.set_value("user", "email", AUTHOR.email)
            (self.path / ".gitignore").write_text("".join(f"{line}\n" for line in IGNORED))
        self.commit("workspace: new vibe run", [".gitignore"])
        return self

    def file(self, relpath: str) -> Path:
        """The absolute path of `relpath`; VibeError if it would leave the workspace or touch `.git`."""
        pure = PurePosixPath(relpath)
        if not relpath or pure.is_absolute() or ".." in pure.parts or "\\" in relpath or pure == PurePosixPath("."):
            raise VibeError(f"file path {relpath!r} must be a relative path inside the workspace")
        if pure.parts[0] == ".git":
            raise VibeError(f"file path {relpath!r} is inside .git: generated files may not touch the repo itself")
        target = self.path.joinpath(*pure.parts)
        if not target.resolve().is_relative_to(self.path):  # a symlink in the way
            raise VibeError(f"file path {relpath!r} resolves outside the workspace")
        return target

    def write(self, relpath: str, text: str) -> Path:
        """Write a text file (parents created). Not committed: call `commit` after a set of writes."""
        target = self.file(relpath)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
        return target

    def read(self, relpath: str) -> str:
        return self.file(relpath).read_text()

    def exists(self, relpath: str) -> bool:
        return self.file(relpath).is_file()

    def commit(self, message: str, paths: list[str] | None = None) -> str:
        """Commit `paths` (None: every change in the workspace, deletions included); returns the sha.

        With nothing changed, no empty commit is made and the current head is returned."""
        if not message.strip():
            raise VibeError("a commit needs a message")
        with self._lock:
            repo = self.repo
            targets = [str(self.file(p).relative_to(self.path)) for p in paths] if paths else ["."]
            repo.git.add("-A", "--", *targets)
            has_head = repo.head.is_valid()
            if has_head and not repo.index.diff("HEAD"):
                return repo.head.commit.hexsha
            if not has_head and not repo.index.entries:
                raise VibeError(f"nothing to commit for {message!r}: write a file first")
            commit = repo.index.commit(message.strip(), author=AUTHOR, committer=AUTHOR)
            return commit.hexsha

    def log_decision(self, node: str, text: str, *, now: datetime | None = None) -> str:
        """Append a decision of graph node `node` to decisions.md and commit it; returns the sha."""
        stamp = (now or datetime.now(UTC)).strftime("%Y-%m-%d %H:%M:%S UTC")
        path = self.file(DECISIONS)
        with self._lock:
            previous = path.read_text() if path.is_file() else _DECISIONS_HEADER
            path.write_text(f"{previous.rstrip()}\n\n## {node} ({stamp})\n\n{text.strip()}\n")
        first = text.strip().splitlines()[0] if text.strip() else "(empty)"
        return self.commit(f"decision({node}): {first[:100]}", [DECISIONS])

    def head(self) -> str | None:
        """The sha of the last commit, or None before the first."""
        repo = self.repo
        return repo.head.commit.hexsha if repo.head.is_valid() else None

    def history(self, limit: int | None = None) -> list[Commit]:
        """(sha, subject) of the commits, newest first."""
        repo = self.repo
        if not repo.head.is_valid():
            return []
        return [(c.hexsha, str(c.summary)) for c in repo.iter_commits(max_count=limit)]
