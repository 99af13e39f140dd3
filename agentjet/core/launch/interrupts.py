"""How a long command stops: SIGTERM like Ctrl-C, and a second signal cannot cut the cleanup short.

`vibe` and `campaign start|resume` own servers; the first Ctrl-C or SIGTERM raises KeyboardInterrupt
so their `finally` blocks stop clients and servers. A second signal arriving during that cleanup
would raise again inside it and leave servers running with nothing to stop them, so later signals
print `still_stopping` instead (`kill -9` still forces a stop).
"""

from __future__ import annotations

import signal
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

__all__ = ["signals_stop_once"]


@contextmanager
def signals_stop_once(still_stopping: str) -> Iterator[None]:
    """Inside the block, SIGINT and SIGTERM raise KeyboardInterrupt once, then print `still_stopping`."""

    def answer(signum: int, frame: FrameType | None) -> None:
        sys.stderr.write(still_stopping + "\n")

    def stop(signum: int, frame: FrameType | None) -> None:
        signal.signal(signal.SIGINT, answer)
        signal.signal(signal.SIGTERM, answer)
        raise KeyboardInterrupt

    previous = {sig: signal.signal(sig, stop) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
