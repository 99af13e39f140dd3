"""`wait_for_update`: a client waiting out a round's update asks the server rarely once the update runs long.

Why it matters: on a CPU the server's update and its HTTP handlers share two cores and one GIL, so
a waiting client polling at 10 Hz takes time from the very update it waits for.
"""

from __future__ import annotations

from typing import Any

import pytest

from agentjet.tasks.play import swarm_side
from agentjet.tasks.play.swarm_side import wait_for_update


class _Clock:
    """Time that passes only when the code under test sleeps."""

    def __init__(self) -> None:
        self.now = 0.0

    def monotonic(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


class _Server:
    """A scripted server whose update of step 1 ends `update_s` after the wait began."""

    def __init__(self, clock: _Clock, update_s: float) -> None:
        self.clock, self.update_s = clock, update_s
        self.polls: list[float] = []
        self.requested = self.heartbeats = 0

    def status(self) -> dict[str, Any]:
        self.polls.append(self.clock.now)
        done = self.clock.now >= self.update_s
        return {"step": 1 if done else 0, "state": "rolling" if done else "updating"}

    def request_update(self) -> dict[str, Any]:
        self.requested += 1
        return {}

    def heartbeat(self) -> dict[str, Any]:
        self.heartbeats += 1
        return {}


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> _Clock:
    fake = _Clock()
    monkeypatch.setattr(swarm_side.time, "monotonic", fake.monotonic)
    monkeypatch.setattr(swarm_side.time, "sleep", fake.sleep)
    return fake


@pytest.mark.parametrize("update_s", [0.05, 0.5, 3.0, 60.0, 240.0])
def test_the_wait_ends_soon_after_the_update_and_polls_at_most_about_once_a_second(
    clock: _Clock, update_s: float
) -> None:
    server = _Server(clock, update_s)
    wait_for_update({"s": server}, timeout_s=600.0, tick=lambda: None, since={"s": 0})  # type: ignore[dict-item]
    assert server.requested == 1
    assert clock.now - update_s <= 1.0 + 1e-9  # noticed within one (longest) pause
    assert len(server.polls) <= update_s + 8  # ~1 a second once the update runs long, not 10
    gaps = [b - a for a, b in zip(server.polls, server.polls[1:], strict=False)]
    assert all(gap <= 1.0 + 1e-9 for gap in gaps)
    if update_s >= 3.0:
        assert gaps[0] == pytest.approx(0.1)  # a short update is still seen at once
        assert server.heartbeats >= update_s // 12  # the waiting client stays active: a beat every ~10 s


def test_a_wait_past_its_timeout_says_which_server_did_not_step(clock: _Clock) -> None:
    server = _Server(clock, update_s=1e9)
    with pytest.raises(TimeoutError, match=r"no update within 30 s on \['s'\]"):
        wait_for_update({"s": server}, timeout_s=30.0, tick=lambda: None, since={"s": 0})  # type: ignore[dict-item]
    assert len(server.polls) <= 30 + 8
