"""`signals_stop_once`: the first SIGINT/SIGTERM interrupts, later ones are answered, and the old handlers come back."""

from __future__ import annotations

import os
import signal

import pytest

from agentjet.core.launch.interrupts import signals_stop_once


@pytest.mark.parametrize(("first", "second"), [(signal.SIGTERM, signal.SIGTERM), (signal.SIGINT, signal.SIGTERM),
                                             (signal.SIGTERM, signal.SIGINT)])  # fmt: skip
def test_first_signal_interrupts_and_a_second_cannot_cut_the_cleanup(
    first: int, second: int, capsys: pytest.CaptureFixture[str]
) -> None:
    before = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    cleaned = False
    with pytest.raises(KeyboardInterrupt), signals_stop_once("still stopping (test)"):
        try:
            os.kill(os.getpid(), first)
            pytest.fail("the first signal did not interrupt")  # its handler runs before this line
        finally:
            os.kill(os.getpid(), second)  # during the cleanup: answered, not raised
            cleaned = True
    assert cleaned
    assert "still stopping (test)" in capsys.readouterr().err
    assert {sig: signal.getsignal(sig) for sig in before} == before
