"""`agentjet nightly run`: measure commits in their own worktrees and append every sample to the history.

Each commit is measured by `python -m agentjet.nightly.measure` run inside its checkout with its
own code, in a child process (a crash or a hang costs that commit's record, not the night). What
the harness could not do — check out, build, start the measurement, every probe failing — is
stored as an `infra_failure` with the reason; a probe that failed while others ran is kept in the
run's details as that probe's error, its metrics simply have no samples that night.
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from agentjet.nightly.history import History
from agentjet.nightly.machine import fingerprint, installed_packages, machine_info
from agentjet.nightly.metrics import Metric, RunRecord
from agentjet.nightly.worktree import InfraError, Revision, Worktrees

__all__ = ["RunOptions", "measure_revision", "measure_tree", "record_revision"]

Progress = Callable[[str], None]


@dataclass(frozen=True)
class RunOptions:
    suite: str = "quick"
    metrics: Sequence[str] = field(default_factory=tuple)
    repeats: int | None = None  # override every metric's repeats (tests, bisect probes)
    timeout_s: float = 3600.0


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def measure_tree(tree: Path, python: Path, options: RunOptions, progress: Progress) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="agentjet-nightly-") as tmp:
        out = Path(tmp) / "measured.json"
        command = [str(python), "-m", "agentjet.nightly.measure", "--suite", options.suite, "--out", str(out)]
        command += [arg for name in options.metrics for arg in ("--metric", name)]
        command += ["--repeats", str(options.repeats)] if options.repeats else []
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tree), os.environ.get("PYTHONPATH", "")]).rstrip(":")}
        try:
            done = subprocess.run(command, cwd=tree, env=env, capture_output=True, text=True, timeout=options.timeout_s)
        except subprocess.TimeoutExpired as exc:
            raise InfraError(f"the measurement ran past {options.timeout_s:.0f} s") from exc
        for line in done.stderr.splitlines():
            if line.startswith("[nightly]"):
                progress(line.removeprefix("[nightly] "))
        if done.returncode != 0 or not out.is_file():
            tail = " | ".join(done.stderr.strip().splitlines()[-3:])
            raise InfraError(f"the measurement exited {done.returncode}: {tail}")
        return dict(json.loads(out.read_text()))


def measure_revision(worktrees: Worktrees, revision: Revision, options: RunOptions, progress: Progress) -> RunRecord:
    """One commit measured (or its infrastructure failure), not yet stored."""
    info = machine_info()
    base: dict[str, Any] = {
        "commit": revision.sha,
        "commit_order": revision.order,
        "subject": revision.subject,
        "date": _now(),
        "machine": fingerprint(info),
        "machine_info": info,
        "suite": options.suite,
    }
    try:
        tree = worktrees.checkout(revision)
        python = worktrees.python(tree, progress)
        measured = measure_tree(tree, python, options, progress)
    except InfraError as exc:
        progress(f"{revision.sha[:10]}: infrastructure failure: {exc}")
        return RunRecord(packages={}, status="infra_failure", error=str(exc), **base)
    metrics = {d["name"]: Metric.from_dict(d) for d in measured.get("metrics", [])}
    samples = {name: list(values) for name, values in measured.get("samples", {}).items()}
    errors = dict(measured.get("errors", {}))
    details = {"errors": errors, "seconds": measured.get("seconds", {}), "probes": measured.get("details", {})}
    packages = installed_packages(python)
    if not samples:
        reason = "; ".join(f"{name}: {text}" for name, text in errors.items()) or "no probe produced a sample"
        return RunRecord(packages=packages, status="infra_failure", error=reason, details=details, **base)
    return RunRecord(packages=packages, samples=samples, metrics=metrics, details=details, **base)


def record_revision(
    history: History, worktrees: Worktrees, revision: Revision, options: RunOptions, progress: Progress
) -> RunRecord:
    record = history.append(measure_revision(worktrees, revision, options, progress))
    if record.status == "ok":
        medians = ", ".join(f"{k} {sorted(v)[len(v) // 2]:.4g}" for k, v in sorted(record.samples.items()))
        progress(f"{revision.sha[:10]} {revision.subject[:50]!r}: {medians}")
    return record
