"""Tracker names -> implementations (`TRACKERS`), and the check that each one's library is installed."""

from __future__ import annotations

import importlib.util
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from agentjet.core.config import TrackerName, TrackersConfig
from agentjet.core.errors import ConfigError
from agentjet.core.trackers.base import Tracker

__all__ = ["TRACKERS", "check_installed", "open_tracker"]


def _tensorboard(state_dir: Path, settings: TrackersConfig, run_config: Mapping[str, Any]) -> Tracker:
    from agentjet.core.trackers.tensorboard import TensorBoardTracker

    return TensorBoardTracker(state_dir)


def _wandb(state_dir: Path, settings: TrackersConfig, run_config: Mapping[str, Any]) -> Tracker:
    from agentjet.core.trackers.wandb_run import WandbTracker

    return WandbTracker(state_dir, settings, run_config)


def _mlflow(state_dir: Path, settings: TrackersConfig, run_config: Mapping[str, Any]) -> Tracker:
    from agentjet.core.trackers.mlflow_run import MlflowTracker

    return MlflowTracker(state_dir, settings, run_config)


TrackerFactory = Callable[[Path, TrackersConfig, Mapping[str, Any]], Tracker]
TRACKERS: Mapping[TrackerName, TrackerFactory] = {"tensorboard": _tensorboard, "wandb": _wandb, "mlflow": _mlflow}
_PACKAGES: Mapping[TrackerName, str] = {"tensorboard": "tensorboardX", "wandb": "wandb", "mlflow": "mlflow"}


def check_installed(names: Sequence[TrackerName]) -> None:
    """A ConfigError naming the pip command when a tracker in `names` has no library here."""
    missing = [name for name in names if importlib.util.find_spec(_PACKAGES[name]) is None]
    if missing:
        raise ConfigError(
            f"report_to {', '.join(missing)}: not installed on this server; "
            "pip install 'agentjet[trackers]' (wandb, mlflow-skinny) or drop it from report_to"
        )


def open_tracker(
    name: TrackerName, state_dir: Path, settings: TrackersConfig, run_config: Mapping[str, Any]
) -> Tracker:
    """Start (or continue) `name`'s run for this state dir."""
    return TRACKERS[name](state_dir, settings, run_config)
