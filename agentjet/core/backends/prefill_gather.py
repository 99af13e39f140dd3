"""When the decode loop prefills newcomers (at once, or after a few decode steps, in batches), and in how many forwards.

On a CPU a prefill of one short prompt runs at half the tokens/s of a batch of them (smollm2-135m, bf16,
170-token prompts: 1,657 tokens/s alone, 2,390 in fours, 3,249 in eights), and every running row stalls
while it runs. A busy loop (at least `busy` rows decoding, e.g. 32 games of werewolves) saw mostly lone
prefills: a newcomer arrives every other step. There a newcomer now waits up to `steps` decode steps for
company, and goes as soon as `rows` of them wait. A quiet loop (a chat, a few episodes) admits at once, as
does a GPU loop (`immediate`), where a lone prefill is cheap and latency is what counts.

A gathered batch is left-padded to its longest suffix, and on a CPU a padding token costs what a real one
does: in werewolves' first round (fp32), a prompt with a prefix-cache hit (~170 new tokens) beside one
without (~320) made 21% of the prefilled tokens padding. So `groups` splits the batch by suffix length
where the padding saved is worth more than another forward's fixed cost, `split_tokens` tokens' worth
(measured on smollm2-135m: ~68 in fp32 on 2 AVX2 cores, ~216 in bf16 with AMX; the default sits between).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["PrefillGather"]


@dataclass
class PrefillGather:
    """The admission rule; `due` before a turn's prefill, `stepped` after each decode step, `groups` per prefill."""

    rows: int = 4  # prefill as soon as this many wait (or every free slot's worth)
    steps: int = 4  # ... or once the oldest has waited this many decode steps
    busy: int = 8  # gather only while at least this many rows decode
    split_tokens: int = 128  # one forward's fixed cost in tokens of prefill; 0 never splits a prefill
    _waited: int = 0  # decode steps the waiting newcomers have waited so far (0 once they are let through)

    @classmethod
    def immediate(cls) -> PrefillGather:
        """Every newcomer is prefilled at the next turn, all in one forward (the rule before gathering)."""
        return cls(rows=1, steps=0, busy=0, split_tokens=0)

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

    def groups(self, lengths: Sequence[int]) -> list[list[int]]:
        """The rows (indices into `lengths`, the tokens each must prefill) of each forward, longest first.

        Each forward pads its rows to its longest; the split minimises padded tokens plus `split_tokens`
        per forward (exactly, over groups of neighbours in length order).
        """
        order = sorted(range(len(lengths)), key=lambda i: -lengths[i])
        if self.split_tokens <= 0 or len(order) < 2:
            return [order] if order else []
        # best[j]: the least cost of prefilling order[:j]; cut[j]: where its last group starts
        best, cut = [0] * (len(order) + 1), [0] * (len(order) + 1)
        for j in range(1, len(order) + 1):
            best[j], cut[j] = min((best[i] + lengths[order[i]] * (j - i) + self.split_tokens, i) for i in range(j))
        groups, j = [], len(order)
        while j > 0:
            groups.append(order[cut[j] : j])
            j = cut[j]
        return groups[::-1]
