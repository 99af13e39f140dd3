"""Experiment trackers (`TrainConfig.report_to`): TensorBoard, wandb offline and MLflow get the numbers of
metrics.jsonl, read back with each tool's own format or client; a restart continues the same runs; a tracker
that fails never costs a step's line; a tracker the server lacks is refused up front."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml

from agentjet.core.config import TrackersConfig, TrainConfig
from agentjet.core.errors import ConfigError
from agentjet.core.trackers import factory
from agentjet.core.trackers.base import RUN_IDS_FILE, saved_run_id
from agentjet.core.trackers.mlflow_run import default_tracking_uri, flat_params
from agentjet.core.training.metrics import tensorboard_scalars
from agentjet.core.training.metrics_log import MetricsLog
from tests.core.tracker_readers import read_mlflow_history, read_tensorboard, read_wandb_run
from tests.trained_tiny import tiny_after_one_step

ALL = TrainConfig(report_to=("tensorboard", "wandb", "mlflow"), trackers=TrackersConfig(project="trackers-test"))
LINES = [
    {"step": 1, "time": 100.0, "loss": 0.25, "reward_mean": 0.5, "eval_reward_mean": None, "episode_seqs": [1, 2]},
    {"step": 2, "time": 101.5, "loss": -0.125, "reward_mean": 0.75, "grad_norm": 3.0},
    {"step": 3, "time": 103.0, "loss": 0.0625, "reward_mean": 1.0, "tokens_trained": 4096},
]


def _wandb_runs(state_dir: Path) -> list[dict[str, Any]]:
    return [read_wandb_run(folder) for folder in sorted((state_dir / "wandb").glob("offline-run-*"))]


def _expected(lines: list[dict[str, Any]]) -> dict[int, dict[str, float]]:
    return {line["step"]: dict(tensorboard_scalars(line)) for line in lines}


def test_every_tracker_gets_the_scalars_of_each_line(tmp_path: Path) -> None:
    metrics_log = MetricsLog(tmp_path)
    for line in LINES:
        metrics_log.append(line, ALL)
    metrics_log.close()
    expected = _expected(LINES)
    assert [json.loads(x) for x in (tmp_path / "metrics.jsonl").read_text().splitlines()] == LINES

    assert read_tensorboard(tmp_path / "tensorboard")[0] == expected

    (run,) = _wandb_runs(tmp_path)
    assert run["history"] == expected
    assert (run["id"], run["project"], run["name"]) == (saved_run_id(tmp_path, "wandb"), "trackers-test", tmp_path.name)
    assert run["config"]["grpo"]["clip_eps"] == 0.2 and run["config"]["report_to"] == list(ALL.report_to)

    mlflow_run = read_mlflow_history(default_tracking_uri(tmp_path), saved_run_id(tmp_path, "mlflow") or "")
    assert (mlflow_run["name"], mlflow_run["experiment"], mlflow_run["status"]) == (
        tmp_path.name,
        "trackers-test",
        "FINISHED",
    )
    by_step: dict[int, dict[str, float]] = {}
    for key, points in mlflow_run["metrics"].items():
        for step, value in points:
            by_step.setdefault(step, {})[key] = value
    assert by_step == expected
    assert mlflow_run["params"]["grpo.clip_eps"] == "0.2" and mlflow_run["params"]["optim.lr"] == "1e-05"


def test_a_restart_continues_the_same_runs(tmp_path: Path) -> None:
    first = MetricsLog(tmp_path)
    first.append(LINES[0], ALL)
    first.append(LINES[1], ALL)
    first.close()
    ids = json.loads((tmp_path / RUN_IDS_FILE).read_text())
    again = MetricsLog(tmp_path)  # a new process after a kill: step 2 is redone, then step 3
    redone = {**LINES[1], "loss": 0.5}
    again.append(redone, ALL)
    again.append(LINES[2], ALL)
    again.close()
    assert json.loads((tmp_path / RUN_IDS_FILE).read_text()) == ids

    runs = _wandb_runs(tmp_path)
    assert {run["id"] for run in runs} == {ids["wandb"]}  # the same run, resumed offline
    logged = {step: values for run in runs for step, values in run["history"].items()}
    assert logged[3] == _expected(LINES)[3] and set(logged) == {1, 2, 3}

    mlflow_run = read_mlflow_history(default_tracking_uri(tmp_path), ids["mlflow"])
    assert mlflow_run["metrics"]["train/loss"] == [(1, 0.25), (2, -0.125), (2, 0.5), (3, 0.0625)]  # append-only

    scalars, purges = read_tensorboard(tmp_path / "tensorboard")
    assert scalars[2]["train/loss"] == 0.5 and purges == [1, 2]  # TensorBoard hides the first step 2


def test_a_tracker_that_fails_to_start_costs_no_line_and_no_other_tracker(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    broken = TrainConfig(
        report_to=("mlflow", "tensorboard"), trackers=TrackersConfig(mlflow_tracking_uri="nosuchscheme://x")
    )
    metrics_log = MetricsLog(tmp_path)
    with caplog.at_level(logging.ERROR, logger="agentjet.core.training.metrics_log"):
        for line in LINES:
            metrics_log.append(line, broken)
    metrics_log.close()
    assert [json.loads(x)["step"] for x in (tmp_path / "metrics.jsonl").read_text().splitlines()] == [1, 2, 3]
    assert read_tensorboard(tmp_path / "tensorboard")[0] == _expected(LINES)
    failures = [r.getMessage() for r in caplog.records if "tracker mlflow failed to start" in r.getMessage()]
    assert failures == ["tracker mlflow failed to start at step=1; metrics.jsonl has every line"]  # not every step


def test_dropping_a_tracker_from_report_to_ends_its_run(tmp_path: Path) -> None:
    metrics_log = MetricsLog(tmp_path)
    metrics_log.append(LINES[0], ALL)
    metrics_log.append(LINES[1], TrainConfig(report_to=("tensorboard",)))
    mlflow_run = read_mlflow_history(default_tracking_uri(tmp_path), saved_run_id(tmp_path, "mlflow") or "")
    assert mlflow_run["status"] == "FINISHED" and mlflow_run["metrics"]["train/loss"] == [(1, 0.25)]
    metrics_log.close()
    assert sorted(read_tensorboard(tmp_path / "tensorboard")[0]) == [1, 2]


def test_no_tracker_means_metrics_jsonl_only(tmp_path: Path) -> None:
    metrics_log = MetricsLog(tmp_path)
    metrics_log.append(LINES[0], TrainConfig(report_to=()))
    metrics_log.close()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["metrics.jsonl"]


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ({"report_to": ["wandb", "wandb"]}, "report_to names wandb more than once"),
        ({"report_to": ["comet"]}, "report_to.0: Input should be 'tensorboard', 'wandb' or 'mlflow'"),
        ({"report_to": "wandb"}, "report_to: Input should be a valid"),
        ({"trackers": {"wandb_mode": "cloud"}}, "trackers.wandb_mode: Input should be 'offline' or 'online'"),
        ({"trackers": {"projekt": "x"}}, "trackers.projekt: Extra inputs are not permitted"),
        ({"trackers": {"project": ""}}, "trackers.project: String should have at least 1 character"),
    ],
)
def test_bad_tracker_settings_are_refused_by_name(tmp_path: Path, raw: dict[str, Any], message: str) -> None:
    from agentjet.core.config import load_train_config

    path = tmp_path / "train.yaml"
    path.write_text(yaml.safe_dump(raw))
    with pytest.raises(ConfigError, match=message.replace("(", r"\(").replace(")", r"\)")):
        load_train_config(path)


def test_a_tracker_whose_library_is_missing_is_refused_with_the_pip_command(monkeypatch: pytest.MonkeyPatch) -> None:
    factory.check_installed(("tensorboard", "wandb", "mlflow"))  # all installed here
    real = factory.importlib.util.find_spec
    monkeypatch.setattr(factory.importlib.util, "find_spec", lambda name: None if name == "wandb" else real(name))
    with pytest.raises(ConfigError, match=r"report_to wandb: not installed on this server; pip install 'agentjet\["):
        factory.check_installed(("tensorboard", "wandb"))


def test_trackers_table_matches_the_config_names() -> None:
    from typing import get_args

    from agentjet.core.config import TrackerName

    assert set(factory.TRACKERS) == set(get_args(TrackerName))


def test_flat_params_name_nested_settings_by_dotted_path() -> None:
    assert flat_params({"grpo": {"clip_eps": 0.2, "x": {"y": [1, 2]}}, "merge": "token"}) == {
        "grpo.clip_eps": "0.2",
        "grpo.x.y": "[1, 2]",
        "merge": "token",
    }


# ---- a real server ------------------------------------------------------------------------------
def test_a_server_trains_a_step_into_all_three_trackers(tmp_path: Path) -> None:
    """`agentjet server start --config` with report_to: the step's line reaches TensorBoard, wandb and MLflow,
    and a PUT naming a tracker that does not exist is a 422."""
    train = {
        "report_to": ["tensorboard", "wandb", "mlflow"],
        "trackers": {"project": "live", "run_name": "tiny-run"},
    }
    with tiny_after_one_step(tmp_path, train) as (server, _):
        bad = {"report_to": ["comet"]}
        reply = httpx.put(f"{server.url}/swarm/config", json=bad, headers={"Authorization": f"Bearer {server.token}"})
        assert reply.status_code == 422 and "report_to" in reply.json()["error"]["message"]
    # the server has stopped cleanly: the wandb and MLflow runs are ended
    state = tmp_path / "state"
    (line,) = [json.loads(x) for x in (state / "metrics.jsonl").read_text().splitlines()]
    expected = _expected([line])
    assert _close(read_tensorboard(state / "tensorboard")[0], expected)
    (run,) = _wandb_runs(state)
    assert (run["project"], run["name"]) == ("live", "tiny-run") and run["history"] == expected
    mlflow_run = read_mlflow_history(default_tracking_uri(state), saved_run_id(state, "mlflow") or "")
    assert (mlflow_run["experiment"], mlflow_run["name"], mlflow_run["status"]) == ("live", "tiny-run", "FINISHED")
    assert {key: points for key, points in mlflow_run["metrics"].items()} == {
        tag: [(1, value)] for tag, value in expected[1].items()
    }


def _close(got: dict[int, dict[str, float]], want: dict[int, dict[str, float]]) -> bool:
    """TensorBoard stores float32: equal to the line's values within float32 rounding."""
    return got.keys() == want.keys() and all(
        got[s].keys() == want[s].keys() and all(got[s][k] == pytest.approx(v, rel=1e-6) for k, v in want[s].items())
        for s in want
    )


def test_mlflow_also_writes_a_file_store_where_one_is_allowed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """MLflow 3 refuses `./mlruns` file stores unless MLFLOW_ALLOW_FILE_STORE=true; with it, a `file:` URI works."""
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")
    uri = (tmp_path / "mlruns").as_uri()
    config = TrainConfig(report_to=("mlflow",), trackers=TrackersConfig(mlflow_tracking_uri=uri))
    metrics_log = MetricsLog(tmp_path / "state")
    for line in LINES:
        metrics_log.append(line, config)
    metrics_log.close()
    run = read_mlflow_history(uri, saved_run_id(tmp_path / "state", "mlflow") or "")
    assert run["metrics"]["reward/reward_mean"] == [(1, 0.5), (2, 0.75), (3, 1.0)] and run["status"] == "FINISHED"
    assert (tmp_path / "mlruns").is_dir() and not (tmp_path / "state" / "mlflow.db").exists()
