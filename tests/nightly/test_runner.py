"""The runner measures each commit with its own code in its own worktree; a broken build is never a regression."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from agentjet.nightly.history import History
from agentjet.nightly.runner import RunOptions, record_revision
from agentjet.nightly.suites import SUITES, metrics_of, probes_for
from agentjet.nightly.worktree import InfraError, Worktrees, deps_key, resolve, revisions
from tests.nightly.constructed import build_history

QUIET = print  # progress lines


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout.strip()


def _commit(repo: Path, subject: str) -> None:
    _git(repo, "add", "-A")
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@localhost", "commit", "-q", "-m", subject)


@pytest.fixture(scope="module")
def scratch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_history(tmp_path_factory.mktemp("nightly") / "repo", unchanged=1).repo


def test_revisions_of_a_range_are_oldest_first_and_exclude_the_start(scratch: Path) -> None:
    shas = _git(scratch, "rev-list", "--reverse", "HEAD").split()
    chosen = revisions(scratch, f"{shas[0]}..HEAD")
    assert [r.sha for r in chosen] == shas[1:]
    assert [r.order for r in chosen] == [2, 3, 4]
    assert chosen[-1].subject.startswith("trainer:")
    assert [r.sha for r in revisions(scratch, "HEAD~1")] == [shas[-2]]


@pytest.mark.parametrize("spec", ["nope", "HEAD..nope", "deadbeef" * 5, "HEAD..HEAD"])
def test_bad_revisions_are_one_sentence(scratch: Path, spec: str) -> None:
    with pytest.raises(ValueError, match="not a commit|holds no commits"):
        revisions(scratch, spec)


def test_a_worktree_holds_the_commit_and_is_reused(scratch: Path, tmp_path: Path) -> None:
    worktrees = Worktrees(scratch, tmp_path / "cache")
    first = resolve(scratch, "HEAD~1")
    tree = worktrees.checkout(first)
    assert _git(tree, "rev-parse", "HEAD") == first.sha
    assert "/ tokens" in (tree / "agentjet/core/step/trainer.py").read_text()  # the loss change is not there yet
    (tree / "marker").write_text("kept")
    assert worktrees.checkout(first) == tree and (tree / "marker").is_file()  # reused, not re-created


def test_same_dependencies_reuse_the_running_interpreter(scratch: Path, tmp_path: Path) -> None:
    worktrees = Worktrees(scratch, tmp_path / "cache")
    tree = worktrees.checkout(resolve(scratch, "HEAD"))
    assert deps_key(tree) == deps_key(Path(__file__).resolve().parents[2])
    assert worktrees.python(tree, QUIET) == Path(sys.executable)


def test_changed_dependencies_build_one_environment_with_the_commits_make_setup(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "pyproject.toml").write_text('[project]\nname = "x"\ndependencies = ["other==1"]\n')
    (repo / "Makefile").write_text(  # the commit's own recipe: here a venv that is the running interpreter
        "setup:\n\tmkdir -p $(VENV)/bin && ln -sf "
        + sys.executable
        + " $(VENV)/bin/python && echo built >> "
        + str(tmp_path / "builds")
        + "\n"
    )
    _git(tmp_path, "init", "-q", str(repo))
    _commit(repo, "one")
    worktrees = Worktrees(repo, tmp_path / "cache")
    tree = worktrees.checkout(resolve(repo, "HEAD"))
    python = worktrees.python(tree, QUIET)
    assert python.parent.parent.parent.name == "envs" and python.resolve() == Path(sys.executable).resolve()
    assert worktrees.python(tree, QUIET) == python  # built once, then reused
    assert (tmp_path / "builds").read_text().count("built") == 1
    (repo / "Makefile").write_text("setup:\n\texit 3\n")
    (repo / "pyproject.toml").write_text('[project]\nname = "x"\ndependencies = ["other==2"]\n')
    _commit(repo, "two")
    broken = worktrees.checkout(resolve(repo, "HEAD"))
    with pytest.raises(InfraError, match="make setup, exit 2"):
        worktrees.python(broken, QUIET)


def test_a_commit_that_cannot_be_measured_is_an_infrastructure_failure(scratch: Path, tmp_path: Path) -> None:
    clone = tmp_path / "clone"
    _git(tmp_path, "clone", "-q", str(scratch), str(clone))
    (clone / "agentjet/nightly/measure.py").unlink()  # an old commit from before the nightly existed
    _commit(clone, "no nightly here")
    history = History(tmp_path / "h.db")
    record = record_revision(
        history,
        Worktrees(clone, tmp_path / "cache"),
        resolve(clone, "HEAD"),
        RunOptions(metrics=("invariant.merge",)),
        QUIET,
    )
    assert record.status == "infra_failure" and "measurement exited 1" in (record.error or "")
    assert "No module named agentjet.nightly.measure" in (record.error or "")
    assert history.runs()[0].status == "infra_failure" and not history.runs()[0].samples


def test_suites_declare_every_metric_once_with_unit_direction_and_repeats() -> None:
    quick, full = metrics_of(SUITES["quick"]()), metrics_of(SUITES["full"]())
    assert set(quick) < set(full)
    assert {"server.latency_ratio", "server.cpu_ratio", "merging.speedup_tiny", "sandbox.start_ratio"} <= set(quick)
    assert any(name.startswith("invariant.") for name in quick)
    assert any(name.endswith("smollm2") for name in full) and not any(name.endswith("smollm2") for name in quick)
    for metric in full.values():
        assert metric.unit and metric.direction in ("higher", "lower") and metric.repeats >= 1
        assert (metric.test == "exact") == (metric.kind == "quality"), metric.name
    with pytest.raises(ValueError, match="no metric nope"):
        probes_for("quick", ["nope"])
    with pytest.raises(ValueError, match="unknown suite"):
        probes_for("weekly")
    assert [p.name for p in probes_for("quick", ["server.cpu_ratio"])] == ["request-path"]


def test_only_the_dependency_tables_decide_the_environment(tmp_path: Path) -> None:
    def key(pyproject: str, constraints: str = "a==1\n") -> str:
        (tmp_path / "pyproject.toml").write_text(pyproject)
        (tmp_path / "constraints.txt").write_text(constraints)
        return deps_key(tmp_path)

    base = '[project]\nname = "x"\ndependencies = ["a==1"]\n'
    same = key(base)
    assert key(base + "\n[tool.ruff]\nline-length = 120\n") == same  # tool settings, package data: same venv
    assert key(base.replace("a==1", "a==2")) != same
    assert key(base, "a==1\nb==3\n") != same
    assert key(base + '[project.optional-dependencies]\ndev = ["pytest==9"]\n') != same
