"""Ask ahead: one background thread prepares the next trial while every server is busy.

`study.ask` with a model-based sampler, the suggested params and their writes take tens of ms
(more on a busy machine). Done by the scheduler thread, that time falls between a server being
freed and its next launch whenever two servers free close together. With a `Prefetcher`, the
scheduler launches the prepared trial at once and asks for the next in the background.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Generic, TypeVar

__all__ = ["Prefetcher"]

log = logging.getLogger(__name__)
T = TypeVar("T")


class Prefetcher(Generic[T]):
    """Runs `produce()` in its thread on each `request()` and keeps one result for `take()`.

    `produce` returns None when there is nothing to prepare. An exception it raises is kept in
    `error` (the thread stops); the caller decides what to do. Changes are announced on `changed`
    (the scheduler's condition), so a waiting scheduler wakes when a result is ready."""

    def __init__(self, produce: Callable[[], T | None], changed: threading.Condition, *, name: str = "prefetch"):
        self._produce = produce
        self._changed = changed
        self._ready: T | None = None
        self._wanted = False
        self._busy = False
        self._closed = False
        self.error: BaseException | None = None
        self._thread = threading.Thread(target=self._loop, name=name, daemon=True)
        self._thread.start()

    @property
    def pending(self) -> bool:
        """A request is waiting or being worked on."""
        with self._changed:
            return self._wanted or self._busy

    def request(self) -> None:
        with self._changed:
            if self._ready is None and self.error is None:
                self._wanted = True
                self._changed.notify_all()

    def take(self) -> T | None:
        with self._changed:
            item, self._ready = self._ready, None
            return item

    def close(self) -> T | None:
        """Stop the thread (after the call in progress) and hand back a result nobody took."""
        with self._changed:
            self._closed = True
            self._changed.notify_all()
        self._thread.join()
        return self.take()

    def _loop(self) -> None:
        while True:
            with self._changed:
                while not self._wanted and not self._closed:
                    self._changed.wait()
                if self._closed:
                    return
                self._wanted, self._busy = False, True
            try:
                item = self._produce()
            except BaseException as exc:  # handed to the scheduler, which stops the session
                log.exception("preparing the next trial failed")
                item, self.error = None, exc
            with self._changed:
                self._ready, self._busy = item, False
                self._changed.notify_all()
            if self.error is not None:
                return
