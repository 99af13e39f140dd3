"""Benchmarks behind `agentjet bench`: each measures one speed claim against real servers on loopback."""

from agentjet.bench.serve import main, run_serve_bench

__all__ = ["main", "run_serve_bench"]
