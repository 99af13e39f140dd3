"""Read back what each experiment tracker wrote, with that tool's own formats and clients, not our writers.

TensorBoard: the TFRecord event files (CRCs checked). wandb: the offline run's transaction log
(`run-<id>.wandb`: a LevelDB-style log of wandb's `Record` protobufs; wandb 0.31 ships no Python
reader, so the framing is read here and each record parsed with wandb's own `wandb_internal_pb2`).
MLflow: `MlflowClient.get_metric_history` on the store the run was written to.
"""

from __future__ import annotations

import json
import struct
import zlib
from pathlib import Path
from typing import Any

__all__ = ["read_mlflow_history", "read_tensorboard", "read_wandb_run"]

_WANDB_HEADER = b":W&B" + struct.pack("<HB", 0xBEE1, 0)
_BLOCK = 32768
_FULL, _FIRST, _MIDDLE, _LAST = 1, 2, 3, 4


def read_tensorboard(logdir: Path) -> tuple[dict[int, dict[str, float]], list[int]]:
    """Every scalar in the TFRecord event files (CRCs checked), by step, and the purge (restart) steps."""
    from tensorboardX.proto.event_pb2 import Event, SessionLog
    from tensorboardX.record_writer import masked_crc32c

    scalars: dict[int, dict[str, float]] = {}
    purges: list[int] = []
    for path in sorted(logdir.glob("events.out.tfevents.*")):
        data, pos = path.read_bytes(), 0
        while pos < len(data):
            header = data[pos : pos + 8]
            (length,) = struct.unpack("<Q", header)
            assert struct.unpack("<I", data[pos + 8 : pos + 12])[0] == masked_crc32c(header)
            body = data[pos + 12 : pos + 12 + length]
            assert struct.unpack("<I", data[pos + 12 + length : pos + 16 + length])[0] == masked_crc32c(body)
            pos += 16 + length
            event = Event.FromString(body)
            if event.session_log.status == SessionLog.START:
                purges.append(event.step)
            for value in event.summary.value:
                scalars.setdefault(event.step, {})[value.tag] = value.simple_value
    return scalars, purges


def _wandb_records(path: Path) -> list[bytes]:
    """The payloads of a wandb transaction log, fragments joined, each record's CRC32 checked."""
    data = path.read_bytes()
    assert data[:7] == _WANDB_HEADER, f"{path} is not a wandb transaction log"
    records: list[bytes] = []
    pending = b""
    pos = 7
    while pos + 7 <= len(data):
        left_in_block = _BLOCK - pos % _BLOCK
        if left_in_block < 7:  # the tail of a block too short for a header is padding
            pos += left_in_block
            continue
        checksum, length, kind = struct.unpack("<IHB", data[pos : pos + 7])
        if length == 0 and kind == 0:
            break
        body = data[pos + 7 : pos + 7 + length]
        assert zlib.crc32(body, zlib.crc32(bytes([kind]))) & 0xFFFFFFFF == checksum, f"bad CRC at {pos} in {path}"
        pos += 7 + length
        if kind == _FULL:
            records.append(body)
        elif kind == _FIRST:
            pending = body
        elif kind == _MIDDLE:
            pending += body
        elif kind == _LAST:
            records.append(pending + body)
            pending = b""
    return records


def read_wandb_run(run_dir: Path) -> dict[str, Any]:
    """An offline run: `id`, `project`, `name`, `config` (key -> value) and `history` (step -> key -> value)."""
    from wandb.proto import wandb_internal_pb2

    (log_file,) = run_dir.glob("run-*.wandb")
    run: dict[str, Any] = {"history": {}, "config": {}}
    for payload in _wandb_records(log_file):
        record = wandb_internal_pb2.Record.FromString(payload)
        kind = record.WhichOneof("record_type")
        if kind == "run":
            run.update(id=record.run.run_id, project=record.run.project, name=record.run.display_name)
            run["config"].update({i.key: json.loads(i.value_json) for i in record.run.config.update})
        elif kind == "config":
            run["config"].update({i.key: json.loads(i.value_json) for i in record.config.update})
        elif kind == "history":
            values = {i.key or "/".join(i.nested_key): json.loads(i.value_json) for i in record.history.item}
            step = record.history.step.num if record.history.HasField("step") else int(values["_step"])
            run["history"][step] = {k: v for k, v in values.items() if not k.startswith("_")}
    return run


def read_mlflow_history(tracking_uri: str, run_id: str) -> dict[str, Any]:
    """A run's `name`, `experiment`, `status`, `params` and `metrics` (key -> [(step, value), ...] in log order)."""
    from mlflow import MlflowClient

    client = MlflowClient(tracking_uri)
    run = client.get_run(run_id)
    metrics = {key: [(m.step, m.value) for m in client.get_metric_history(run_id, key)] for key in run.data.metrics}
    return {
        "name": run.info.run_name,
        "experiment": client.get_experiment(run.info.experiment_id).name,
        "status": run.info.status,
        "params": dict(run.data.params),
        "metrics": metrics,
    }
