"""`python -m agentjet.bench.gpu`: the GPU check without the CLI (typer and `agentjet.cli` may be missing)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import cast

from agentjet.bench.gpu.check import PARTS, GpuCheckSettings, main
from agentjet.bench.gpu.shapes import SHAPES, ShapeName


def _settings(argv: list[str]) -> tuple[GpuCheckSettings, bool]:
    parser = argparse.ArgumentParser(prog="python -m agentjet.bench.gpu", description=__doc__)
    parser.add_argument("--device", default="auto", help="auto|cpu|cuda|cuda:N")
    parser.add_argument("--shape", default="7b", choices=sorted(SHAPES), help="the random model's shape")
    parser.add_argument("--json", action="store_true", help="print the JSON result")
    parser.add_argument("--out", type=Path, default=Path("gpu-check"), help="gpu_check.json and learn-check/ go here")
    parser.add_argument("--budget", type=float, default=450.0, help="seconds; a part that no longer fits is skipped")
    parser.add_argument("--contract", type=Path, default=GpuCheckSettings().contract, help="backend contract tests")
    parser.add_argument("--learn-model", default=None, help="learn-check model (default: smollm2-135m; tiny at small)")
    parser.add_argument("--learn-steps", type=int, default=None, help="learn-check steps (default: 20; 2 at small)")
    parser.add_argument("--skip", action="append", default=[], choices=PARTS, help="a part to skip (repeatable)")
    args = parser.parse_args(argv)
    settings = GpuCheckSettings(
        device=args.device,
        shape=cast(ShapeName, args.shape),
        out=args.out,
        budget_s=args.budget,
        contract=args.contract,
        learn_model=args.learn_model,
        learn_steps=args.learn_steps,
        skip=frozenset(args.skip),
    )
    return settings, bool(args.json)


if __name__ == "__main__":
    settings, as_json = _settings(sys.argv[1:])
    sys.exit(main(settings, as_json=as_json))
