"""`agentjet bench sandbox`: start-to-exit latency of `python3 -c pass` per backend, and 8 sandboxes at once.

Latency is what a caller waits for one `Sandbox.run` (create, start, exit, read-back, cleanup),
measured after one warm-up run; p50/p95 over `runs` runs. The concurrent figure is the wall time
for `concurrency` runs submitted together. A backend that cannot run here gives null and the reason.
"""

from __future__ import annotations

import statistics
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from agentjet.bench.output import print_result
from agentjet.sandbox.api import BACKEND_NAMES, Sandbox
from agentjet.sandbox.errors import SandboxError
from agentjet.sandbox.limits import Limits

__all__ = ["main", "run_sandbox_bench"]

_COMMAND = ["python3", "-c", "pass"]
_LIMITS = Limits(memory_bytes=128 * 1024**2, pids=32, timeout_s=60.0)


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def _one(sandbox: Sandbox) -> float:
    started = time.perf_counter()
    result = sandbox.run(_COMMAND, limits=_LIMITS)
    elapsed = time.perf_counter() - started
    if not result.ok:
        raise SandboxError(f"{sandbox.name}: `python3 -c pass` did not exit cleanly: {result.detail} {result.stderr}")
    return elapsed


def _measure(name: str, runs: int, concurrency: int) -> dict[str, Any]:
    sandbox = Sandbox(name)
    _one(sandbox)  # warm-up: image layers, page cache, the engine's first container
    latencies_ms = [_one(sandbox) * 1000 for _ in range(runs)]
    with ThreadPoolExecutor(max_workers=concurrency) as pool:
        started = time.perf_counter()
        list(pool.map(lambda _: _one(sandbox), range(concurrency)))
        concurrent_s = time.perf_counter() - started
    return {
        f"{name}_start_ms_p50": round(statistics.median(latencies_ms), 1),
        f"{name}_start_ms_p95": round(_percentile(latencies_ms, 0.95), 1),
        f"{name}_start_ms_min": round(min(latencies_ms), 1),
        f"{name}_concurrent{concurrency}_s": round(concurrent_s, 3),
    }


def run_sandbox_bench(*, runs: int = 20, concurrency: int = 8) -> dict[str, Any]:
    """Figures per backend; null figures and `<backend>_unavailable` when a backend cannot run here."""
    result: dict[str, Any] = {"runs": runs, "concurrency": concurrency}
    for name in BACKEND_NAMES:
        try:
            result.update(_measure(name, runs, concurrency))
        except SandboxError as exc:  # SandboxUnavailable included
            for key in ("start_ms_p50", "start_ms_p95", "start_ms_min", f"concurrent{concurrency}_s"):
                result[f"{name}_{key}"] = None
            result[f"{name}_unavailable"] = str(exc)
    return result


def main(*, runs: int, concurrency: int, as_json: bool) -> int:
    print_result(run_sandbox_bench(runs=runs, concurrency=concurrency), as_json=as_json)
    return 0
