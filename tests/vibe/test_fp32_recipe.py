"""The werewolves recipe where the server trains in float32 (a CPU without native bf16): the adapter on the top half
of the layers at twice the rate (docs/vibe.md, measured there), said as an assumption; the sentence's settings and
`--train` still win, the other families and a bf16 server keep their recipes."""

from __future__ import annotations

import pytest

from agentjet.core.placement import cpu_has_native_bf16
from agentjet.vibe.plan.families import CATALOG
from agentjet.vibe.plan.planner import plan
from agentjet.vibe.plan.policy_model import trains_in_fp32
from agentjet.vibe.run.recipe import train_config_for

HEADLINE = "train a 7B to play werewolves"


def test_in_fp32_the_wolves_adapter_sits_on_the_top_half_at_twice_the_rate_and_says_so() -> None:
    fp32 = plan(HEADLINE, llm=None, gpu=False, fp32=True)
    bf16 = plan(HEADLINE, llm=None, gpu=False, fp32=False)
    assert fp32.train["lora"]["layers"] == 0.5 and fp32.train["optim"]["lr"] == pytest.approx(4e-4)
    assert "layers" not in bf16.train["lora"] and bf16.train["optim"]["lr"] == pytest.approx(2e-4)
    note = CATALOG["werewolves"].fp32_recipe
    assert note in fp32.assumptions and note not in bf16.assumptions and "fp32" in note
    for key in ("grpo", "collect"):  # nothing else of the recipe moves
        assert fp32.train[key] == bf16.train[key]
    assert fp32.train["lora"]["target_modules"] == bf16.train["lora"]["target_modules"]
    assert train_config_for(fp32.train).lora.layers == 0.5  # a valid TrainConfig, half of any model's layers


@pytest.mark.parametrize(
    ("sentence", "train", "lr", "layers"),
    [
        (HEADLINE + " at lr 1e-4", None, 1e-4, 0.5),  # the sentence's rate wins, the layers stay
        (HEADLINE, {"optim": {"lr": 2e-4}, "lora": {"layers": None}}, 2e-4, None),  # the bf16 recipe, asked for
        (HEADLINE, {"lora": {"layers": 8}}, 4e-4, 8),
        ("train the seer in werewolves, separate models for each side", None, 4e-4, 0.5),
    ],
)
def test_what_the_user_says_wins_over_the_fp32_recipe(
    sentence: str, train: dict[str, object] | None, lr: float, layers: float | None
) -> None:
    spec = plan(sentence, llm=None, gpu=False, fp32=True, train=train)
    assert spec.train["optim"]["lr"] == pytest.approx(lr)
    assert spec.train["lora"].get("layers") == layers
    assert train_config_for(spec.train).lora.layers == layers


@pytest.mark.parametrize(
    "sentence", ["RL a model on countdown", "teach the model arithmetic", "teach a model to answer with one word"]
)
def test_the_other_families_keep_their_recipe_in_fp32(sentence: str) -> None:
    assert plan(sentence, llm=None, gpu=False, fp32=True).train == plan(sentence, llm=None, gpu=False, fp32=False).train


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({"AGENTJET_DTYPE": "float32"}, True),
        ({"AGENTJET_DTYPE": "bfloat16"}, False),
        ({"AGENTJET_DEVICE": "cpu", "AGENTJET_DTYPE": "float32"}, True),
        ({"AGENTJET_DEVICE": "cpu"}, None),  # auto on a CPU: fp32 unless it has native bf16
        ({}, None),  # no GPU in the test machines: as the CPU has it
        ({"AGENTJET_DTYPE": "half"}, False),  # refused by the server, which says so when it starts
    ],
)
def test_fp32_is_resolved_as_the_server_resolves_its_dtype(
    monkeypatch: pytest.MonkeyPatch, env: dict[str, str], expected: bool | None
) -> None:
    monkeypatch.delenv("AGENTJET_DTYPE", raising=False)
    monkeypatch.delenv("AGENTJET_DEVICE", raising=False)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    assert trains_in_fp32() is (not cpu_has_native_bf16() if expected is None else expected)


def test_a_plan_asks_the_machine_when_not_told(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENTJET_DTYPE", "float32")
    assert plan(HEADLINE, llm=None, gpu=False).train["lora"]["layers"] == 0.5
    monkeypatch.setenv("AGENTJET_DTYPE", "bfloat16")
    assert "layers" not in plan(HEADLINE, llm=None, gpu=False).train["lora"]
