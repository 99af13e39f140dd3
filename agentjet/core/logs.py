"""How an agentjet process reports on stderr: its log handler and its one-line errors.

The CLI (`cli/one_shot.py`) and the process entries that run without it (`run_server`, a campaign's
local servers; `python -m agentjet.tasks.play.client_run`, vibe's host clients) install the same
handler and word a refusal the same way: one `error: <sentence>` line.
"""

from __future__ import annotations

import logging
import sys

__all__ = ["error_line", "log_to_stderr"]

_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
_NOISY = ("httpx", "httpcore", "uvicorn.access")  # one line per request: kept at WARNING


def log_to_stderr(level: str = "INFO") -> None:
    """Log records of `level` and above to stderr, timestamped and named (once per process)."""
    logging.basicConfig(level=level, format=_FORMAT, stream=sys.stderr)
    for noisy in _NOISY:
        logging.getLogger(noisy).setLevel(logging.WARNING)


def error_line(exc: Exception) -> str:
    """`error: <sentence>` for `exc`; a pydantic ValidationError as field, reason and given value, on one line."""
    from pydantic import ValidationError

    if isinstance(exc, ValidationError):
        from agentjet.core.config import describe_validation_error

        return "error: " + describe_validation_error(exc).replace("\n", " ")
    return f"error: {exc}"
