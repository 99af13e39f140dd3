"""The engine state machine: legal moves only, the door shut while draining, the drain before a hot-load."""

from __future__ import annotations

import asyncio

import pytest

from agentjet.core.engine_states import EngineStates
from agentjet.core.errors import EngineNotReady
from agentjet.core.types import EngineState


def _rolling(in_flight: list[int], admission_timeout_s: float = 1.0) -> EngineStates:
    states = EngineStates(calls_in_flight=lambda: in_flight[0], admission_timeout_s=admission_timeout_s)
    states.move(EngineState.BOOTING)
    states.move(EngineState.ROLLING)
    return states


async def test_the_door_is_shut_only_while_draining() -> None:
    states = _rolling([0])
    assert states.is_serving and states.is_admitting
    states.move(EngineState.UPDATING)  # calls are still served by the current weights
    assert states.is_admitting
    states.move(EngineState.DRAINING)
    assert not states.is_admitting
    waiting = asyncio.create_task(states.wait_at_door())
    await asyncio.sleep(0.01)
    assert not waiting.done()
    assert states.resume() is True and states.state is EngineState.ROLLING
    await asyncio.wait_for(waiting, 1.0)


async def test_a_call_held_past_the_admission_timeout_is_refused() -> None:
    states = _rolling([0], admission_timeout_s=0.05)
    states.move(EngineState.DRAINING)
    with pytest.raises(EngineNotReady, match="held calls"):
        await states.wait_at_door()


async def test_drain_waits_for_running_calls_and_gives_up_past_its_timeout() -> None:
    in_flight = [1]
    states = _rolling(in_flight)
    assert await states.drain(0.05) is False
    asyncio.get_running_loop().call_later(0.05, in_flight.__setitem__, 0, 0)
    assert await states.drain(5.0) is True


def test_illegal_moves_are_refused_and_a_stopped_engine_does_not_resume() -> None:
    states = _rolling([0])
    with pytest.raises(EngineNotReady, match="cannot go from"):
        states.move(EngineState.BOOTING)
    states.move(EngineState.OFFLINE)
    assert states.resume() is False and states.state is EngineState.OFFLINE
    with pytest.raises(EngineNotReady, match="start it with"):
        states.require_serving()
