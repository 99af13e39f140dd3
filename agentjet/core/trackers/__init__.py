"""Experiment trackers: where each training step's scalars go besides `metrics.jsonl` (`TrainConfig.report_to`).

`metrics.jsonl` is the record; a tracker gets the same numbers for the tools researchers already
use. Each writes under the server's state dir by default and needs no network: TensorBoard event
files, a wandb run in offline mode, an MLflow run in a local SQLite store. A tracker that fails
is logged and skipped; it never stops a step.

base.py         The `Tracker` seam: one step's scalars in, nothing out; how its run is named and found again.
factory.py      Tracker names -> implementations (`TRACKERS`), and the check that each one's library is installed.
mlflow_run.py   An MLflow run in a local store (SQLite in the state dir by default), continued after a restart.
tensorboard.py  TensorBoard event files in `<state_dir>/tensorboard/`, one file per process with a purge marker.
wandb_run.py    A wandb run in `<state_dir>/wandb/` (offline by default), continued after a restart.
"""
