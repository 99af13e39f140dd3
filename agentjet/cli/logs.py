"""The CLI's log handler and its one way to fail: a red `error: <sentence>` line and exit code 2."""

from __future__ import annotations

import logging
import sys

import typer

__all__ = ["fail", "setup_logging"]


def setup_logging(level: str = "INFO") -> None:
    logging.basicConfig(level=level, format="%(asctime)s %(levelname)s %(name)s: %(message)s", stream=sys.stderr)
    for noisy in ("httpx", "httpcore", "uvicorn.access"):
        logging.getLogger(noisy).setLevel(logging.WARNING)


def fail(exc: Exception) -> typer.Exit:
    """Print `exc` as one `error: ...` line (a pydantic ValidationError too: field, reason, given value)."""
    from pydantic import ValidationError

    if isinstance(exc, ValidationError):
        from agentjet.core.config import describe_validation_error

        message = describe_validation_error(exc).replace("\n", " ")
        typer.secho(f"error: {message}", fg=typer.colors.RED, err=True)
        return typer.Exit(2)
    typer.secho(f"error: {exc}", fg=typer.colors.RED, err=True)
    return typer.Exit(2)
