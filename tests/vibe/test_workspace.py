"""The vibe workspace: a real git repo (GitPython) where every write, repair and decision is a commit."""

from __future__ import annotations

import os
import subprocess
from datetime import UTC, datetime
from pathlib import Path

import git
import pytest

from agentjet.vibe.errors import VibeError
from agentjet.vibe.workspace import AUTHOR, DECISIONS, Workspace


@pytest.fixture(autouse=True)
def _no_git_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No global or system git config: commits must work on a bare machine."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", os.devnull)
    for name in ("GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL", "EMAIL"):
        monkeypatch.delenv(name, raising=False)


def _git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True, text=True).stdout


def test_init_makes_a_repo_with_one_commit_by_the_vibe_author(tmp_path: Path) -> None:
    ws = Workspace(tmp_path / "run").init()
    assert (tmp_path / "run" / ".git").is_dir()
    assert _git(ws.path, "log", "--format=%an <%ae>|%cn|%s").splitlines() == [
        f"{AUTHOR.name} <{AUTHOR.email}>|{AUTHOR.name}|workspace: new vibe run"
    ]
    assert "state/" in (ws.path / ".gitignore").read_text()
    assert Workspace(tmp_path / "run").init().head() == ws.head()  # idempotent: no second commit
    assert len(ws.history()) == 1


def test_commit_returns_the_new_head_and_makes_no_empty_commits(tmp_path: Path) -> None:
    ws = Workspace(tmp_path / "run").init()
    first = ws.head()
    ws.write("client.py", "x = 1\n")
    sha = ws.commit("generate: client.py")
    assert sha == ws.head() != first
    assert _git(ws.path, "show", "--format=", "--name-only", "HEAD").split() == ["client.py"]
    assert ws.commit("nothing changed") == sha
    assert [subject for _, subject in ws.history()] == ["generate: client.py", "workspace: new vibe run"]


def test_commit_of_named_paths_leaves_the_others_uncommitted(tmp_path: Path) -> None:
    ws = Workspace(tmp_path / "run").init()
    ws.write("reward.py", "a\n")
    ws.write("notes/draft.md", "b\n")
    ws.commit("repair(validate): reward.py", ["reward.py"])
    assert _git(ws.path, "ls-files").split() == [".gitignore", "reward.py"]
    assert "notes/" in _git(ws.path, "status", "--porcelain")


def test_deleting_a_file_is_committed(tmp_path: Path) -> None:
    ws = Workspace(tmp_path / "run").init()
    ws.write("old.py", "a\n")
    ws.commit("add old.py")
    ws.file("old.py").unlink()
    ws.commit("remove old.py", ["old.py"])
    assert "old.py" not in _git(ws.path, "ls-files").split()


def test_run_state_is_never_committed(tmp_path: Path) -> None:
    ws = Workspace(tmp_path / "run").init()
    ws.write("state/journal.sqlite", "binary-ish\n")
    ws.write(".vibe/checkpoints.sqlite", "x\n")
    ws.write("client.py", "x\n")
    ws.commit("generate: client.py")
    assert _git(ws.path, "ls-files").split() == [".gitignore", "client.py"]


def test_log_decision_appends_and_commits(tmp_path: Path) -> None:
    ws = Workspace(tmp_path / "run").init()
    when = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    ws.log_decision("understand", "werewolves, wolves trained\nbecause the sentence says wolves", now=when)
    sha = ws.log_decision("launch_and_watch", "temperature 1.0 -> 1.2: zero reward variance", now=when)
    text = ws.read(DECISIONS)
    assert text.index("## understand (2026-01-02 03:04:05 UTC)") < text.index("## launch_and_watch")
    assert "because the sentence says wolves" in text
    assert ws.history(2) == [
        (sha, "decision(launch_and_watch): temperature 1.0 -> 1.2: zero reward variance"),
        (ws.history(2)[1][0], "decision(understand): werewolves, wolves trained"),
    ]
    assert git.Repo(ws.path).head.commit.author.email == AUTHOR.email


@pytest.mark.parametrize("bad", ["../escape.py", "/etc/passwd", ".git/config", ".git", "", ".", "a/../../x", "a\\b.py"])
def test_paths_outside_the_workspace_or_in_git_are_refused(tmp_path: Path, bad: str) -> None:
    ws = Workspace(tmp_path / "run").init()
    before = sorted(p.name for p in tmp_path.rglob("*"))
    with pytest.raises(VibeError, match="path"):
        ws.write(bad, "owned\n")
    assert sorted(p.name for p in tmp_path.rglob("*")) == before


def test_a_symlink_cannot_lead_a_write_outside(tmp_path: Path) -> None:
    ws = Workspace(tmp_path / "run").init()
    outside = tmp_path / "outside"
    outside.mkdir()
    (ws.path / "link").symlink_to(outside)
    with pytest.raises(VibeError, match="outside"):
        ws.write("link/evil.py", "owned\n")
    assert not (outside / "evil.py").exists()


def test_using_a_workspace_before_init_says_so(tmp_path: Path) -> None:
    with pytest.raises(VibeError, match="init"):
        Workspace(tmp_path / "nothing").head()
