"""The CLI's log handler and its one way to fail: a red `error: <sentence>` line and exit code 2.

Both are the core's (`agentjet.core.logs`), so a process started without the CLI (a campaign's
local server, a vibe client) logs and refuses in the same words.
"""

from __future__ import annotations

import typer

from agentjet.core.logs import error_line, log_to_stderr

__all__ = ["fail", "setup_logging"]


def setup_logging(level: str = "INFO") -> None:
    log_to_stderr(level)


def fail(exc: Exception) -> typer.Exit:
    """Print `exc` as one `error: ...` line (a pydantic ValidationError too: field, reason, given value)."""
    typer.secho(error_line(exc), fg=typer.colors.RED, err=True)
    return typer.Exit(2)
