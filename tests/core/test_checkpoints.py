"""Checkpoints: atomic on disk, and a kill -9 + restart trains no ended episode twice and loses none."""

from __future__ import annotations

import json
import signal
from pathlib import Path

import httpx
import openai
import yaml

from agentjet.core.config import CollectConfig, GrpoConfig, OptimConfig, TrainConfig
from agentjet.core.training.checkpoints import latest_checkpoint, load_trainer_state, truncate_metrics, write_checkpoint
from tests.core.server_process import SERVER_TOKEN, start_training_server, wait_for_step
from tests.core.training_records import ended_train_episodes, metric_lines, trained_seqs

CONFIG = TrainConfig(
    collect=CollectConfig(strategy="tasks", tasks=1), grpo=GrpoConfig(group_size=2), optim=OptimConfig(lr=5e-2)
)


def _write(root: Path, adapter: Path, step: int, consumed: list[int]) -> Path:
    return write_checkpoint(
        root,
        step=step,
        policy_version=step,
        adapter_dir=adapter,
        trainer_state={"step": step, "optimizer": {}},
        consumed=consumed,
        config=CONFIG,
    )


def _adapter(tmp_path: Path) -> Path:
    adapter = tmp_path / "adapter"
    adapter.mkdir()
    (adapter / "adapter_config.json").write_text("{}")
    return adapter


def test_write_read_and_keep_last_two(tmp_path: Path) -> None:
    root, adapter = tmp_path / "ckpt", _adapter(tmp_path)
    assert latest_checkpoint(root) is None
    for step in (1, 2, 3):
        _write(root, adapter, step, [3, 1, 2][:step])
    assert sorted(p.name for p in root.iterdir()) == ["LATEST", "step-2", "step-3"]
    checkpoint = latest_checkpoint(root)
    assert checkpoint is not None and checkpoint.step == 3 and checkpoint.consumed == (1, 2, 3)
    assert (checkpoint.adapter_dir / "adapter_config.json").is_file()
    assert load_trainer_state(checkpoint) == {"step": 3, "optimizer": {}}
    meta = json.loads((checkpoint.path / "meta.json").read_text())
    assert meta["config"]["grpo"]["group_size"] == 2 and meta["time"] > 0


def test_leftover_temp_dir_and_stale_latest_are_ignored(tmp_path: Path) -> None:
    root, adapter = tmp_path / "ckpt", _adapter(tmp_path)
    _write(root, adapter, 1, [1])
    (root / ".tmp-step-2-abc").mkdir()  # a writer killed before its rename
    (root / ".tmp-step-2-abc" / "meta.json").write_text('{"step": 2}')
    checkpoint = latest_checkpoint(root)
    assert checkpoint is not None and checkpoint.step == 1
    (root / "LATEST").write_text("step-7")  # names a folder that never landed
    checkpoint = latest_checkpoint(root)
    assert checkpoint is not None and checkpoint.step == 1
    _write(root, adapter, 2, [1, 2])  # the next write cleans the leftover temp folder
    assert not (root / ".tmp-step-2-abc").exists()


def test_truncate_metrics_keeps_steps_up_to_the_checkpoint(tmp_path: Path) -> None:
    path = tmp_path / "metrics.jsonl"
    path.write_text("".join(json.dumps({"step": s}) + "\n" for s in (1, 2, 3)) + '{"step": 4')
    assert truncate_metrics(path, 2) == 2
    assert [json.loads(line)["step"] for line in path.read_text().splitlines()] == [1, 2]
    assert truncate_metrics(tmp_path / "missing.jsonl", 0) == 0


# ---- end to end: kill -9 of a training server, restart with the same state dir ------------------
AUTH = {"Authorization": f"Bearer {SERVER_TOKEN}"}


def _episode(port: int, task: str, reward: float) -> None:
    url = f"http://127.0.0.1:{port}"
    begun = httpx.post(f"{url}/swarm/episodes", json={"task_id": task}, headers=AUTH, timeout=30).json()
    client = openai.OpenAI(base_url=begun["base_url"], api_key=begun["api_key"], max_retries=0, timeout=60)
    client.chat.completions.create(model="tiny", messages=[{"role": "user", "content": f"Task {task}"}], max_tokens=4)
    end = httpx.post(f"{url}/swarm/episodes/{begun['episode_id']}/end", json={"reward": reward}, headers=AUTH)
    assert end.status_code == 200, end.text


def test_kill_9_and_restart_resumes_without_training_twice(tmp_path: Path, free_port: int) -> None:
    state, port = tmp_path / "state", free_port
    state.mkdir()
    (state / "train.yaml").write_text(yaml.safe_dump(CONFIG.model_dump(mode="json")))
    proc = start_training_server(state, port)
    try:
        for task in ("a", "b"):
            _episode(port, task, 1.0)
            _episode(port, task, 0.0)
        before = wait_for_step(port, 2)
        _episode(port, "c", 1.0)  # ended, pooled, not trained: must survive the kill
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
    checkpoint = latest_checkpoint(state / "checkpoints")
    assert checkpoint is not None and checkpoint.step == before["step"]

    proc = start_training_server(state, port)
    try:
        status = wait_for_step(port, checkpoint.step)
        assert status["step"] == checkpoint.step and status["policy_version"] == checkpoint.policy_version
        _episode(port, "c", 0.0)  # completes the pooled "c" group from before the kill
        _episode(port, "d", 1.0)
        _episode(port, "d", 0.0)
        final = wait_for_step(port, checkpoint.step + 2)
        assert final["pool"]["pooled_episodes"] == 0
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
    _assert_each_trained_once(state)


def _assert_each_trained_once(state: Path) -> None:
    """Every ended train episode is in metrics.jsonl exactly once, and in the last checkpoint's consumed set."""
    ended = set(ended_train_episodes(state))
    lines = metric_lines(state)
    trained = trained_seqs(lines)
    assert [m["step"] for m in lines] == list(range(1, len(lines) + 1)) and len(lines) >= 4
    assert sorted(trained) == sorted(ended) and len(trained) == len(set(trained))
    checkpoint = latest_checkpoint(state / "checkpoints")
    assert checkpoint is not None and checkpoint.step == len(lines) and set(checkpoint.consumed) == ended
