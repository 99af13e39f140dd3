"""Deltas of one decode step, handed to their sequences' event loops with one callback per loop.

The decode loop's worker thread samples for many sequences at once; waking each sequence's event
loop once per token would cost a `call_soon_threadsafe` per row and step.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Protocol

from agentjet.core.types import TokenDelta

__all__ = ["Item", "Outbox", "Receiver"]

log = logging.getLogger(__name__)

Item = TokenDelta | BaseException


class Receiver(Protocol):
    """A sequence as the outbox sees it (`decode_loop.Receiver`): its event loop and its queue."""

    loop: asyncio.AbstractEventLoop
    deltas: asyncio.Queue[Item]


class Outbox:
    """Deltas produced in one step, delivered to their event loops in one callback per loop."""

    def __init__(self) -> None:
        self._items: list[tuple[Receiver, Item]] = []

    def put(self, seq: Receiver, item: Item) -> None:
        self._items.append((seq, item))

    def send(self) -> None:
        by_loop: dict[asyncio.AbstractEventLoop, list[tuple[Receiver, Item]]] = {}
        for seq, item in self._items:
            by_loop.setdefault(seq.loop, []).append((seq, item))
        self._items = []
        for loop, items in by_loop.items():
            try:
                loop.call_soon_threadsafe(_deliver, items)
            except RuntimeError:  # that event loop is closed: nobody is listening any more
                log.warning("dropped %d deltas for a closed event loop", len(items))


def _deliver(items: list[tuple[Receiver, Item]]) -> None:
    for seq, item in items:
        seq.deltas.put_nowait(item)
