"""What a vibe node gets besides the state: live objects rebuilt per process, and the node contract.

A node is `(state, ctx) -> dict`: it reads the checkpointed `VibeState`, uses the live objects of
`VibeContext` (LLM, sandbox, progress) and returns only the keys it changed. A node that failed in
a way the repair loop may fix raises `NodeFailed` with the log tail a fix needs; `PlanRefused`
ends the run as refused; any other `VibeError` ends it as failed. The context is never
checkpointed: `--resume` builds a new one from the options kept in the state.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentjet.vibe.errors import VibeError
from agentjet.vibe.progress import NullProgress, ProgressSink
from agentjet.vibe.state import VibeOptions, VibeState

if TYPE_CHECKING:
    from agentjet.llm.chat import ChatLLM
    from agentjet.sandbox import Sandbox
    from agentjet.vibe.run.early_server import BesideChecks, PendingServer

__all__ = ["NodeFailed", "NodeFn", "VibeContext"]


class NodeFailed(VibeError):
    """A node's check failed in a way a repair may fix (a test, an episode, a hackable reward).

    `logs` is the tail a repair prompt needs; `report` (JSON-able) is kept as the node's result."""

    def __init__(self, message: str, *, logs: str = "", report: Mapping[str, Any] | None = None) -> None:
        super().__init__(message)
        self.logs = logs
        self.report = dict(report) if report is not None else None


@dataclass
class VibeContext:
    """The live side of one run in this process. Not thread-safe to build; nodes run one at a time."""

    run_id: str
    options: VibeOptions
    workspace: Path
    progress: ProgressSink = field(default_factory=NullProgress)
    llm: ChatLLM | None = None
    sandbox_factory: Callable[[], Sandbox] | None = None  # tests pass one; default: Sandbox() (auto backend)
    _sandbox: Sandbox | None = field(default=None, init=False, repr=False)
    run_server: PendingServer | None = field(default=None, init=False, repr=False)  # validate starts, launch takes
    beside: BesideChecks | None = field(default=None, init=False, repr=False)  # training held beside the checks

    def close(self) -> None:
        """Stop what this process started for the run and no node took over (a run that ended before training)."""
        if self.run_server is not None:
            self.run_server.close()
        self.stop_beside()

    def stop_beside(self) -> None:
        """Stop the training held beside the checks, if any (a check failed, or the run ended before training)."""
        if self.beside is not None:
            self.beside.stop()
            self.beside = None

    def sandbox(self) -> Sandbox:
        """The run's sandbox, made on first use (a node that needs none never pays for the check)."""
        if self._sandbox is None:
            from agentjet.sandbox import Sandbox, SandboxError

            try:
                self._sandbox = self.sandbox_factory() if self.sandbox_factory is not None else Sandbox()
            except SandboxError as exc:
                raise VibeError(f"no sandbox to run generated code in: {exc} (see `agentjet sandbox doctor`)") from exc
        return self._sandbox


NodeFn = Callable[[VibeState, VibeContext], dict[str, Any]]
