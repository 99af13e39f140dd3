"""The research assistant's tools: the `agentjet` CLI's own commands, run as child processes.

Each tool is the command a user would type (`agentjet vibe TEXT --dry-run`, `agentjet campaign
status --once`, ...), so what it does and where it records it (the vibe run's or the campaign's
git repo) is the CLI's, never a second implementation. Quick commands run to completion
(`run_command`); long ones (a vibe run, a campaign) are `Job`s: their own process group, output
to a log file the chat follows, alive after the page closes, stopped like Ctrl-C (SIGINT).
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["Job", "Jobs", "run_command"]

_CLI = (sys.executable, "-m", "agentjet")
_OUTPUT_LIMIT = 20_000


async def run_command(args: Sequence[str], *, cwd: Path, timeout_s: float = 300.0) -> tuple[int, str]:
    """Run `agentjet ARGS` in `cwd` to the end: (exit code, stdout and stderr, at most 20 000 chars)."""
    process = await asyncio.create_subprocess_exec(
        *_CLI, *args, cwd=cwd, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT, env=_env()
    )
    try:
        output, _ = await asyncio.wait_for(process.communicate(), timeout_s)
    except TimeoutError:
        process.kill()
        await process.wait()
        return 124, f"agentjet {' '.join(args)}: no answer within {timeout_s:.0f} s"
    return int(process.returncode or 0), output.decode("utf-8", "replace")[-_OUTPUT_LIMIT:]


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env.setdefault("PYTHONUNBUFFERED", "1")
    env["NO_COLOR"] = "1"  # plain progress lines, no terminal codes in the page
    return env


@dataclass
class Job:
    """One long `agentjet ...` command started by the assistant."""

    job_id: str
    args: tuple[str, ...]
    log_path: Path
    process: subprocess.Popen[bytes] = field(repr=False)
    started_at: float = field(default_factory=time.time)

    @property
    def title(self) -> str:
        return "agentjet " + " ".join(self.args)

    def exit_code(self) -> int | None:
        return self.process.poll()

    def stop(self) -> None:
        """Ctrl-C for the whole group: vibe and campaigns stop cleanly and stay resumable."""
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGINT)

    def tail(self, lines: int = 15) -> str:
        text = self.log_path.read_text(errors="replace") if self.log_path.exists() else ""
        return "\n".join(text.splitlines()[-lines:])

    async def follow(self, *, poll_s: float = 0.2) -> AsyncIterator[str]:
        """Each new line of the output as it comes, until the command exits."""
        with open(self.log_path, "rb") as log:
            buffer = b""
            while True:
                chunk = log.read()
                if chunk:
                    buffer += chunk
                    *lines, buffer = buffer.split(b"\n")
                    for line in lines:
                        yield line.decode("utf-8", "replace").rstrip("\r")
                elif self.process.poll() is not None:
                    if buffer:
                        yield buffer.decode("utf-8", "replace")
                    return
                else:
                    await asyncio.sleep(poll_s)


class Jobs:
    """The jobs this chat started (newest last); their logs under `logs_dir`."""

    def __init__(self, logs_dir: Path, cwd: Path) -> None:
        self.logs_dir, self.cwd = logs_dir, cwd
        self.running: dict[str, Job] = {}

    def start(self, args: Sequence[str]) -> Job:
        self.logs_dir.mkdir(parents=True, exist_ok=True)
        job_id = f"job-{len(self.running) + 1}"
        log_path = self.logs_dir / f"{job_id}.log"
        with open(log_path, "wb") as log:
            process = subprocess.Popen(
                [*_CLI, *args], cwd=self.cwd, stdout=log, stderr=subprocess.STDOUT, env=_env(), start_new_session=True
            )
        job = Job(job_id, tuple(args), log_path, process)
        self.running[job_id] = job
        return job

    def latest(self, command: str) -> Job | None:
        """The newest job of `agentjet COMMAND ...` (e.g. "vibe"), running or not."""
        found = [j for j in self.running.values() if j.args and j.args[0] == command]
        return found[-1] if found else None

    def stop_all(self) -> None:
        for job in self.running.values():
            job.stop()
