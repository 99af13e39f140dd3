"""The nightly end to end on a constructed history: it flags exactly the two bad commits, and bisect names each.

A scratch copy of this checkout gets no-op commits, then a commit that burns 4 ms of CPU per
chat call in the server's request path, then one that changes the trainer's loss normalisation.
`agentjet nightly run` over the range must flag those two commits and no other; `agentjet
nightly bisect` must name each as the first bad commit of its metric. Real git, real worktrees,
real servers on loopback, real seeded training on `tiny`.

The module is `heavy` (about 4 minutes: CI runs it in `make test-heavy`, after the default run). It keeps
the history small (one unchanged commit) and bisects the training-quality change; bisecting the
slowdown and the refusal re-measure more commits and are also marked slow (`make test-all`;
`scripts/nightly_constructed_history.py` runs the whole demonstration).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from agentjet.nightly.history import History
from tests.nightly.constructed import Constructed, build_history

pytestmark = pytest.mark.heavy

METRICS = ("server.cpu_ratio", "invariant.prefix")


def _nightly(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "agentjet.cli.main", "nightly", *args]
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=900)


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> tuple[Constructed, Path, Path]:
    root = tmp_path_factory.mktemp("constructed")
    made = build_history(root / "repo", unchanged=1)
    store, cache = root / "history.db", root / "cache"
    common = ["--store", str(store), "--cache", str(cache), "--repo", str(made.repo), "--repeats", "5"]
    common += [arg for name in METRICS for arg in ("--metric", name)]
    first = _nightly("run", "--rev", made.base, "--json", *common, cwd=root)
    assert first.returncode == 0, first.stderr[-2000:]
    ranged = _nightly(
        "run", "--rev", f"{made.base}..HEAD", "--json", "--report", str(root / "report"), *common, cwd=root
    )
    assert ranged.returncode == 1, ranged.stderr[-2000:]  # 1: a regression among the commits just measured
    (root / "run.json").write_text(ranged.stdout)
    return made, store, root


def test_run_flags_exactly_the_slowdown_and_the_loss_change(history: tuple[Constructed, Path, Path]) -> None:
    made, store, root = history
    result = json.loads((root / "run.json").read_text())
    flagged = {(r["metric"], r["commit"]) for r in result["regressions"]}
    assert flagged == {("server.cpu_ratio", made.slow), ("invariant.prefix", made.loss)}
    runs = History(store).runs()
    assert [r.commit for r in runs] == made.shas and all(r.status == "ok" for r in runs)
    assert all(set(r.samples) == set(METRICS) and len(r.samples["server.cpu_ratio"]) == 5 for r in runs)
    page = (root / "report" / "index.html").read_text()
    assert made.slow[:7] in page and "regression" in page


def _bisect_names(history: tuple[Constructed, Path, Path], metric: str, expected: str) -> None:
    made, _store, root = history
    done = _nightly(
        "bisect", metric, "--good", made.base, "--bad", "HEAD", "--repo", str(made.repo), "--repeats", "5",
        "--cache", str(root / "cache"), "--json", cwd=root,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    found = json.loads(done.stdout)
    assert found["first_bad"]["sha"] == expected, found
    assert found["steps"] and all(s["answer"] in ("good", "bad") for s in found["steps"])


def test_bisect_names_the_loss_change(history: tuple[Constructed, Path, Path]) -> None:
    _bisect_names(history, "invariant.prefix", history[0].loss)


@pytest.mark.slow
def test_bisect_names_the_slowdown(history: tuple[Constructed, Path, Path]) -> None:
    _bisect_names(history, "server.cpu_ratio", history[0].slow)


@pytest.mark.slow
def test_bisect_refuses_when_the_bad_end_is_not_worse(history: tuple[Constructed, Path, Path]) -> None:
    made, _store, root = history
    done = _nightly(
        "bisect", "invariant.prefix", "--good", made.base, "--bad", made.slow, "--repo", str(made.repo),
        "--cache", str(root / "cache"), cwd=root,
    )  # fmt: skip
    assert done.returncode == 2 and "nothing to bisect" in done.stderr
