"""Where a model copy lives and in which precision: `--device` and `--dtype` resolved once.

The server holds two copies of the base model, the inference backend's and the trainer's, and
both follow one `Placement`: `auto` means CUDA + bfloat16 when a GPU is visible, else the CPU in
bfloat16 when it has native bf16 matmuls (AVX-512 BF16 or AMX: SmolLM2-135M's prefill, decode
and update ran 2-3x faster than in fp32 on this project's machines, docs/vibe.md) and in float32
when it lacks them (there bf16 is emulated, slower than fp32). The LoRA adapter and the
optimiser state stay float32 whatever the base dtype (`policy_model.build_model`).
`memory_report` is what `/swarm/status` shows per copy.
"""

from __future__ import annotations

import logging
import resource
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from agentjet.core.errors import ConfigError
from agentjet.core.launch.allocator import process_malloc

if TYPE_CHECKING:  # torch is slow to import; this module is imported by config-only code
    import torch

__all__ = [
    "DTYPE_CHOICES",
    "Placement",
    "avoid_cudnn_attention",
    "cpu_has_native_bf16",
    "memory_report",
    "parameter_bytes",
    "resolve_placement",
]

DTYPE_CHOICES = ("auto", "float32", "bfloat16")
log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Placement:
    """A resolved device ("cpu", "cuda:0") and dtype name ("float32", "bfloat16")."""

    device: str
    dtype: str

    @property
    def torch_dtype(self) -> torch.dtype:
        import torch

        return {"float32": torch.float32, "bfloat16": torch.bfloat16}[self.dtype]

    def describe(self) -> str:
        return f"{self.device} {self.dtype}"


def resolve_placement(device: str = "auto", dtype: str = "auto") -> Placement:
    """`device` in auto|cpu|cuda|cuda:N, `dtype` in auto|float32|bfloat16; ConfigError on a bad or absent device."""
    import torch

    device = device.strip().lower()
    if dtype not in DTYPE_CHOICES:
        raise ConfigError(f"dtype {dtype!r} is not one of {', '.join(DTYPE_CHOICES)}")
    has_cuda = torch.cuda.is_available()
    if device == "auto":
        device = "cuda:0" if has_cuda else "cpu"
    elif device == "cuda":
        device = "cuda:0"
    if device.startswith("cuda"):
        index = device.removeprefix("cuda:")
        if not index.isdigit():
            raise ConfigError(f"device {device!r} is not one of auto, cpu, cuda, cuda:N")
        if not has_cuda:
            raise ConfigError(f"device {device} was asked for but torch sees no CUDA GPU (use --device cpu or auto)")
        if int(index) >= torch.cuda.device_count():
            raise ConfigError(f"device {device}: only {torch.cuda.device_count()} CUDA device(s) are visible")
    elif device != "cpu":
        raise ConfigError(f"device {device!r} is not one of auto, cpu, cuda, cuda:N")
    if dtype == "auto":
        dtype = "bfloat16" if device.startswith("cuda") or cpu_has_native_bf16() else "float32"
    return Placement(device, dtype)


def cpu_has_native_bf16() -> bool:
    """Whether this CPU has bf16 dot-product instructions (AVX-512 BF16 or AMX), torch's own probes.

    Not `torch.ops.mkldnn._is_mkldnn_bf16_supported()`: that is true from plain AVX-512 (Skylake) on,
    where oneDNN emulates bf16 several times slower than fp32.
    """
    import torch.cpu

    probes = ("_is_avx512_bf16_supported", "_is_amx_tile_supported")  # private, so looked up, not assumed
    return any(bool(getattr(torch.cpu, probe, lambda: False)()) for probe in probes)


def avoid_cudnn_attention(device: str) -> bool:
    """On CUDA, turn PyTorch's cuDNN attention kernel off (process-wide); True when this changed it.

    Decoding grows every sequence's key length by one token a step, and cuDNN builds an execution
    plan for each new shape: on an H200 that cost 2.6 ms of CPU per attention call, so a decode step
    of a 30-layer model took 125 ms, 39 ms with cuDNN off (the memory-efficient and flash kernels
    take over; docs/gpus.md). It is process-wide, so a server's trainer runs without it too: one update
    of 240 samples in 512-token micro-batches took 41 s without it, 36 s with it (one run each).
    """
    if not device.startswith("cuda"):
        return False
    import torch

    if not torch.backends.cuda.cudnn_sdp_enabled():  # type: ignore[no-untyped-call]  # unannotated in torch
        return False
    torch.backends.cuda.enable_cudnn_sdp(False)
    log.info("cuDNN scaled-dot-product attention is off: it re-plans at every decode step's new key length")
    return True


def parameter_bytes(parameters: Any) -> int:
    """The bytes `parameters` hold. Count once per model copy: walking a PEFT model's modules takes
    ~16 ms of the GIL, and a status poll that did it at 10 Hz slowed a CPU update by a third."""
    return sum(int(p.numel()) * p.element_size() for p in parameters)


def memory_report(device: str, dtype: str, param_bytes: int) -> dict[str, Any]:
    """Peak memory of one model copy: CUDA's peak allocated on its device, or the process peak RSS on CPU.

    `param_bytes` is the copy's `parameter_bytes`, counted when it was built. On CPU both copies
    share one process, so `peak_bytes` is the process's, said by `peak_of`; `malloc` names the
    process's allocator (tcmalloc makes a CPU update ~25% faster: `launch/allocator.py`).
    """
    import torch

    if device.startswith("cuda") and torch.cuda.is_available():
        peak, scope = int(torch.cuda.max_memory_allocated(torch.device(device))), "device"
    else:
        peak, scope = int(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss) * 1024, "process"
    return {
        "device": device, "dtype": dtype, "param_bytes": param_bytes,
        "peak_bytes": peak, "peak_of": scope, "malloc": process_malloc(),
    }  # fmt: skip
