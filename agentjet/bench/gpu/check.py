"""`agentjet bench gpu`: the whole GPU check, its parts in order under one time budget, as one JSON result.

Parts: `backend_contract` (a: the backend contract tests on the device, `children.py`),
`random_model` (b: rollouts and training on a random model of a real shape, `model_part.py`),
`learn_check` (c: a short GRPO run through a real server, `children.py`). Each part records
its status and seconds; one that no longer fits the budget is "skipped: budget".
"""

from __future__ import annotations

import asyncio
import json
import os
import platform
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentjet.bench.gpu.budget import SKIPPED_BUDGET, Budget
from agentjet.bench.gpu.shapes import ShapeName

__all__ = ["PARTS", "GpuCheckSettings", "main", "run_gpu_check"]

Progress = Callable[[str], None]
PARTS = ("backend_contract", "random_model", "learn_check")
_ROOT = Path(__file__).resolve().parents[3]  # the checkout: tests/ and pyproject.toml live here
_CONTRACT_SHARE = 0.25  # the contract tests may use at most this share of the budget
_NEEDS_S: dict[ShapeName, dict[str, float]] = {  # the least time each part needs to be worth starting
    "7b": {"backend_contract": 20, "random_model": 150, "learn_check": 60},
    "135m": {"backend_contract": 20, "random_model": 40, "learn_check": 60},
    "small": {"backend_contract": 10, "random_model": 10, "learn_check": 15},
}
_LEARN: dict[ShapeName, tuple[str, int]] = {
    "7b": ("smollm2-135m", 20),
    "135m": ("smollm2-135m", 20),
    "small": ("tiny", 2),
}


def _stderr(message: str) -> None:
    sys.stderr.write(f"[bench gpu] {message}\n")
    sys.stderr.flush()


@dataclass(frozen=True)
class GpuCheckSettings:
    """What to check where. `learn_model`/`learn_steps` None: SmolLM2 x 20 at 7b, tiny x 2 at small."""

    device: str = "auto"
    shape: ShapeName = "7b"
    out: Path = Path("gpu-check")
    budget_s: float = 450.0
    contract: Path = _ROOT / "tests" / "core" / "test_backend_contract.py"
    learn_model: str | None = None
    learn_steps: int | None = None
    skip: frozenset[str] = field(default_factory=frozenset)


def _environment(device: str) -> dict[str, Any]:
    import peft
    import torch
    import transformers

    info: dict[str, Any] = {
        "device": device,
        "python": platform.python_version(),
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "peft": peft.__version__,
        "cuda": torch.version.cuda,
        "cpu_count": os.cpu_count(),
    }
    if device.startswith("cuda"):
        props = torch.cuda.get_device_properties(device)
        info.update(device_name=props.name, device_memory_gib=round(props.total_memory / 1024**3, 1))
    else:
        info["device_name"] = f"CPU: {platform.processor() or platform.machine()}"
    return info


def _run_part(name: str, settings: GpuCheckSettings, device: str, budget: Budget, progress: Progress) -> dict[str, Any]:
    from agentjet.bench.gpu import children
    from agentjet.bench.gpu.model_part import run_model_part

    if name == "backend_contract":
        timeout_s = min(budget.left_s(), _CONTRACT_SHARE * budget.total_s)
        return children.run_contract(settings.contract, device, timeout_s, _ROOT)
    if name == "random_model":
        return asyncio.run(run_model_part(settings.shape, device, budget, progress))
    default_model, default_steps = _LEARN[settings.shape]
    model = settings.learn_model or default_model
    steps = default_steps if settings.learn_steps is None else settings.learn_steps
    out = settings.out / "learn-check"
    return children.run_learn_check(model, steps, device, out, budget.left_s(), _ROOT)


def run_gpu_check(settings: GpuCheckSettings, progress: Progress = _stderr) -> dict[str, Any]:
    """Every part in order; the result is also written to `OUT/gpu_check.json`."""
    from agentjet.core.placement import resolve_placement

    budget = Budget(settings.budget_s)
    device = resolve_placement(settings.device, "bfloat16").device
    result: dict[str, Any] = {
        **_environment(device),
        "shape": settings.shape,
        "budget_s": settings.budget_s,
        "memory_note": "CUDA: max_memory_allocated, reset per stage; CPU: the process peak RSS, never reset",
        "parts": {},
    }
    for name in PARTS:
        started = time.perf_counter()
        if name in settings.skip:
            part: dict[str, Any] = {"status": "skipped: --skip"}
        elif not budget.allows(_NEEDS_S[settings.shape][name]):
            part = {"status": SKIPPED_BUDGET}
        else:
            progress(f"{name}: starting ({budget.left_s():.0f} s of the budget left)")
            try:
                part = _run_part(name, settings, device, budget, progress)
            except Exception as exc:  # one broken part must not hide the others' figures
                part = {"status": f"error: {type(exc).__name__}: {exc}"[:2000]}
        part["seconds"] = round(time.perf_counter() - started, 2)
        result["parts"][name] = part
        progress(f"{name}: {part['status']} ({part['seconds']} s)")
    result["total_s"] = round(budget.elapsed_s(), 2)
    result["ok"] = not any(_is_failure(p["status"]) for p in result["parts"].values())
    settings.out.mkdir(parents=True, exist_ok=True)
    (settings.out / "gpu_check.json").write_text(json.dumps(result, indent=2) + "\n")
    return result


def _is_failure(status: str) -> bool:
    return status.startswith(("error", "failed"))


def _summary(result: dict[str, Any]) -> dict[str, Any]:
    """The table form: environment lines, then one line per part."""
    flat = {k: v for k, v in result.items() if not isinstance(v, dict)}
    for name, part in result["parts"].items():
        flat[name] = f"{part['status']} ({part['seconds']} s)"
    return flat


def main(settings: GpuCheckSettings, *, as_json: bool) -> int:
    """Run, print (JSON or a table), and exit 1 when a part failed."""
    from agentjet.bench.output import print_result

    result = run_gpu_check(settings)
    print_result(result if as_json else _summary(result), as_json=as_json)
    return 0 if result["ok"] else 1
