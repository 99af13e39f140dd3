"""The GPU check (`agentjet bench gpu`, `python -m agentjet.bench.gpu`, `scripts/gpu-check.sh`).

Sized for a short GPU loan: at `--shape 7b` it finishes within a 450 s budget on one H200.
It needs only torch, transformers, peft, pydantic (+ pydantic-settings, via `core.config`)
and pyyaml in-process; parts needing more (pytest, the web stack) run in children and are
recorded as skipped when those packages are missing. Nothing heavy is imported at module top.
"""

from agentjet.bench.gpu.check import PARTS, GpuCheckSettings, main, run_gpu_check

__all__ = ["PARTS", "GpuCheckSettings", "main", "run_gpu_check"]
