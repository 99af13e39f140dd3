"""Benchmarks behind `agentjet bench`: each measures one speed claim against real servers on loopback.

Nothing loads at import: `python -m agentjet.bench.gpu` runs where only torch, transformers and
peft are installed, so this package must not pull in the serving stack (httpx, psutil) itself.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agentjet.bench.serve import main, run_serve_bench

__all__ = ["main", "run_serve_bench"]


def __getattr__(name: str) -> Any:
    if name not in __all__:
        raise AttributeError(f"module 'agentjet.bench' has no attribute {name!r}")
    from agentjet.bench import serve

    return getattr(serve, name)
