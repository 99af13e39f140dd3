"""How a CLI command fails (a red `error: <sentence>` line and exit code 2), its log handler, and how a
one-shot command (each `bench ...`, `demo`) runs: quiet logs, its own report, one-line errors.

The log handler and the error line are the core's (`agentjet.core.logs`), so a process started without
the CLI (a campaign's local server, a vibe client) logs and refuses in the same words.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TypeVar

import typer

from agentjet.core.errors import AgentJetError
from agentjet.core.logs import error_line, log_to_stderr

__all__ = ["fail", "run_one_shot", "setup_logging"]

Result = TypeVar("Result")


def setup_logging(level: str = "INFO") -> None:
    log_to_stderr(level)


def fail(exc: Exception) -> typer.Exit:
    """Print `exc` as one `error: ...` line (a pydantic ValidationError too: field, reason, given value)."""
    typer.secho(error_line(exc), fg=typer.colors.RED, err=True)
    return typer.Exit(2)


def run_one_shot(
    run: Callable[[], Result],
    *,
    catch: tuple[type[Exception], ...] = (AgentJetError,),
    quiet_tokenizers: bool = False,
) -> Result:
    """Call `run`, which prints its own JSON, figures or tables on stdout, under WARNING-level logs; return its result.

    An error of `catch` (what that command raises on purpose) becomes one red `error:` line and exit 2; anything else
    is a bug and keeps its traceback. `quiet_tokenizers` stops HF tokenizers warning in the processes a run forks.
    """
    setup_logging("WARNING")
    if quiet_tokenizers:
        os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    try:
        return run()
    except catch as exc:
        raise fail(exc) from exc
