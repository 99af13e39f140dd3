"""`agentjet nightly bisect METRIC --good REV --bad REV`: the first commit where METRIC went bad.

Both ends are measured first (with repeats): the bad end must really be worse than the good
one by the metric's minimum effect, or there is nothing to look for. Then `git bisect run`, in a
scratch worktree, calls `python -m agentjet.nightly.probe` at each step: it re-measures the
checked-out commit and answers 0 (good: closer to the good end), 1 (bad: at least half the
good-to-bad effect and the minimum effect) or 125 (skip: the commit could not be measured).
"""

from __future__ import annotations

import json
import os
import re
import statistics
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentjet.nightly.metrics import Metric
from agentjet.nightly.runner import RunOptions, measure_revision
from agentjet.nightly.worktree import InfraError, Revision, Worktrees, git, resolve

__all__ = ["BisectResult", "bisect", "classify"]

Progress = Callable[[str], None]
_FIRST_BAD = re.compile(r"^([0-9a-f]{40}) is the first bad commit", re.MULTILINE)


@dataclass(frozen=True)
class BisectResult:
    metric: Metric
    first_bad: Revision
    good: list[float]
    bad: list[float]
    steps: list[dict[str, Any]]  # each probed commit: sha, subject, samples, answer
    seconds: float

    def to_dict(self) -> dict[str, Any]:
        return {
            "metric": self.metric.to_dict(),
            "first_bad": {"sha": self.first_bad.sha, "subject": self.first_bad.subject},
            "good_samples": self.good,
            "bad_samples": self.bad,
            "steps": self.steps,
            "seconds": round(self.seconds, 1),
        }


def classify(metric: Metric, samples: list[float], good: list[float], bad: list[float]) -> int:
    """0 good, 1 bad: bad when at least half the good-to-bad effect and at least the metric's minimum."""
    full = metric.badness(statistics.median(bad), statistics.median(good))
    here = metric.badness(statistics.median(samples), statistics.median(good))
    return 1 if here >= max(metric.min_effect, full / 2) else 0


def _measured(
    worktrees: Worktrees, revision: Revision, options: RunOptions, progress: Progress
) -> tuple[Metric, list[float]]:
    record = measure_revision(worktrees, revision, options, progress)
    name = options.metrics[0]
    if record.status != "ok" or name not in record.samples:
        why = record.error or record.details.get("errors") or "no samples"
        raise InfraError(f"{revision.sha[:10]} could not be measured: {why}")
    return record.metrics[name], list(record.samples[name])


def bisect(
    repo: Path,
    metric: str,
    good: str,
    bad: str,
    *,
    worktrees: Worktrees,
    suite: str,
    repeats: int | None,
    progress: Progress,
) -> BisectResult:
    started = time.perf_counter()
    good_rev, bad_rev = resolve(repo, good), resolve(repo, bad)
    if subprocess.run(["git", "-C", str(repo), "merge-base", "--is-ancestor", good_rev.sha, bad_rev.sha]).returncode:
        raise ValueError(f"--good {good} is not an ancestor of --bad {bad}")
    options = RunOptions(suite=suite, metrics=(metric,), repeats=repeats)
    progress(f"measuring the good end {good_rev.sha[:10]} and the bad end {bad_rev.sha[:10]}")
    declared, good_samples = _measured(worktrees, good_rev, options, progress)
    _, bad_samples = _measured(worktrees, bad_rev, options, progress)
    effect = declared.badness(statistics.median(bad_samples), statistics.median(good_samples))
    if effect < declared.min_effect:
        raise ValueError(
            f"{metric} is not worse at {bad} than at {good} (effect {effect:+.3g}, minimum {declared.min_effect:g}): "
            "nothing to bisect"
        )
    scratch = worktrees.cache / "bisect" / uuid.uuid4().hex[:8]
    scratch.parent.mkdir(parents=True, exist_ok=True)
    git(repo, "worktree", "add", "--detach", str(scratch), bad_rev.sha)
    config = scratch.parent / f"{scratch.name}.json"
    log = scratch.parent / f"{scratch.name}.jsonl"
    config.write_text(
        json.dumps(
            {
                "metric": declared.to_dict(),
                "suite": suite,
                "repeats": repeats,
                "good": good_samples,
                "bad": bad_samples,
                "log": str(log),
                "repo": str(repo),
                "cache": str(worktrees.cache),
            }
        )
    )
    ours = str(Path(__file__).resolve().parents[2])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (ours, os.environ.get("PYTHONPATH", "")) if p)}
    try:
        git(scratch, "bisect", "start", bad_rev.sha, good_rev.sha)
        done = subprocess.run(
            ["git", "-C", str(scratch), "bisect", "run", sys.executable, "-m", "agentjet.nightly.probe", str(config)],
            capture_output=True,
            text=True,
            env=env,
        )
        found = _FIRST_BAD.search(done.stdout)
        if not found:
            tail = " | ".join((done.stdout + done.stderr).strip().splitlines()[-4:])
            raise InfraError(f"git bisect run did not name a first bad commit: {tail}")
        steps = [json.loads(line) for line in log.read_text().splitlines()] if log.is_file() else []
        for step in steps:
            progress(f"probed {step['sha'][:10]} {step['subject'][:50]!r}: {step['answer']}")
    finally:
        git(scratch, "bisect", "reset", check=False)
        worktrees.remove(scratch)
        config.unlink(missing_ok=True)
        log.unlink(missing_ok=True)
    return BisectResult(
        declared, resolve(repo, found.group(1)), good_samples, bad_samples, steps, time.perf_counter() - started
    )
