"""An MLflow run in a local store (`sqlite:///<state_dir>/mlflow.db` by default), continued after a restart.

Written through `MlflowClient` (no global active run, so several servers in one process never
share one). The default store is MLflow's own local SQLite backend: no tracking server, no
network. (MLflow 3 keeps the `./mlruns` file store in maintenance mode and refuses it unless
`MLFLOW_ALLOW_FILE_STORE=true`; a `file:` URI in `trackers.mlflow_tracking_uri` works with that
set.) The run's id is kept in `trackers.json`, so a restarted server logs into the same run;
MLflow's metric history is append-only, so a step redone after a kill -9 appears twice, the
redone value last. The TrainConfig the run started with becomes its params (dotted names).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from agentjet.core.config import TrackersConfig
from agentjet.core.trackers.base import Scalars, remember_run_id, saved_run_id

__all__ = ["MlflowTracker", "default_tracking_uri", "flat_params"]

_MAX_PARAM_CHARS = 6000  # MLflow's limit on one param value


def default_tracking_uri(state_dir: Path) -> str:
    return f"sqlite:///{state_dir.resolve() / 'mlflow.db'}"


def flat_params(config: Mapping[str, Any], prefix: str = "") -> dict[str, str]:
    """`{"grpo": {"clip_eps": 0.2}}` -> `{"grpo.clip_eps": "0.2"}` (MLflow params are flat strings)."""
    flat: dict[str, str] = {}
    for key, value in config.items():
        if isinstance(value, Mapping):
            flat.update(flat_params(value, f"{prefix}{key}."))
        else:
            flat[f"{prefix}{key}"] = str(value)[:_MAX_PARAM_CHARS]
    return flat


class MlflowTracker:
    name = "mlflow"

    def __init__(self, state_dir: Path, settings: TrackersConfig, run_config: Mapping[str, Any]) -> None:
        logging.getLogger("alembic").setLevel(logging.WARNING)  # the store's first-use migrations are not news
        from mlflow import MlflowClient
        from mlflow.entities import Param

        state_dir.mkdir(parents=True, exist_ok=True)
        self.tracking_uri = settings.mlflow_tracking_uri or default_tracking_uri(state_dir)
        self._client = MlflowClient(self.tracking_uri)
        run_id = saved_run_id(state_dir, self.name)
        if run_id is None or not self._exists(run_id):
            experiment = self._client.get_experiment_by_name(settings.project)
            experiment_id = experiment.experiment_id if experiment else self._client.create_experiment(settings.project)
            run = self._client.create_run(experiment_id, run_name=settings.run_name or state_dir.resolve().name)
            run_id = run.info.run_id
            params = [Param(key, value) for key, value in flat_params(run_config).items()]
            for start in range(0, len(params), 100):  # MLflow takes at most 100 params a batch
                self._client.log_batch(run_id, params=params[start : start + 100])
            remember_run_id(state_dir, self.name, run_id)
        else:
            self._client.update_run(run_id, status="RUNNING")
        self.run_id = run_id

    def _exists(self, run_id: str) -> bool:
        from mlflow.exceptions import MlflowException

        try:
            self._client.get_run(run_id)
        except MlflowException:
            return False
        return True

    def log(self, step: int, scalars: Scalars, wall_time: float) -> None:
        from mlflow.entities import Metric

        timestamp_ms = int(wall_time * 1000)
        metrics = [Metric(tag, value, timestamp_ms, step) for tag, value in scalars]
        for start in range(0, len(metrics), 1000):  # MLflow takes at most 1000 metrics a batch
            self._client.log_batch(self.run_id, metrics=metrics[start : start + 1000])

    def close(self) -> None:
        if self.run_id:
            self._client.set_terminated(self.run_id)
            self.run_id = ""
