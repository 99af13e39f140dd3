"""`agentjet bench gpu` on a CPU: the small shape end to end, with nothing importable but what a GPU machine has.

A GPU machine lent for a few minutes has torch, transformers and peft, not our web stack. The
main test runs the check in a child interpreter whose only packages are symlinks to the
distributions of torch, transformers, peft, pydantic (+ pydantic-settings, which `core.config`
needs for ServerSettings) and pyyaml, and everything those require: an import of anything else
(fastapi, uvicorn, httpx, openai, pytest, ...) fails there as it would on that machine.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest
from packaging.requirements import Requirement
from typer.testing import CliRunner

from agentjet.bench.gpu import GpuCheckSettings, children, run_gpu_check
from agentjet.bench.gpu.budget import SKIPPED_BUDGET, Budget
from agentjet.cli.main import app

ROOT = Path(__file__).parents[2]
# what the check may need in-process; pydantic-settings only because config.py defines ServerSettings beside TrainConfig
ALLOWED = ("torch", "transformers", "peft", "pydantic", "pydantic-settings", "pyyaml")
_OUR_STACK = ("fastapi", "uvicorn", "httpx", "openai", "matplotlib", "pytest", "optuna", "starlette")


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _closure(roots: tuple[str, ...]) -> set[str]:
    """`roots` and every distribution they require (extras excluded), recursively, as installed here."""
    seen: set[str] = set()
    todo = list(roots)
    while todo:
        name = _canonical(todo.pop())
        if name in seen:
            continue
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            continue
        seen.add(name)
        for spec in dist.requires or []:
            req = Requirement(spec)
            if req.marker is None or req.marker.evaluate({"extra": ""}):
                todo.append(req.name)
    return seen


def _site_of(dists: set[str], site: Path) -> Path:
    """A folder holding only `dists`' top-level modules and metadata (symlinks), like a minimal site-packages."""
    site.mkdir()
    for name in dists:
        for top in {f.parts[0] for f in metadata.distribution(name).files or () if f.parts[0] != ".."}:
            source = Path(str(metadata.distribution(name).locate_file(top)))
            if source.exists() and not (site / top).exists() and top != "__pycache__":
                (site / top).symlink_to(source)
    return site


_CHILD = """
import runpy, sys
sys.path[:0] = [sys.argv[1], sys.argv[2]]
sys.argv = ["agentjet.bench.gpu", *sys.argv[3:]]
try:
    runpy.run_module("agentjet.bench.gpu", run_name="__main__", alter_sys=True)
finally:
    ours = sorted(m for m in sys.modules if m.startswith("agentjet"))
    sys.stderr.write("AGENTJET-MODULES " + " ".join(ours) + "\\n")
"""


@pytest.fixture(scope="module")
def isolated_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], list[str]]:
    """The small-shape check on the CPU in an interpreter that sees only ALLOWED's closure."""
    tmp = tmp_path_factory.mktemp("gpu-check")
    allowed = _closure(ALLOWED)
    assert not {_canonical(n) for n in _OUR_STACK} & allowed, "the closure must not already hold our web stack"
    site = _site_of(allowed, tmp / "site")
    contract = tmp / "test_contract_stub.py"
    contract.write_text("def test_transformers_stub():\n    pass\n")
    argv = [sys.executable, "-I", "-S", "-c", _CHILD, str(site), str(ROOT)]
    argv += ["--device", "cpu", "--shape", "small", "--json", "--out", str(tmp / "out"), "--contract", str(contract)]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120, check=False, cwd=tmp)
    assert done.returncode == 0, done.stderr[-4000:]
    modules = next(x for x in done.stderr.splitlines() if x.startswith("AGENTJET-MODULES ")).split()[1:]
    result = json.loads(done.stdout)
    assert json.loads((tmp / "out" / "gpu_check.json").read_text()) == result
    return result, modules


def test_the_small_check_runs_a_training_update_with_only_torch_transformers_peft_pydantic(
    isolated_run: tuple[dict[str, Any], list[str]],
) -> None:
    result, _ = isolated_run
    assert {"device", "device_name", "torch", "transformers", "peft", "total_s", "parts"} <= set(result)
    assert result["device"] == "cpu" and result["ok"] is True and result["total_s"] < 60
    model = result["parts"]["random_model"]
    assert model["status"] == "ok" and model["build"]["parameters"] > 0
    for level in ("1", "4", "16"):
        rollout = model["rollout"][level]
        assert rollout["status"] == "ok" and rollout["new_tokens"] == int(level) * model["new_tokens"]
        assert rollout["tokens_per_s"] > 0 and rollout["peak_gib"] > 0
    train = model["train"]
    assert train["status"] == "ok" and train["trainer_steps"] == 1 and train["update_s"] > 0
    assert train["tokens_trained"] == 16 * model["new_tokens"] and train["micro_batches"] > 1
    assert train["lora_b_norm"] > 0  # B starts at 0: the update changed the adapter
    assert model["trainer"]["base_dtype"] == "bfloat16" and model["trainer"]["adapter_dtype"] == "float32"
    assert model["train_gradient_checkpointing"]["trainer_steps"] == 2
    assert model["hot_load"]["served_policy_version"] == 2  # the trained adapter is what the backend serves
    for part in result["parts"].values():
        assert part["seconds"] >= 0


def test_parts_needing_more_than_that_say_what_is_missing(isolated_run: tuple[dict[str, Any], list[str]]) -> None:
    result, modules = isolated_run
    assert result["parts"]["backend_contract"]["status"] == "skipped: pytest is not installed"
    learn = result["parts"]["learn_check"]["status"]
    assert learn.startswith("skipped: needs the web stack (missing: fastapi, uvicorn, httpx, openai, matplotlib")
    assert not [
        m for m in modules if m.startswith(("agentjet.core.server", "agentjet.core.sdk.client", "agentjet.cli"))
    ]


def test_the_contract_part_counts_what_pytest_ran(tmp_path: Path) -> None:
    stub = tmp_path / "test_stub.py"
    stub.write_text(
        "import os\n"
        "def test_transformers_sees_the_device():\n    assert os.environ['AGENTJET_TEST_DEVICE'] == 'cpu'\n"
        "def test_transformers_fails():\n    assert False\n"
        "def test_other_backend():\n    pass\n"
    )
    result = children.run_contract(stub, "cpu", 60, ROOT)
    assert result["status"] == "failed" and result["counts"] == {"failed": 1, "passed": 1, "deselected": 1}
    assert children.run_contract(tmp_path / "absent.py", "cpu", 60, ROOT)["status"] == "missing"


def test_a_learn_check_child_is_read_back(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    figures = {"steps": 2, "reward_first3_mean": 0.1, "reward_last3_mean": 0.4, "rise": 0.3, "rewards": [0.1, 0.4]}
    seen: dict[str, Any] = {}

    def child(argv: list[str], env: dict[str, str], timeout_s: float, cwd: Path) -> tuple[int, str, str]:
        seen.update(argv=argv, device=env["AGENTJET_DEVICE"], timeout_s=timeout_s)
        return 0, "noise\n" + children.LEARN_MARK + json.dumps({**figures, "png": "x.png"}) + "\n", ""

    monkeypatch.setattr(children, "_child", child)
    result = children.run_learn_check("tiny", 2, "cuda:0", tmp_path, 99.0, ROOT)
    assert result["status"] == "ok" and result["rose"] is True and result["rewards"] == [0.1, 0.4]
    assert seen["argv"][-3:] == ["tiny", "2", str(tmp_path)] and seen["device"] == "cuda:0" and seen["timeout_s"] == 99
    monkeypatch.setattr(children, "_child", lambda *_: (None, "", ""))
    assert children.run_learn_check("tiny", 2, "cpu", tmp_path, 5.0, ROOT)["status"].startswith("skipped: budget")


def test_parts_that_no_longer_fit_the_budget_are_skipped_not_started(tmp_path: Path) -> None:
    settings = GpuCheckSettings(device="cpu", shape="small", out=tmp_path, budget_s=1.0)
    result = run_gpu_check(settings, progress=lambda _: None)
    assert {p["status"] for p in result["parts"].values()} == {SKIPPED_BUDGET} and result["ok"] is True
    ticks = iter([0.0, 10.0, 95.0])
    budget = Budget(100.0, clock=lambda: next(ticks))
    assert budget.allows(90) and not budget.allows(6)


def test_the_cli_refuses_an_unknown_part() -> None:
    reply = CliRunner().invoke(app, ["bench", "gpu", "--device", "cpu", "--skip", "everything"])
    assert reply.exit_code == 2 and "the parts are backend_contract, random_model, learn_check" in reply.output


@pytest.mark.parametrize("shape", ["nope", "7B", ""])
def test_the_cli_refuses_an_unknown_shape_naming_the_shapes(shape: str) -> None:
    reply = CliRunner().invoke(app, ["bench", "gpu", "--device", "cpu", "--shape", shape])
    assert reply.exit_code == 2 and "is not one of 7b, 135m, small" in reply.output


def test_the_135m_shape_has_smollm2s_sizes_and_the_headline_update_as_workload() -> None:
    """Random weights of SmolLM2-135M's sizes: what the vibe headline's first update costs on a device."""
    from agentjet.bench.gpu.shapes import SHAPES
    from agentjet.core.config import OptimConfig

    shape = SHAPES["135m"]
    assert (shape.hidden, shape.layers, shape.heads, shape.kv_heads, shape.intermediate, shape.vocab) == (
        576,
        30,
        9,
        3,
        1536,
        49152,
    )
    rollouts = max(shape.concurrency)
    assert 200 <= rollouts <= 260 and 300 <= shape.prompt_tokens + shape.new_tokens <= 360  # ~240 calls of ~330
    budget = OptimConfig(micro_batch_tokens=shape.micro_batch_tokens).tokens_per_micro_batch("cuda:0")
    assert budget == 4096  # the device's default, as a vibe run on a GPU would train
