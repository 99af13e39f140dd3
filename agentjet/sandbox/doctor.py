"""`agentjet sandbox doctor`: which backends work on this machine, and for each that does not, why and the fix.

A backend passes only when its `check()` passes AND a trivial command actually runs in it, so a
"works" row is a run that happened, not a guess from what is installed.
"""

from __future__ import annotations

from dataclasses import dataclass

from agentjet.sandbox.api import BACKEND_NAMES, make_backend
from agentjet.sandbox.docker.image import ImageRef
from agentjet.sandbox.errors import SandboxError, SandboxUnavailable
from agentjet.sandbox.limits import Limits

__all__ = ["BackendReport", "diagnose"]

_PROBE = ["python3", "-c", "import sys; print('ok', sys.version_info[:2])"]
_PROBE_LIMITS = Limits(memory_bytes=128 * 1024**2, pids=32, timeout_s=30.0)


@dataclass(frozen=True)
class BackendReport:
    """One row: `works`, else `reason` and `fix` (both empty when it works)."""

    name: str
    works: bool
    reason: str = ""
    fix: str = ""
    detail: str = ""  # what the probe run said (timings) when it works


def diagnose(image: ImageRef | None = None) -> list[BackendReport]:
    """One report per backend, in the order `auto` tries them."""
    return [_diagnose(name, image) for name in BACKEND_NAMES]


def _diagnose(name: str, image: ImageRef | None) -> BackendReport:
    backend = make_backend(name, image)
    try:
        backend.check()
        result = backend.run(_PROBE, workdir=None, limits=_PROBE_LIMITS, env={}, swarm=None)
    except SandboxUnavailable as exc:
        return BackendReport(name, False, exc.reason, exc.fix)
    except SandboxError as exc:
        return BackendReport(name, False, str(exc), "see the error above; `agentjet sandbox build` rebuilds the image")
    if not result.ok or not result.stdout.startswith("ok"):
        said = (result.stderr or result.stdout).strip()[-300:]
        return BackendReport(
            name,
            False,
            f"a probe run failed: {result.stopped_by.value}, exit {result.exit_code}: {result.detail} {said}".strip(),
            "rebuild the image (`agentjet sandbox build --force`) and check the engine's log",
        )
    return BackendReport(name, True, detail=f"python3 -c ... ran in {result.wall_s * 1000:.0f} ms")
