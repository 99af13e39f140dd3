"""Which chaos cases run, in what order, and the one JSON they report (`agentjet bench chaos --json`)."""

from __future__ import annotations

import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agentjet.bench.chaos import abuse, crashes, research
from agentjet.bench.chaos.target import Target, launch, stop
from agentjet.bench.output import print_result

__all__ = ["ABUSE", "FAULTS", "FULL", "main", "run_chaos"]

ABUSE: dict[str, Callable[[Target], dict[str, Any]]] = {  # one shared server
    "scopes": abuse.scopes,
    "huge_request": abuse.huge_request,
    "long_prompt": abuse.long_prompt,
    "huge_reward": abuse.huge_reward,
    "end_during_call": abuse.end_during_call,
    "slow_connections": abuse.slow_connections,
}
FAULTS: dict[str, Callable[[Path], dict[str, Any]]] = {  # a scratch dir (and servers) of their own
    "kill9_server": crashes.kill9_server,
    "kill9_client": crashes.kill9_client,
    "corrupt_journal": crashes.corrupt_journal,
    "disk_full": crashes.disk_full,
}
FULL: dict[str, Callable[[Path], dict[str, Any]]] = {  # minutes each: behind --full
    "kill9_campaign": research.kill9_campaign,
    "kill9_vibe": research.kill9_vibe,
}


def _say(line: str) -> None:
    sys.stderr.write(f"[bench chaos] {line}\n")
    sys.stderr.flush()


def _timed(name: str, run: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    _say(f"{name}: running")
    started = time.monotonic()
    try:
        result = run()
    except Exception as exc:  # a case that crashes is a failed case, reported, not a crashed benchmark
        result = {"ok": False, "error": f"{type(exc).__name__}: {exc}"}
    result["seconds"] = round(time.monotonic() - started, 1)
    verdict = {True: "ok", False: "FAILED", None: "skipped"}[result.get("ok")]
    _say(f"{name}: {verdict} ({result['seconds']} s)")
    return result


def run_chaos(cases: list[str] | None = None, *, full: bool = False) -> dict[str, Any]:
    """Run the named cases (default: all abuse and fault cases, plus the research ones with `full`)."""
    known = {**ABUSE, **FAULTS, **FULL}
    chosen = cases or [*ABUSE, *FAULTS, *(FULL if full else {})]
    unknown = [c for c in chosen if c not in known]
    if unknown:
        raise ValueError(f"unknown chaos case(s) {', '.join(unknown)}; known: {', '.join(known)}")
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="agentjet-chaos-") as scratch:
        root = Path(scratch)
        if any(c in ABUSE for c in chosen):
            target = launch(root / "abuse")
            try:
                for name in (c for c in chosen if c in ABUSE):
                    results[name] = _timed(name, lambda name=name: ABUSE[name](target))  # type: ignore[misc]
            finally:
                stop(target)
        for name in (c for c in chosen if c not in ABUSE):
            folder = root / name
            folder.mkdir()
            runner = {**FAULTS, **FULL}[name]
            results[name] = _timed(name, lambda runner=runner, folder=folder: runner(folder))  # type: ignore[misc]
    failed = [name for name, result in results.items() if result.get("ok") is False]
    return {"ok": not failed, "failed": failed, "cases": results}


def main(*, cases: list[str] | None, full: bool, as_json: bool) -> int:
    result = abuse.as_json_safe(run_chaos(cases, full=full))
    print_result(result, as_json=as_json)
    return 0 if result["ok"] else 1
