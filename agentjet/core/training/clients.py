"""Which swarm clients are active, and which of them asked for an update (C4/C5 bookkeeping).

A client is *seen* when it begins or ends an episode, sends a heartbeat or asks for an
update; it stays active while it holds an open episode or was seen within the idle timeout.
An update request asks for one update: the training loop consumes the requests a trained
batch answered. A client that goes inactive is forgotten with its request, so a departed
client neither blocks C5 nor, coming back much later, triggers C4 with a stale request.
Time is an argument (the engine's clock): the tracker reads no clock itself. Event-loop only.

A client id belongs to the client token that first used it while it is known here: another
client token cannot vote, heartbeat or begin episodes under it (the admin may). A forgotten
client's id is free again.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Set
from typing import Any

from agentjet.core.errors import PermissionDenied
from agentjet.core.types import ADMIN, Principal

__all__ = ["ClientRoster", "ClientTracker"]

log = logging.getLogger(__name__)


class ClientTracker:
    """Last-seen times and pending update requests, keyed by client id; owned by the engine."""

    def __init__(self, idle_timeout_s: float) -> None:
        self.idle_timeout_s = idle_timeout_s
        self._seen: dict[str, float] = {}
        self._requests: dict[str, int] = {}  # client id -> request number (tells a renewed request apart)
        self._next_request = 1
        self._owners: dict[str, str] = {}  # client id -> the client token that uses it

    def claim(self, client_id: str, principal: Principal) -> None:
        """Bind an unbound id to a client token; PermissionDenied if another client token holds it."""
        if principal.is_admin:
            return
        owner = self._owners.setdefault(client_id, principal.principal_id)
        if owner != principal.principal_id:
            raise PermissionDenied(f"client id {client_id!r} is in use by another client token; choose another id")

    def owned_by(self, principal: Principal) -> frozenset[str]:
        """The client ids this principal may see in the status (all of them for the admin)."""
        if principal.is_admin:
            return frozenset(self._seen) | frozenset(self._owners)
        return frozenset(c for c, owner in self._owners.items() if owner == principal.principal_id)

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
            self._owners.pop(client_id, None)
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


class ClientRoster:
    """The engine's face of the tracker: its clock, the clients holding open episodes, and who may see what.

    `on_changed` (the engine's, passed in: it tells the training loop) is called when a request comes
    or goes or a client leaves: C4/C5 may have a batch now. Event-loop only.
    """

    def __init__(
        self,
        tracker: ClientTracker,
        *,
        clock: Callable[[], float],
        holding: Callable[[], frozenset[str]],
        on_changed: Callable[[], None] | None = None,
    ) -> None:
        self._tracker = tracker
        self._clock = clock
        self._holding = holding
        self._on_changed = on_changed

    def touch(self, client_id: str | None) -> None:
        """The client is alive (begin, end, heartbeat): active for another idle timeout."""
        if client_id:
            self._tracker.seen(client_id, self._clock())

    def claim(self, client_id: str, principal: Principal) -> None:
        self._tracker.claim(client_id, principal)

    def owned_by(self, principal: Principal) -> frozenset[str]:
        return self._tracker.owned_by(principal)

    def request_update(self, client_id: str, *, ready: bool, principal: Principal = ADMIN) -> dict[str, Any]:
        """Ask for (ready) or withdraw from the next update; wakes the training loop."""
        self._tracker.claim(client_id, principal)
        self._tracker.set_ready(client_id, ready, self._clock())
        log.info("client update request id=%s ready=%s", client_id, ready)
        self._changed()
        return self.view(client_id, principal)

    def heartbeat(self, client_id: str, *, principal: Principal = ADMIN) -> dict[str, Any]:
        """A client between episodes says it is still there: it stays active (and C5 waits for it)."""
        self._tracker.claim(client_id, principal)
        self.touch(client_id)
        return self.view(client_id, principal)

    def view(self, client_id: str, principal: Principal = ADMIN) -> dict[str, Any]:
        """One client's state, with the ids of the clients `principal` may see (a client token: its own)."""
        active, requested = self.active(), self.requests()
        visible = self._tracker.owned_by(principal)
        return {
            "client_id": client_id,
            "active": client_id in active,
            "ready": client_id in requested,
            "active_clients": sorted(c for c in active if principal.is_admin or c in visible),
            "requested_clients": sorted(c for c in requested if principal.is_admin or c in visible),
        }

    def active(self) -> frozenset[str]:
        """Clients holding an open episode or seen within the idle timeout. Whoever notices a
        client gone idle (status, the loop, the janitor) says so: C5 may no longer be blocked."""
        now, holding = self._clock(), self._holding()
        gone = self._tracker.forget_idle(now, holding)
        if gone:
            log.info("clients inactive ids=%s", ",".join(sorted(gone)))
            self._changed()
        return self._tracker.active(now, holding)

    def requests(self) -> dict[str, int]:
        """Pending update requests (client id -> request number); pass it to `consume`."""
        return self._tracker.requests()

    def consume(self, answered: Mapping[str, int]) -> None:
        """A batch was trained: the requests it answered are spent (one request, one update)."""
        self._tracker.consume(answered)

    def _changed(self) -> None:
        if self._on_changed is not None:
            self._on_changed()
