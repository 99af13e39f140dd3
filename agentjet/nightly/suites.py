"""The nightly suites: which metrics `quick` and `full` measure, and how each is measured.

A `Probe` measures one or more metrics in one go (the request-path probe starts its two servers
once and yields two ratios per repeat). Speed metrics are ratios taken within one run wherever
the thing has a natural floor (our server against a bare FastAPI route, a sandbox against a bare
process), so a busy machine moves both sides and the ratio stays put. Training-quality metrics
come from seeded CPU training and are compared exactly (`test="exact"`).
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentjet.nightly.metrics import Metric

__all__ = ["SUITES", "Probe", "Progress", "metrics_of", "probes_for"]

Progress = Callable[[str], None]
Measured = tuple[dict[str, list[float]], dict[str, Any]]  # samples per metric, details


@dataclass(frozen=True)
class Probe:
    """Measures `metrics` with `repeats` samples each; returns (samples, details)."""

    name: str
    metrics: tuple[Metric, ...]
    measure: Callable[[int, Progress], Measured]

    @property
    def repeats(self) -> int:
        return max(m.repeats for m in self.metrics)


# ---- quick ------------------------------------------------------------------------------------------------
def _request_path(repeats: int, progress: Progress) -> Measured:
    from agentjet.bench.serving.serve import overhead_samples

    samples = overhead_samples(repeats, 100, progress)
    return {"server.latency_ratio": samples["latency_ratio"], "server.cpu_ratio": samples["cpu_ratio"]}, {}


def _merging_tiny(repeats: int, progress: Progress) -> Measured:
    from agentjet.bench.merging import run_merging_bench

    runs = [run_merging_bench(model="tiny", turns=6, progress=progress) for _ in range(repeats)]
    return {
        "merging.speedup_tiny": [r["speedup_token"] for r in runs],
        "merging.grad_diff_tiny": [max(r["max_rel_grad_diff"] for r in runs)],
    }, {"runs": runs}


def _host_start_ms(runs: int) -> float:
    latencies = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run([sys.executable, "-S", "-c", "pass"], check=True)
        latencies.append(1000 * (time.perf_counter() - started))
    return statistics.median(latencies)


def _sandbox_start(repeats: int, progress: Progress) -> Measured:
    from agentjet.bench.sandbox import run_sandbox_bench

    ratios, figures = [], []
    for repeat in range(repeats):
        result = run_sandbox_bench(runs=5, concurrency=2)
        if result.get("docker_start_ms_p50") is None:
            raise RuntimeError(f"the docker sandbox cannot run here: {result.get('docker_unavailable', 'unknown')}")
        host = _host_start_ms(5)
        ratios.append(round(result["docker_start_ms_p50"] / host, 3))
        figures.append({"docker_ms": result["docker_start_ms_p50"], "host_ms": round(host, 2)})
        progress(f"sandbox repeat {repeat + 1}/{repeats}: {figures[-1]}")
    return {"sandbox.start_ratio": ratios}, {"figures": figures}


def _campaign(repeats: int, progress: Progress) -> Measured:
    from agentjet.bench.campaign import run_campaign_bench

    overheads = []
    for repeat in range(repeats):
        with tempfile.TemporaryDirectory(prefix="agentjet-nightly-campaign-") as tmp:
            result = run_campaign_bench(quick=True, out=Path(tmp) / "campaign")
        overheads.append(round(1000 * result["overhead_per_trial_s"], 3))
        progress(f"campaign repeat {repeat + 1}/{repeats}: {overheads[-1]} ms per trial")
    return {"campaign.overhead_ms_per_trial": overheads}, {}


def _invariants(cls: str) -> Callable[[int, Progress], Measured]:
    def measure(repeats: int, progress: Progress) -> Measured:  # deterministic: one sample whatever the repeats
        from agentjet.nightly.invariants import measure_invariants

        progress(f"training invariant {cls} on tiny (seeded, CPU)")
        return measure_invariants(classes=[cls])

    return measure


# ---- full (adds the real model) ---------------------------------------------------------------------------
def _throughput(repeats: int, progress: Progress) -> Measured:
    from agentjet.bench.serving.serve import run_serve_bench

    speedups = []
    for _ in range(repeats):
        result = run_serve_bench(False, requests_per_level=64, progress=progress)
        speedups.append(result["speedup_c8"])
    return {"serve.speedup_c8_smollm2": speedups}, {}


def _merging_smollm2(repeats: int, progress: Progress) -> Measured:
    from agentjet.bench.merging import run_merging_bench

    runs = [run_merging_bench(model="smollm2-135m", progress=progress) for _ in range(repeats)]
    return {"merging.speedup_smollm2": [r["speedup_token"] for r in runs]}, {}


def _learn_check(repeats: int, progress: Progress) -> Measured:
    from agentjet.bench.learn_check import run_learn_check

    rises = []
    for _ in range(repeats):
        with tempfile.TemporaryDirectory(prefix="agentjet-nightly-learn-check-") as tmp:
            rises.append(run_learn_check("smollm2-135m", 20, Path(tmp), progress)["rise"])
    return {"learn_check.rise_smollm2": rises}, {}


def _frameworks(repeats: int, progress: Progress) -> Measured:
    from agentjet.bench.frameworks import run_frameworks_bench

    result = run_frameworks_bench(model="smollm2-135m", steps=3, progress=progress)
    return {
        "frameworks.loss_dispersion_smollm2": [float(result["loss_dispersion"])],
        "frameworks.tokens_identical_smollm2": [1.0 if result["tokens_identical"] else 0.0],
    }, {"result": result}


def _learn_arithmetic(repeats: int, progress: Progress) -> Measured:
    from agentjet.bench.learn import LearnSettings, run_learn_bench

    settings = LearnSettings(task="arithmetic", steps=10, eval_items=32, eval_every=10)
    with tempfile.TemporaryDirectory(prefix="agentjet-nightly-learn-") as tmp:
        result = run_learn_bench(settings, Path(tmp))
    return {"learn.arithmetic_gain_smollm2": [result["accuracy_change"]]}, {"result": result}


def _invariant_probes() -> tuple[Probe, ...]:
    from agentjet.nightly.invariants import METRICS

    return tuple(Probe(m.name.replace(".", "-"), (m,), _invariants(m.name.split(".", 1)[1])) for m in METRICS)


def _ratio(name: str, description: str, repeats: int = 7, min_effect: float = 0.15) -> Metric:
    return Metric(name, "x the floor", "lower", repeats, min_effect=min_effect, description=description)


QUICK: tuple[Probe, ...] = (
    Probe(
        "request-path",
        (
            _ratio("server.latency_ratio", "p50 latency of a chat call, our server on the echo backend / a bare route"),
            _ratio("server.cpu_ratio", "server CPU per chat call, ours / the bare route's"),
        ),
        _request_path,
    ),
    Probe(
        "merging-tiny",
        (
            Metric("merging.speedup_tiny", "x", "higher", 3, min_effect=0.2, description="token merge vs off, tiny"),
            Metric(
                "merging.grad_diff_tiny",
                "relative",
                "lower",
                1,
                test="exact",
                min_effect=1e-4,
                kind="quality",
                description="worst gradient difference between merge modes (equal by design)",
            ),
        ),
        _merging_tiny,
    ),
    Probe(
        "sandbox",
        (_ratio("sandbox.start_ratio", "docker sandbox start / a bare process start", 3, 0.25),),
        _sandbox_start,
    ),
    Probe(
        "campaign",
        (Metric("campaign.overhead_ms_per_trial", "ms", "lower", 3, min_effect=0.3, description="scheduler overhead"),),
        _campaign,
    ),
)
FULL_ONLY: tuple[Probe, ...] = (
    Probe("throughput", (Metric("serve.speedup_c8_smollm2", "x", "higher", 2, min_effect=0.2),), _throughput),
    Probe("merging-smollm2", (Metric("merging.speedup_smollm2", "x", "higher", 2, min_effect=0.2),), _merging_smollm2),
    Probe(
        "learn-check",
        (Metric("learn_check.rise_smollm2", "reward", "higher", 1, test="exact", min_effect=0.3, kind="quality"),),
        _learn_check,
    ),
    Probe(
        "frameworks",
        (
            Metric(
                "frameworks.loss_dispersion_smollm2", "loss", "lower", 1, test="exact", min_effect=1e-3, kind="quality"
            ),
            Metric(
                "frameworks.tokens_identical_smollm2", "bool", "higher", 1, test="exact", min_effect=0.5, kind="quality"
            ),
        ),
        _frameworks,
    ),
    Probe(
        "learn-arithmetic",
        (
            Metric(
                "learn.arithmetic_gain_smollm2", "accuracy", "higher", 1, test="exact", min_effect=0.15, kind="quality"
            ),
        ),
        _learn_arithmetic,
    ),
)


def _with_invariants(probes: tuple[Probe, ...]) -> tuple[Probe, ...]:
    return (*probes, *_invariant_probes())


SUITES: Mapping[str, Callable[[], tuple[Probe, ...]]] = {
    "quick": lambda: _with_invariants(QUICK),
    "full": lambda: _with_invariants(QUICK + FULL_ONLY),
}


def probes_for(suite: str, metrics: Sequence[str] = ()) -> tuple[Probe, ...]:
    """The probes of `suite`, or only those measuring one of `metrics` (names or probe names)."""
    if suite not in SUITES:
        raise ValueError(f"unknown suite {suite!r}: choose one of {', '.join(SUITES)}")
    probes = SUITES[suite]()
    if not metrics:
        return probes
    wanted = set(metrics)
    chosen = tuple(p for p in probes if p.name in wanted or wanted & {m.name for m in p.metrics})
    known = {p.name for p in probes} | {m.name for p in probes for m in p.metrics}
    unknown = sorted(wanted - known)
    if unknown:
        raise ValueError(f"suite {suite!r} has no metric {', '.join(unknown)}; it has {', '.join(sorted(known))}")
    return chosen


def metrics_of(probes: Sequence[Probe]) -> dict[str, Metric]:
    return {m.name: m for p in probes for m in p.metrics}
