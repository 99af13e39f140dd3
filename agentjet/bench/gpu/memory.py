"""Peak memory per stage of the GPU check: CUDA's allocator peak (reset per stage), or the process RSS on a CPU."""

from __future__ import annotations

import resource
from typing import Any

__all__ = ["MemoryProbe"]

_GIB = 1024**3


class MemoryProbe:
    """`reset()` at a stage's start, `read()` at its end.

    On CUDA the figures are `torch.cuda.max_memory_allocated` since the reset and what was
    already allocated then (the copies earlier stages left resident). A CPU process's peak RSS
    cannot be reset: there `peak_gib` is the whole process's so far, and `peak_of` says so.
    """

    def __init__(self, device: str) -> None:
        self.device = device
        self.is_cuda = device.startswith("cuda")
        self._resident = 0

    def reset(self) -> None:
        if not self.is_cuda:
            return
        import torch

        torch.cuda.synchronize(self.device)
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats(self.device)
        self._resident = int(torch.cuda.memory_allocated(self.device))

    def read(self) -> dict[str, Any]:
        if not self.is_cuda:
            rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # KiB on Linux
            return {"peak_gib": round(rss / _GIB, 3), "peak_of": "process peak RSS (CPU: never reset)"}
        import torch

        torch.cuda.synchronize(self.device)
        peak = int(torch.cuda.max_memory_allocated(self.device))
        return {
            "peak_gib": round(peak / _GIB, 3),
            "resident_before_gib": round(self._resident / _GIB, 3),
            "peak_of": "torch.cuda.max_memory_allocated since the stage began",
        }
