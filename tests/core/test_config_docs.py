"""TrainConfig's contract: every knob described and documented with its default; bad values name their field."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, get_args

import httpx
import pytest
from pydantic import BaseModel
from pydantic.fields import FieldInfo

from agentjet.core.config import LossName, TrainConfig, load_train_config
from agentjet.core.errors import ConfigError
from agentjet.core.step.trainer import LOSSES
from agentjet.core.testing import RunningServer

DOC = Path(__file__).parents[2] / "docs" / "training-config.md"


def _fields(model: type[BaseModel], prefix: str = "") -> Iterator[tuple[str, FieldInfo]]:
    """Every field, sections included, by dotted name (`grpo`, `grpo.group_size`, ...)."""
    for name, info in model.model_fields.items():
        yield f"{prefix}{name}", info
        if isinstance(info.annotation, type) and issubclass(info.annotation, BaseModel):
            yield from _fields(info.annotation, f"{prefix}{name}.")


def _is_section(info: FieldInfo) -> bool:
    return isinstance(info.annotation, type) and issubclass(info.annotation, BaseModel)


def _doc_row(name: str) -> str:
    rows = [line for line in DOC.read_text().splitlines() if line.startswith(f"| `{name}` |")]
    assert len(rows) == 1, f"{name} needs exactly one row in {DOC.name}, found {len(rows)}"
    return rows[0]


def test_every_field_has_a_description() -> None:
    missing = [name for name, info in _fields(TrainConfig) if not (info.description or "").strip()]
    assert not missing, f"fields without a description: {missing}"


def test_every_field_is_documented_with_its_default() -> None:
    for name, info in _fields(TrainConfig):
        row = _doc_row(name)
        if _is_section(info):
            continue
        default = info.default if not isinstance(info.default, tuple) else list(info.default)
        assert f"`{json.dumps(default)}`" in row, f"{name}: docs row lacks default `{json.dumps(default)}`: {row}"


def test_docs_list_no_field_that_does_not_exist() -> None:
    names = {name for name, _ in _fields(TrainConfig)}
    documented = set(re.findall(r"^\| `([a-z_.]+)` \|", DOC.read_text(), flags=re.MULTILINE))
    assert documented == names


def test_docs_example_yaml_is_a_valid_config(tmp_path: Path) -> None:
    example = re.search(r"```yaml\n(.*?)```", DOC.read_text(), flags=re.DOTALL)
    assert example is not None
    (tmp_path / "train.yaml").write_text(example.group(1))
    config = load_train_config(tmp_path / "train.yaml")
    assert config.grpo.group_size == 8 and config.optim.lr == 2e-4


def test_loss_choices_are_the_trainer_registry() -> None:
    assert set(get_args(LossName)) == set(LOSSES)
    assert TrainConfig().grpo.loss in LOSSES


@pytest.mark.parametrize(
    "text, message",
    [
        ("lora:\n  rank: 0\n", "lora.rank: Input should be greater than or equal to 1 (got 0)"),
        ("grpo:\n  loss: dapo\n", "grpo.loss: Input should be 'ppo_clip' (got 'dapo')"),
        ("optim:\n  lr: fast\n", "optim.lr: Input should be a valid number"),
        ("collect:\n  strategy: sometimes\n", "collect.strategy: Input should be"),
        ("lora:\n  target_modules: []\n", "lora.target_modules: "),
        ("grpo: 8\n", "grpo: Input should be a valid dictionary"),
        ("- merge\n", "the top level must be a mapping, got list"),
        ("optim:\n  lr: [1\n", "not valid YAML"),
    ],
)
def test_invalid_yaml_value_is_a_config_error_naming_the_field(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError) as caught:
        load_train_config(path)
    assert str(caught.value).startswith(f"invalid config {path}: ")
    assert message in str(caught.value)


def test_empty_yaml_is_the_defaults(tmp_path: Path) -> None:
    (tmp_path / "empty.yaml").write_text("")
    assert load_train_config(tmp_path / "empty.yaml") == TrainConfig()


@pytest.mark.parametrize(
    "body, param",
    [
        ({"grpo": {"loss": "dapo"}}, "grpo.loss"),
        ({"lora": {"rank": 0}}, "lora.rank"),
        ({"optim": {"lr": "fast"}}, "optim.lr"),
        ({"collect": {"strategy": "sometimes"}}, "collect.strategy"),
    ],
)
def test_put_config_with_a_bad_value_is_422_naming_the_field_path(
    live_server: Callable[..., RunningServer],
    echo_backend: Any,
    server_headers: dict[str, str],
    body: dict[str, Any],
    param: str,
) -> None:
    server = live_server(echo_backend)
    reply = httpx.put(f"{server.url}/swarm/config", json=body, headers=server_headers)
    assert reply.status_code == 422
    error = reply.json()["error"]
    assert error["param"] == param and param in error["message"]
    config = httpx.get(f"{server.url}/swarm/config", headers=server_headers).json()["config"]
    assert TrainConfig.model_validate(config) == TrainConfig()  # nothing was applied


def test_put_config_round_trips_the_loss(
    live_server: Callable[..., RunningServer], echo_backend: Any, server_headers: dict[str, str]
) -> None:
    server = live_server(echo_backend)
    reply = httpx.put(f"{server.url}/swarm/config", json={"grpo": {"loss": "ppo_clip"}}, headers=server_headers)
    assert reply.status_code == 200 and reply.json()["config"]["grpo"]["loss"] == "ppo_clip"
