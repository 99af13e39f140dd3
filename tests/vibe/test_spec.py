"""TaskSpec: task.yaml round trips, and bad files fail with the file named."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from pydantic import ValidationError

from agentjet.vibe.errors import VibeError
from agentjet.vibe.plan.spec import GENERATED, Budget, SuccessMetric, TaskSpec, load_spec, save_spec


def _spec(**overrides: Any) -> TaskSpec:
    values: dict[str, Any] = {
        "name": "werewolves-seer",
        "sentence": "teach a small model to win at werewolf as the seer",
        "family": "werewolves",
        "params": {"trained_roles": ["seer"], "discussion": True},
        "requested_model": "7B",
        "model": "smollm2-135m",
        "model_note": "no CUDA GPU here: training the embedded smollm2-135m instead",
        "environment": "the 9-player game",
        "actors": ["seer (policy)", "werewolf (scripted)"],
        "trained_roles": ["seer"],
        "reward": "1 win, 0 loss",
        "success_metric": SuccessMetric(description="held-out win rate"),
        "budget": Budget(steps=7, minutes=12.5),
        "assumptions": ["discussion on (the default)"],
    }
    values.update(overrides)
    return TaskSpec(**values)


def test_round_trip_keeps_every_field(tmp_path: Path) -> None:
    spec = _spec()
    save_spec(spec, tmp_path / "task.yaml")
    assert load_spec(tmp_path / "task.yaml") == spec


def test_yaml_is_plain_and_in_declaration_order(tmp_path: Path) -> None:
    save_spec(_spec(), tmp_path / "task.yaml")
    text = (tmp_path / "task.yaml").read_text()
    data = yaml.safe_load(text)
    assert list(data)[:4] == ["name", "sentence", "family", "params"]
    assert data["budget"] == {"steps": 7, "minutes": 12.5}
    assert data["planner"] == "deterministic"
    assert "!!python" not in text  # safe YAML only


def test_generated_family_is_accepted_and_flagged() -> None:
    spec = _spec(family=GENERATED, params={"anything": 1})
    assert spec.is_generated
    assert not _spec().is_generated


@pytest.mark.parametrize(
    ("field", "value", "words"),
    [
        ("family", "chess", "neither a built-in family"),
        ("name", "Werewolves Seer!", "must be 1-64"),
        ("name", "", "must be 1-64"),
        ("reward", "", "at least 1 character"),
        ("budget", {"steps": 0}, "greater than or equal to 1"),
        ("train", {"optim": {"lrr": 1e-4}}, r"train.optim.lrr\n  Extra inputs are not permitted"),
        ("train", {"grpo": {"group_size": 1}}, "greater than or equal to 2"),
        ("success_metric", {"description": "d", "rate": ""}, "at least 1 character"),
    ],
)
def test_invalid_fields_are_refused(field: str, value: Any, words: str) -> None:
    with pytest.raises(ValidationError, match=words):
        _spec(**{field: value})


def test_unknown_key_in_task_yaml_is_an_error_naming_the_file(tmp_path: Path) -> None:
    path = tmp_path / "task.yaml"
    save_spec(_spec(), path)
    data = yaml.safe_load(path.read_text())
    data["rewrad"] = "typo"
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(VibeError, match=r"task\.yaml is not a valid task spec.*rewrad"):
        load_spec(path)


@pytest.mark.parametrize(
    ("content", "words"),
    [("name: [unclosed", "is not valid YAML"), ("- a\n- list\n", "must hold a mapping"), ("", "must hold a mapping")],
)
def test_bad_yaml_is_a_vibe_error(tmp_path: Path, content: str, words: str) -> None:
    path = tmp_path / "task.yaml"
    path.write_text(content)
    with pytest.raises(VibeError, match=words):
        load_spec(path)


def test_missing_file_is_a_vibe_error(tmp_path: Path) -> None:
    with pytest.raises(VibeError, match="cannot read the task spec"):
        load_spec(tmp_path / "nope.yaml")
