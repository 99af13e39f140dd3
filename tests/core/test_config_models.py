"""TrainConfig validation and the offline model registry."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentjet.core.config import TrainConfig, load_train_config
from agentjet.core.errors import ConfigError, ModelError
from agentjet.core.models import check_cache_argument, check_model, resolve_model


def test_train_config_defaults_and_yaml(tmp_path: Path) -> None:
    assert TrainConfig().collect.strategy == "tasks"
    path = tmp_path / "c.yaml"
    path.write_text("merge: text\ngrpo:\n  group_size: 8\noptim:\n  lr: 0.0001\n")
    config = load_train_config(path)
    assert (config.merge, config.grpo.group_size, config.optim.lr) == ("text", 8, 1e-4)


@pytest.mark.parametrize(
    "yaml_value, cpu, cuda",
    [(None, 512, 4096), ("auto", 512, 4096), ("1024", 1024, 1024), ("64", 64, 64)],
)
def test_micro_batch_tokens_auto_is_sized_per_device_and_a_number_is_kept(
    tmp_path: Path, yaml_value: str | None, cpu: int, cuda: int
) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(f"optim:\n  micro_batch_tokens: {yaml_value}\n" if yaml_value else "optim: {}\n")
    optim = load_train_config(path).optim
    assert (optim.tokens_per_micro_batch("cpu"), optim.tokens_per_micro_batch("cuda:1")) == (cpu, cuda)
    assert TrainConfig.model_validate(load_train_config(path).model_dump(mode="json")).optim == optim  # round-trips


@pytest.mark.parametrize(
    "text, fragment",
    [
        ("grpo:\n  group_sise: 8\n", "group_sise"),  # a typo is an error, not a no-op
        ("merge: tokens\n", "merge"),
        ("optim:\n  lr: -1\n", "lr"),
        ("collect:\n  strategy: episodes\n  episodes: 2\ngrpo:\n  group_size: 4\n", "raise collect.episodes"),
        ("[unclosed", "invalid config"),
        ("optim:\n  micro_batch_tokens: 32\n", "micro_batch_tokens"),
        ("optim:\n  micro_batch_tokens: lots\n", "micro_batch_tokens"),
    ],
)
def test_invalid_config_names_the_problem(tmp_path: Path, text: str, fragment: str) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=fragment.replace("[", r"\[")):
        load_train_config(path)


@pytest.mark.parametrize("key, value", [("grpo.kl_coef", "inf"), ("optim.lr", "nan"), ("grpo.clip_eps", "-inf")])
def test_a_setting_that_is_not_a_finite_number_is_refused(tmp_path: Path, key: str, value: str) -> None:
    section, name = key.split(".")
    path = tmp_path / "c.yaml"
    path.write_text(f"{section}:\n  {name}: .{value}\n")  # YAML's .inf / .nan
    with pytest.raises(ConfigError, match=name):
        load_train_config(path)


def test_resolve_registered_and_folder(tiny_model: Path) -> None:
    assert resolve_model("tiny") == tiny_model
    assert resolve_model(str(tiny_model)) == tiny_model


def test_check_model_refuses_what_resolve_would_without_preparing(tmp_path: Path, tiny_model: Path) -> None:
    check_model("smollm2-135m")  # registered: accepted whether prepared or not
    check_model(str(tiny_model))
    for bad, fragment in [("gpt-9", "unknown model 'gpt-9'"), (str(tmp_path / "nope"), "does not exist")]:
        with pytest.raises(ModelError, match=fragment):
            check_model(bad)
    (tmp_path / "empty").mkdir()
    with pytest.raises(ModelError, match="no config.json"):
        check_model(str(tmp_path / "empty"))


def test_unknown_and_broken_models_give_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(ModelError, match="unknown model 'gpt-9'.*smollm2-135m"):
        resolve_model("gpt-9")
    with pytest.raises(ModelError, match="does not exist"):
        resolve_model(str(tmp_path / "nope"))
    (tmp_path / "broken").mkdir()
    with pytest.raises(ModelError, match="no config.json"):
        resolve_model(str(tmp_path / "broken"))
    (tmp_path / "broken" / "config.json").write_text("{}")
    with pytest.raises(ModelError, match="no weights"):
        resolve_model(str(tmp_path / "broken"))


def test_a_transformers_whose_forward_takes_no_cache_argument_is_named(tiny_model: Path) -> None:
    """The decode loop passes `cache=`; an older transformers ignores it and fails later with a shape error."""
    import torch
    from transformers import AutoModelForCausalLM

    class OlderForward(torch.nn.Module):
        def forward(self, input_ids: torch.Tensor, past_key_values: object = None) -> None: ...

    words = r"OlderForward.forward takes no `cache=` argument; pip install 'transformers=="
    with pytest.raises(ModelError, match=words):
        check_cache_argument(OlderForward())
    check_cache_argument(AutoModelForCausalLM.from_pretrained(tiny_model))  # the pinned version: no error
