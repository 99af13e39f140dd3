"""The werewolves recipe: the adapter on the top half of the layers at twice the rate, in fp32 and bf16 alike
(docs/vibe.md, measured there), said as an assumption; the sentence's settings and `--train` still win, and the
other families keep their own recipes."""

from __future__ import annotations

import pytest

from agentjet.vibe.plan.families import CATALOG
from agentjet.vibe.plan.planner import plan
from agentjet.vibe.run.recipe import train_config_for

HEADLINE = "train a 7B to play werewolves"


@pytest.mark.parametrize("dtype", ["float32", "bfloat16"])
def test_the_wolves_adapter_sits_on_the_top_half_at_twice_the_rate_whatever_the_dtype(
    monkeypatch: pytest.MonkeyPatch, dtype: str
) -> None:
    monkeypatch.setenv("AGENTJET_DTYPE", dtype)
    spec = plan(HEADLINE, llm=None, gpu=False)
    assert spec.train["lora"]["layers"] == 0.5 and spec.train["optim"]["lr"] == pytest.approx(4e-4)
    assert spec.train == dict(CATALOG["werewolves"].train)  # nothing depends on the machine
    assert any("top half of the layers at lr 4e-4" in a for a in spec.assumptions)
    assert not any("trains in fp32 here" in a for a in spec.assumptions)  # no recipe of its own in fp32
    assert train_config_for(spec.train).lora.layers == 0.5  # a valid TrainConfig, half of any model's layers


@pytest.mark.parametrize(
    ("sentence", "train", "lr", "layers"),
    [
        (HEADLINE + " at lr 1e-4", None, 1e-4, 0.5),  # the sentence's rate wins, the layers stay
        (HEADLINE, {"optim": {"lr": 2e-4}, "lora": {"layers": None}}, 2e-4, None),  # every layer, asked for
        (HEADLINE, {"lora": {"layers": 8}}, 4e-4, 8),
        ("train the seer in werewolves, separate models for each side", None, 4e-4, 0.5),
    ],
)
def test_what_the_user_says_wins_over_the_recipe(
    sentence: str, train: dict[str, object] | None, lr: float, layers: float | None
) -> None:
    spec = plan(sentence, llm=None, gpu=False, train=train)
    assert spec.train["optim"]["lr"] == pytest.approx(lr)
    assert spec.train["lora"].get("layers") == layers
    assert train_config_for(spec.train).lora.layers == layers


@pytest.mark.parametrize(
    ("sentence", "family"),
    [("RL a model on countdown", "countdown"), ("teach the model arithmetic", "arithmetic"),
     ("teach a model to answer with one word", "word")],
)  # fmt: skip
def test_the_other_families_keep_every_layer(sentence: str, family: str) -> None:
    spec = plan(sentence, llm=None, gpu=False)
    assert spec.train == dict(CATALOG[family].train) and "layers" not in spec.train["lora"]
