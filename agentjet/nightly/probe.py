"""`python -m agentjet.nightly.probe CONFIG`: one `git bisect run` step (exit 0 good, 1 bad, 125 skip).

Run by `bisect.py` with the nightly's own code on `sys.path` and the bisected checkout as the
working directory: it measures that checkout (its own code, its own environment) and appends
what it saw to the bisect's log.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from agentjet.nightly.bisect import classify
from agentjet.nightly.metrics import Metric
from agentjet.nightly.runner import RunOptions, measure_tree
from agentjet.nightly.worktree import InfraError, Worktrees

__all__ = ["main"]

SKIP = 125


def _stderr(message: str) -> None:
    sys.stderr.write(f"[nightly probe] {message}\n")


def main(argv: list[str] | None = None) -> int:
    config = json.loads(Path((argv or sys.argv[1:])[0]).read_text())
    metric = Metric.from_dict(config["metric"])
    tree = Path.cwd()
    sha = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    subject = subprocess.run(["git", "log", "-1", "--format=%s"], capture_output=True, text=True).stdout.strip()
    options = RunOptions(suite=config["suite"], metrics=(metric.name,), repeats=config["repeats"])
    worktrees = Worktrees(Path(config["repo"]), Path(config["cache"]))
    entry: dict[str, object] = {"sha": sha, "subject": subject}
    try:
        measured = measure_tree(tree, worktrees.python(tree, _stderr), options, _stderr)
        samples = [float(v) for v in measured.get("samples", {}).get(metric.name, [])]
        if not samples:
            raise InfraError(f"no samples: {measured.get('errors')}")
        answer = classify(metric, samples, config["good"], config["bad"])
        entry |= {"samples": samples, "answer": "bad" if answer else "good"}
    except InfraError as exc:
        answer = SKIP
        entry |= {"samples": [], "answer": "skip", "error": str(exc)}
    with open(config["log"], "a") as log:
        log.write(json.dumps(entry) + "\n")
    return answer


if __name__ == "__main__":
    sys.exit(main())
