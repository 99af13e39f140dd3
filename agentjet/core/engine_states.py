"""The engine state machine: legal moves (`NEXT_STATES`), which states serve, and the door new calls wait at.

The training loop drives ROLLING -> UPDATING -> DRAINING -> ROLLING around each update. While
DRAINING the door is shut: a new call waits at it (up to `admission_timeout_s`) so that every
call samples from one policy version, and `drain` waits for the calls already running to end.
Event-loop only.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable

from agentjet.core.errors import EngineNotReady
from agentjet.core.types import NEXT_STATES, EngineState

__all__ = ["SERVING", "EngineStates"]

log = logging.getLogger(__name__)

SERVING = frozenset({EngineState.ROLLING, EngineState.DRAINING, EngineState.UPDATING})
_HELD = frozenset({EngineState.DRAINING})  # new calls wait at the door for the hot-load
_DRAIN_POLL_S = 0.02


class EngineStates:
    """The state of one engine and its door; `calls_in_flight` counts the calls still sampling."""

    def __init__(self, *, calls_in_flight: Callable[[], int], admission_timeout_s: float) -> None:
        self.admission_timeout_s = admission_timeout_s
        self._calls_in_flight = calls_in_flight
        self._state = EngineState.OFFLINE
        self._door = asyncio.Event()  # clear while draining: new calls wait for the hot-load
        self._door.set()

    @property
    def state(self) -> EngineState:
        return self._state

    @property
    def is_serving(self) -> bool:
        return self._state in SERVING

    def move(self, to: EngineState) -> None:
        """A legal move (NEXT_STATES), or EngineNotReady; shuts the door while draining."""
        if to not in NEXT_STATES[self._state]:
            raise EngineNotReady(f"cannot go from {self._state} to {to}", state=str(self._state))
        log.info("engine state %s -> %s", self._state, to)
        self._state = to
        if to in _HELD:
            self._door.clear()
        else:
            self._door.set()

    def boot_failed(self) -> None:
        """The backend did not start: back to offline from booting (no move the table lists)."""
        self._state = EngineState.OFFLINE

    def require_serving(self) -> None:
        if self._state not in SERVING:
            raise EngineNotReady(
                f"engine is {self._state}; start it with POST /swarm/engine/start",
                state=str(self._state),
                needed=tuple(str(s) for s in sorted(SERVING)),
            )

    @property
    def is_admitting(self) -> bool:
        """False while draining: a new call must `wait_at_door`."""
        return self._door.is_set()

    async def wait_at_door(self) -> None:
        """Wait until the hot-load is over; EngineNotReady past `admission_timeout_s`."""
        try:
            await asyncio.wait_for(self._door.wait(), self.admission_timeout_s)
        except TimeoutError:
            raise EngineNotReady(
                f"an update has held calls for {self.admission_timeout_s:.0f}s; retry", state=str(self._state)
            ) from None

    async def drain(self, timeout_s: float) -> bool:
        """True once no call is in flight; False past `timeout_s` (a call longer than any sane `max_tokens`)."""
        deadline = time.monotonic() + timeout_s
        while self._calls_in_flight() > 0:
            if time.monotonic() > deadline:
                return False
            await asyncio.sleep(_DRAIN_POLL_S)
        return True

    def resume(self) -> bool:
        """Back to rolling after an update or a restore; False when the engine was stopped meanwhile."""
        if self._state in (EngineState.DRAINING, EngineState.UPDATING):
            self.move(EngineState.ROLLING)
            return True
        return False

    async def wait_rolling(self) -> None:
        """Until the backend has booted and the engine rolls (the training loop's restore waits here)."""
        while self._state is not EngineState.ROLLING:
            await asyncio.sleep(_DRAIN_POLL_S)
