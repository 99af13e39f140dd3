"""Helpers for tests that interrupt a child process with SIGINT (Ctrl-C).

A shell without job control starts background commands with SIGINT ignored (POSIX), and the
ignored disposition is inherited across exec; Python then never installs its KeyboardInterrupt
handler, so a suite started as `cmd &` from a script would see Ctrl-C tests hang. Children that a
test interrupts start with the default disposition instead, as they would from a terminal.
"""

from __future__ import annotations

import signal


def sigint_default() -> None:
    """`preexec_fn` for Popen: SIGINT back to its default before exec (Python then handles it)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
