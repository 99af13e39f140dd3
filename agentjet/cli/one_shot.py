"""How a one-shot command (each `bench ...`, `demo`) runs: quiet logs, its own report, one-line errors."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TypeVar

from agentjet.cli.logs import fail, setup_logging
from agentjet.core.errors import AgentJetError

__all__ = ["run_one_shot"]

Result = TypeVar("Result")


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
