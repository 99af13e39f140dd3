"""A wandb run in `<state_dir>/wandb/` (offline by default), continued after a restart.

Offline, wandb writes the run's history into `<state_dir>/wandb/offline-run-*/run-<id>.wandb`
and never opens a socket beyond its own local service process; `wandb sync <that folder>`
uploads it later. The run's id is kept in `trackers.json`, so a restarted server logs into the
same run (`resume="allow"`). The TrainConfig the run started with is its wandb config. Console
capture, system metrics, git and requirements snapshots are off: a training server's stdout and
machine are not the experiment.
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from agentjet.core.config import TrackersConfig
from agentjet.core.trackers.base import Scalars, remember_run_id, saved_run_id

__all__ = ["WandbTracker"]


class WandbTracker:
    name = "wandb"

    def __init__(self, state_dir: Path, settings: TrackersConfig, run_config: Mapping[str, Any]) -> None:
        import wandb

        run_id = saved_run_id(state_dir, self.name) or secrets.token_hex(4)
        state_dir.mkdir(parents=True, exist_ok=True)
        self._run = wandb.init(
            project=settings.project,
            name=settings.run_name or state_dir.resolve().name,
            id=run_id,
            resume="allow",
            dir=str(state_dir),
            mode=settings.wandb_mode,
            config=dict(run_config),
            settings=wandb.Settings(
                silent=True,
                console="off",
                reinit="create_new",  # several servers in one process each keep their own run
                x_disable_stats=True,
                x_disable_meta=True,
                x_save_requirements=False,
                disable_git=True,
                disable_code=True,
                save_code=False,
            ),
        )
        remember_run_id(state_dir, self.name, run_id)
        self.run_id = run_id

    def log(self, step: int, scalars: Scalars, wall_time: float) -> None:
        self._run.log(dict(scalars), step=step)

    def close(self) -> None:
        self._run.finish()
