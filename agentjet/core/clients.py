"""Which swarm clients are active, and which of them asked for an update (C4/C5 bookkeeping).

A client is *seen* when it begins or ends an episode, sends a heartbeat or asks for an
update; it stays active while it holds an open episode or was seen within the idle timeout.
An update request asks for one update: the training loop consumes the requests a trained
batch answered. A client that goes inactive is forgotten with its request, so a departed
client neither blocks C5 nor, coming back much later, triggers C4 with a stale request.
Time is an argument (the engine's clock): the tracker reads no clock itself. Event-loop only.
"""

from __future__ import annotations

from collections.abc import Mapping, Set

__all__ = ["ClientTracker"]


class ClientTracker:
    """Last-seen times and pending update requests, keyed by client id; owned by the engine."""

    def __init__(self, idle_timeout_s: float) -> None:
        self.idle_timeout_s = idle_timeout_s
        self._seen: dict[str, float] = {}
        self._requests: dict[str, int] = {}  # client id -> request number (tells a renewed request apart)
        self._next_request = 1

    def seen(self, client_id: str, now: float) -> None:
        self._seen[client_id] = now

    def set_ready(self, client_id: str, ready: bool, now: float) -> None:
        """Ask for (ready) or withdraw from the next update; asking again keeps one request."""
        self.seen(client_id, now)
        if not ready:
            self._requests.pop(client_id, None)
        elif client_id not in self._requests:
            self._requests[client_id] = self._next_request
            self._next_request += 1

    def forget_idle(self, now: float, holding: Set[str]) -> frozenset[str]:
        """Drop clients past the idle timeout that hold no open episode (and their requests);
        returns the ids dropped, so the caller knows whether the active set shrank."""
        gone = frozenset(c for c, seen in self._seen.items() if now - seen > self.idle_timeout_s and c not in holding)
        for client_id in gone:
            del self._seen[client_id]
            self._requests.pop(client_id, None)
        return gone

    def active(self, now: float, holding: Set[str]) -> frozenset[str]:
        """Clients holding an open episode or seen within the idle timeout."""
        self.forget_idle(now, holding)
        return frozenset(self._seen) | frozenset(holding)

    def requests(self) -> dict[str, int]:
        """A snapshot of the pending requests, to hand back to `consume` once they are answered."""
        return dict(self._requests)

    def consume(self, answered: Mapping[str, int]) -> None:
        """Clear the requests an update answered; a request renewed since the snapshot stays."""
        for client_id, number in answered.items():
            if self._requests.get(client_id) == number:
                del self._requests[client_id]
