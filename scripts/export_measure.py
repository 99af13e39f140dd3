"""Measure `agentjet export` on tiny after one step: time, size and the logprob gap to the served policy.

Run from the checkout: `.venv/bin/python scripts/export_measure.py` (prints JSON; works under /tmp/export-measure).
The figures are in docs/export.md.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

import torch
from transformers import AutoModelForCausalLM

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from agentjet.core.models import resolve_model  # noqa: E402
from tests.core.test_export import _max_gap, trained  # noqa: E402

ROOT = Path("/tmp/export-measure")
FORMS = [
    ("adapter", []),
    ("merged", ["--merged"]),
    ("gguf-f32", ["--gguf"]),
    ("gguf-f16", ["--gguf", "--gguf-type", "f16"]),
]


class _Temp:
    def mktemp(self, name: str) -> Path:
        path = ROOT / name
        path.mkdir()
        return path


def main() -> None:
    shutil.rmtree(ROOT, ignore_errors=True)
    ROOT.mkdir()
    state, calls = trained.__wrapped__(_Temp())  # the test's fixture: one real GRPO step on tiny
    figures: dict[str, object] = {}
    for kind, args in FORMS:
        started = time.monotonic()
        out = ROOT / kind
        done = subprocess.run(
            [sys.executable, "-m", "agentjet.cli.main", "export", str(state), "--step", "1", "--out", str(out), *args],
            capture_output=True, text=True,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        size = sum(p.stat().st_size for p in out.rglob("*") if p.is_file())
        figures[kind] = {"seconds": round(time.monotonic() - started, 1), "mb": round(size / 1e6, 1)}
    models = {
        "merged": AutoModelForCausalLM.from_pretrained(ROOT / "merged", dtype=torch.float32),
        "gguf_f32": AutoModelForCausalLM.from_pretrained(
            ROOT / "gguf-f32", gguf_file="model-f32.gguf", dtype=torch.float32
        ),
        "gguf_f16": AutoModelForCausalLM.from_pretrained(
            ROOT / "gguf-f16", gguf_file="model-f16.gguf", dtype=torch.float32
        ),
        "base_untrained": AutoModelForCausalLM.from_pretrained(resolve_model("tiny"), dtype=torch.float32),
    }
    figures["max_logprob_gap"] = {name: _max_gap(model, calls) for name, model in models.items()}
    figures["tokens_compared"] = sum(len(c.completion_ids) for c in calls)
    print(json.dumps(figures, indent=1))


if __name__ == "__main__":
    main()
