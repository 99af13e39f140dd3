"""The nightly's demonstration on a constructed history (docs/nightly.md, "Measured").

A scratch copy of this checkout with 5 unchanged commits, then a commit that burns 4 ms of CPU
per chat call in the server's request path, then one that changes the trainer's loss
normalisation (`tests/nightly/constructed.py`). `agentjet nightly run` measures the base and then
the range; `agentjet nightly bisect` then looks for each bad commit. Prints what was flagged,
what bisect named, and the time each took. Run: `python scripts/nightly_constructed_history.py [OUT]`.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.nightly.constructed import build_history  # noqa: E402

METRICS = ("server.cpu_ratio", "server.latency_ratio", "invariant.prefix")


def nightly(*args: str) -> tuple[int, str, float]:
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "agentjet.cli.main", "nightly", *args], capture_output=True, text=True)
    sys.stderr.write(done.stderr[-1500:])
    return done.returncode, done.stdout, time.perf_counter() - started


def main() -> int:
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(tempfile.mkdtemp(prefix="nightly-demo-"))
    made = build_history(out / "repo", unchanged=5)
    common = ["--store", str(out / "history.db"), "--cache", str(out / "cache"), "--repo", str(made.repo)]
    measured = [arg for name in METRICS for arg in ("--metric", name)] + ["--repeats", "5"]
    _, _, base_s = nightly("run", "--rev", made.base, *common, *measured)
    code, text, range_s = nightly(
        "run", "--rev", f"{made.base}..HEAD", "--json", "--report", str(out / "report"), *common, *measured
    )
    result = json.loads(text)
    flagged = sorted({(r["metric"], r["commit"][:10], r["subject"]) for r in result["regressions"]})
    expected = {made.slow[:10], made.loss[:10]}
    summary: dict[str, object] = {
        "commits": len(made.shas),
        "run_exit": code,
        "flagged": flagged,
        "flagged_exactly_the_two": {c for _, c, _ in flagged} == expected,
        "run_s": round(base_s + range_s, 1),
    }
    for metric, want in (("server.cpu_ratio", made.slow), ("invariant.prefix", made.loss)):
        code, text, seconds = nightly(
            "bisect", metric, "--good", made.base, "--bad", "HEAD", "--repeats", "5", "--json",
            "--repo", str(made.repo), "--cache", str(out / "cache"),
        )  # fmt: skip
        found = json.loads(text) if code == 0 else {}
        first = found.get("first_bad", {}).get("sha", "")
        summary[f"bisect {metric}"] = {
            "first_bad": first[:10],
            "right": first == want,
            "probes": len(found.get("steps", [])),
            "s": round(seconds, 1),
        }
    summary["dashboard"] = str(out / "report" / "index.html")
    print(json.dumps(summary, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
