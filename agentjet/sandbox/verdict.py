"""Why a sandboxed run stopped, from what the backend saw: one pure function both backends share.

ERROR when the entry step could not copy the staged files in. Several limits can fire in one
run (a fork bomb also runs into the wall clock); `stopped_by` is the most specific one, in this
order: MEMORY, PIDS, CPU, FILE_SIZE (SIGXFSZ, or a failed exit with a file at the cap), OUTPUT, TIMEOUT,
FILE_SIZE (EFBIG message), SIGNALED, EXITED. `detail` names every one that fired.

Exit statuses follow the shell (and init/bwrap) convention: 128+N means "killed by signal N",
reported as exit_code -N. A command that calls `exit(130)` is indistinguishable from SIGINT.
"""

from __future__ import annotations

import signal
from dataclasses import dataclass

from agentjet.sandbox.limits import Limits
from agentjet.sandbox.result import StopReason
from agentjet.sandbox.runspec import COPY_FAILED

__all__ = ["Evidence", "Verdict", "decide", "exit_code_of", "human_size"]

_EFBIG_TEXT = "File too large"  # strerror(EFBIG): Python ignores SIGXFSZ, so a refused write shows up as this


@dataclass(frozen=True)
class Evidence:
    """What the backend observed. `killed_for` is TIMEOUT or OUTPUT when the host killed the run."""

    status: int | None  # the shell-style exit status (0-255) of the sandbox's top process; None: never ran
    killed_for: StopReason | None = None
    oom_killed: bool = False
    pids_limit_hit: bool = False
    cpu_s: float | None = None
    stderr: str = ""
    big_file: str | None = None  # a file the run left at the RLIMIT_FSIZE cap (counts with a failed exit)


@dataclass(frozen=True)
class Verdict:
    stopped_by: StopReason
    exit_code: int | None
    detail: str


def exit_code_of(status: int | None) -> int | None:
    """128+N (N a signal number) -> -N; other statuses unchanged."""
    if status is not None and 128 < status <= 128 + signal.SIGRTMAX:
        return -(status - 128)
    return status


def human_size(size: int) -> str:
    for unit, scale in (("GiB", 1024**3), ("MiB", 1024**2), ("KiB", 1024)):
        if size >= scale:
            return f"{size / scale:.1f}".rstrip("0").rstrip(".") + f" {unit}"
    return f"{size} B"


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def _fired(evidence: Evidence, limits: Limits, code: int | None) -> list[tuple[StopReason, str]]:
    """Every limit that fired, most specific first."""
    sig = -code if code is not None and code < 0 else None
    fired: list[tuple[StopReason, str]] = []
    if evidence.oom_killed:
        fired.append((StopReason.MEMORY, f"OOM-killed at the {human_size(limits.memory_bytes)} memory limit"))
    if evidence.pids_limit_hit:
        fired.append((StopReason.PIDS, f"the process tree hit its {limits.pids}-process limit (fork refused)"))
    if limits.cpu_seconds is not None and _cpu_limit_hit(sig, evidence.cpu_s, limits.cpu_seconds, evidence):
        fired.append((StopReason.CPU, f"killed by the {limits.cpu_seconds} s CPU-time limit (RLIMIT_CPU)"))
    file_size = f"a write went over the {human_size(limits.file_size_bytes)} file size limit (RLIMIT_FSIZE)"
    big_file = evidence.big_file if code != 0 else None  # a file exactly at the cap and a clean exit: no verdict
    if sig == signal.SIGXFSZ or big_file:
        where = f" ({big_file})" if big_file else ""
        fired.append((StopReason.FILE_SIZE, file_size + where))
    if evidence.killed_for is StopReason.OUTPUT:
        fired.append((StopReason.OUTPUT, f"output went over {human_size(limits.output_bytes)} per stream: killed"))
    if evidence.killed_for is StopReason.TIMEOUT:
        fired.append((StopReason.TIMEOUT, f"still running after the {limits.timeout_s:g} s wall-clock limit: killed"))
    efbig = code not in (0, None) and _EFBIG_TEXT in evidence.stderr
    if sig != signal.SIGXFSZ and not big_file and efbig:
        fired.append((StopReason.FILE_SIZE, file_size + " (EFBIG)"))
    if sig is not None and not fired:
        fired.append((StopReason.SIGNALED, f"killed by {_signal_name(sig)}"))
    return fired


def _cpu_limit_hit(sig: int | None, cpu_s: float | None, cpu_seconds: int, evidence: Evidence) -> bool:
    """SIGXCPU at the soft limit; SIGKILL at the hard one (a process that handled SIGXCPU), if we did not kill."""
    if sig == signal.SIGXCPU:
        return True
    spent = cpu_s is not None and cpu_s >= cpu_seconds * 0.9
    return sig == signal.SIGKILL and evidence.killed_for is None and not evidence.oom_killed and spent


def decide(evidence: Evidence, limits: Limits) -> Verdict:
    """The stop reason, the exit code (-N for signal N) and a one-line explanation."""
    code = exit_code_of(evidence.status)
    if evidence.status == 125 and COPY_FAILED in evidence.stderr:
        return Verdict(StopReason.ERROR, None, "the staged files did not fit into /work (see stderr)")
    fired = _fired(evidence, limits, code)
    if not fired:
        return Verdict(StopReason.EXITED, code, f"exited with status {code}")
    return Verdict(fired[0][0], code, "; ".join(text for _, text in fired))
