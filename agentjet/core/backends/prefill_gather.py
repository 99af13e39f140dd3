"""When the decode loop prefills newcomers: at once, or after a few decode steps, so that they come in batches.

On a CPU a prefill of one short prompt runs at half the tokens/s of a batch of them (smollm2-135m, bf16,
170-token prompts: 1,657 tokens/s alone, 2,390 in fours, 3,249 in eights), and every running row stalls
while it runs. A busy loop (at least `busy` rows decoding, e.g. 32 games of werewolves) saw mostly lone
prefills: a newcomer arrives every other step. There a newcomer now waits up to `steps` decode steps for
company, and goes as soon as `rows` of them wait. A quiet loop (a chat, a few episodes) admits at once, as
does a GPU loop (`immediate`), where a lone prefill is cheap and latency is what counts.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["PrefillGather"]


@dataclass
class PrefillGather:
    """The admission rule; `due` before a turn's prefill, `stepped` after each decode step."""

    rows: int = 4  # prefill as soon as this many wait (or every free slot's worth)
    steps: int = 4  # ... or once the oldest has waited this many decode steps
    busy: int = 8  # gather only while at least this many rows decode
    _waited: int = 0  # decode steps the waiting newcomers have waited so far (0 once they are let through)

    @classmethod
    def immediate(cls) -> PrefillGather:
        """Every newcomer is prefilled at the next turn (the rule before gathering)."""
        return cls(rows=1, steps=0, busy=0)

    def due(self, waiting: int, running: int, free: int) -> bool:
        """Prefill the waiting ones this turn? True also restarts the count (they are let through now)."""
        if waiting == 0:
            return False
        if running < self.busy or waiting >= min(self.rows, max(free, 1)) or self._waited >= self.steps:
            self._waited = 0
            return True
        return False

    def stepped(self, waiting: int) -> None:
        """A decode step ran with `waiting` newcomers left waiting."""
        self._waited = self._waited + 1 if waiting else 0
