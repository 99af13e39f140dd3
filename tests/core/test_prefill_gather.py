"""The decode loop's admission rule: a busy CPU loop gathers newcomers into one prefill, a quiet one does not."""

from __future__ import annotations

import pytest

from agentjet.core.backends.prefill_gather import PrefillGather


def _turns(gather: PrefillGather, arrivals: list[int], running: int, free: int = 32) -> list[int]:
    """Feed `arrivals[t]` newcomers before turn t; the sizes of the prefills the rule lets through, per turn."""
    waiting, prefills = 0, []
    for new in arrivals:
        waiting += new
        if gather.due(waiting, running, free):
            prefills.append(waiting)
            waiting = 0
        else:
            prefills.append(0)
        gather.stepped(waiting)
    return prefills


def test_a_busy_loop_waits_for_company_then_prefills_together() -> None:
    assert _turns(PrefillGather(), [1, 0, 1, 0, 1, 0, 0], running=20) == [0, 0, 0, 0, 3, 0, 0]  # 4 steps waited


def test_enough_newcomers_go_at_once() -> None:
    assert _turns(PrefillGather(), [1, 1, 2, 0], running=20) == [0, 0, 4, 0]
    assert _turns(PrefillGather(), [6], running=20) == [6]


def test_the_free_slots_bound_the_wait() -> None:
    assert _turns(PrefillGather(), [2], running=30, free=2) == [2]  # the batch can take no more: no point waiting
    assert _turns(PrefillGather(), [1], running=32, free=0) == [1]  # full: the loop's own limit keeps it waiting


@pytest.mark.parametrize("running", [0, 1, 7])
def test_a_quiet_loop_admits_every_newcomer_at_once(running: int) -> None:
    assert _turns(PrefillGather(), [1, 0, 1, 1], running=running) == [1, 0, 1, 1]


def test_immediate_is_the_rule_without_gathering() -> None:
    assert _turns(PrefillGather.immediate(), [1, 0, 1, 2], running=31) == [1, 0, 1, 2]


def test_nothing_waiting_is_never_due() -> None:
    gather = PrefillGather()
    assert not any(gather.due(0, running, 32) for running in (0, 5, 20))
