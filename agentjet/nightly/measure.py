"""`python -m agentjet.nightly.measure`: run a suite's probes in this checkout and write what they measured.

The runner starts it inside the worktree of the commit under test, with that commit's code on
`sys.path`, so every figure is the commit's own. One probe failing (a server that would not
start, a missing docker engine) is written as that probe's error and the others still run; the
runner records such errors as infrastructure failures, never as regressions.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import traceback
from pathlib import Path
from typing import Any

from agentjet.nightly.suites import metrics_of, probes_for

__all__ = ["main", "run_probes"]


def _stderr(message: str) -> None:
    sys.stderr.write(f"[nightly] {message}\n")
    sys.stderr.flush()


def run_probes(suite: str, metrics: list[str], repeats: int | None = None) -> dict[str, Any]:
    """{"metrics": [declarations], "samples": {name: [...]}, "details": {...}, "errors": {probe: text}, "seconds"}."""
    probes = probes_for(suite, metrics)
    out: dict[str, Any] = {"suite": suite, "metrics": [], "samples": {}, "details": {}, "errors": {}, "seconds": {}}
    for probe in probes:
        wanted = [m for m in probe.metrics if not metrics or m.name in metrics or probe.name in metrics]
        count = repeats or probe.repeats
        _stderr(f"probe {probe.name}: {', '.join(m.name for m in wanted)} ({count} repeats)")
        started = time.perf_counter()
        try:
            samples, details = probe.measure(count, _stderr)
        except Exception as exc:  # one probe's failure is recorded, the others still run
            out["errors"][probe.name] = f"{type(exc).__name__}: {exc}"
            _stderr(f"probe {probe.name} failed: {traceback.format_exc(limit=3)}")
            continue
        finally:
            out["seconds"][probe.name] = round(time.perf_counter() - started, 1)
        for metric in wanted:
            values = samples.get(metric.name)
            if values:
                out["samples"][metric.name] = [float(v) for v in values]
                out["metrics"].append(metric.to_dict())
        out["details"][probe.name] = details
    out["declared"] = sorted(metrics_of(probes))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m agentjet.nightly.measure")
    parser.add_argument("--suite", default="quick")
    parser.add_argument("--metric", action="append", default=[])
    parser.add_argument("--repeats", type=int, default=None)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    result = run_probes(args.suite, args.metric, args.repeats)
    args.out.write_text(json.dumps(result, default=str) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
