"""The GPU check (`agentjet bench gpu`, `python -m agentjet.bench.gpu`, `scripts/gpu-check.sh`).

Sized for a short GPU loan: at `--shape 7b` it finishes within a 450 s budget on one H200.
It needs only torch, transformers, peft, pydantic (+ pydantic-settings, via `core.config`)
and pyyaml in-process; parts needing more (pytest, the web stack) run in children and are
recorded as skipped when those packages are missing. Nothing heavy is imported at module top.

budget.py      The GPU check's time budget: every stage asks before it starts and is skipped rather than overrun.
check.py       `agentjet bench gpu`: the whole GPU check, its parts in order under one time budget, as one JSON
               result.
children.py    Parts a and c of the GPU check, each in a child process under the time left: the backend contract and
               a learn-check.
memory.py      Peak memory per stage of the GPU check: CUDA's allocator peak (reset per stage), or the process RSS
               on a CPU.
model_part.py  Part b of the GPU check: rollouts and training updates on a random model of a real shape, through the
               real code.
shapes.py      A randomly initialised model of a given shape, saved as a local HF folder the real code paths load.
"""

from agentjet.bench.gpu.check import PARTS, GpuCheckSettings, main, run_gpu_check

__all__ = ["PARTS", "GpuCheckSettings", "main", "run_gpu_check"]
