"""kill -9 of a training server mid-update and while rolling: every completed episode is trained exactly once.

DESIGN §4 durability, end to end on the real `tiny` model with the `tasks` strategy: a
`SwarmClient` drives GRPO groups of two episodes (rewards 1 and 0); the server is killed once
in the middle of an update and once while rolling with an episode pooled and another open, each
time restarted over the same state dir, then driven on to six updates. The journal,
metrics.jsonl, the newest checkpoint and the live pool must then tell one consistent story.
"""

from __future__ import annotations

import contextlib
import signal
import subprocess
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import openai
import pytest
import yaml
from safetensors.torch import load_file

from agentjet.core import SwarmClient
from agentjet.core.config import CollectConfig, GrpoConfig, OptimConfig, TrainConfig
from agentjet.core.training.checkpoints import latest_checkpoint
from tests.core.server_process import SERVER_TOKEN, start_training_server, swarm_status, wait_for_step
from tests.core.training_records import ended_train_episodes, metric_lines, trained_seqs

# one group of two episodes per update; a checkpoint every 2 steps, so a kill after an odd step
# makes the restart redo that step from the checkpoint before it
CONFIG = TrainConfig(
    checkpoint_every=2,
    collect=CollectConfig(strategy="tasks", tasks=1),
    grpo=GrpoConfig(group_size=2),
    optim=OptimConfig(lr=5e-2),
)
_POLL_TIMEOUT_S = 30.0


def _episode(client: SwarmClient, task: str, reward: float) -> str:
    """One agent turn through the OpenAI API, then the reward; returns the episode id."""
    with client.episode(task) as episode:
        agent = openai.OpenAI(base_url=episode.base_url, api_key=episode.api_key, max_retries=0, timeout=60)
        messages: Any = [{"role": "user", "content": f"Task {task}: say something."}]
        agent.chat.completions.create(model="tiny", messages=messages, max_tokens=4)
        episode.end(reward=reward)
    return episode.episode_id


def _group(client: SwarmClient, task: str) -> None:
    """A complete GRPO group whose rewards differ, so the update has a signal."""
    _episode(client, task, 1.0)
    _episode(client, task, 0.0)


def _kill(proc: subprocess.Popen[bytes]) -> None:
    proc.send_signal(signal.SIGKILL)
    assert proc.wait(timeout=10) == -signal.SIGKILL


@contextlib.contextmanager
def _server_life(state: Path, port: int) -> Iterator[subprocess.Popen[bytes]]:
    """One run of the server over `state`; killed on the way out if the test has not killed it."""
    proc = start_training_server(state, port)
    try:
        yield proc
    finally:
        if proc.poll() is None:
            _kill(proc)


def _kill_mid_update(
    proc: subprocess.Popen[bytes], client: SwarmClient, port: int, tasks: Sequence[str]
) -> tuple[list[str], dict[str, Any]]:
    """Drive one group per task; kill -9 as soon as a status poll sees the update it set off.

    Polls back to back (an update on `tiny` lasts a few hundred ms); an update that ended before
    any poll saw it just means trying with the next group. Returns the groups driven and the
    status seen in the update.
    """
    driven: list[str] = []
    for task in tasks:
        step = swarm_status(port)["step"]
        _group(client, task)
        driven.append(task)
        deadline = time.monotonic() + _POLL_TIMEOUT_S
        while time.monotonic() < deadline:
            status = swarm_status(port)
            if status["state"] == "updating":
                _kill(proc)
                return driven, status
            if status["state"] == "rolling" and status["step"] > step:
                break  # missed it: the next group's update
    raise AssertionError(f"no status poll caught an update in {len(tasks)} tries")


@pytest.mark.slow  # three server starts: about a minute on 2 CPU cores
def test_kill_9_mid_update_and_while_rolling_trains_every_completed_episode_once(
    tmp_path: Path, free_port: int, tiny_model: Path
) -> None:
    state, port = tmp_path / "state", free_port
    state.mkdir()
    (state / "train.yaml").write_text(yaml.safe_dump(CONFIG.model_dump(mode="json")))
    client = SwarmClient(f"http://127.0.0.1:{port}", token=SERVER_TOKEN, retries=1)

    # life 1: steps 1-2 (checkpoint at 2), then kill -9 while the next update runs
    with _server_life(state, port) as proc:
        groups = ["a", "b"]
        for task in groups:
            _group(client, task)
        wait_for_step(port, 2)
        driven, seen = _kill_mid_update(proc, client, port, ["c", "d", "e"])
        groups += driven
    assert seen["step"] >= 2  # a training update, not the restore at start-up

    # life 2: the checkpoint is restored and the lost update(s) redone from the journal alone;
    # then on to step 5 (checkpoint at 4) and kill -9 while rolling, with "x" pooled and "open" open
    with _server_life(state, port) as proc:
        status = wait_for_step(port, len(groups), timeout_s=_POLL_TIMEOUT_S)
        assert status["step"] == len(groups) and status["pool"]["pooled_episodes"] == 0
        for task in ["c", "d", "e"][len(groups) - 2 :]:
            _group(client, task)
            groups.append(task)
        wait_for_step(port, 5)
        _episode(client, "x", 1.0)
        open_episode = client.begin_episode("open")
        status = swarm_status(port)
        assert status["state"] == "rolling" and status["step"] == 5 and status["pool"]["pooled_episodes"] == 1
        _kill(proc)
    killed_at = time.time()
    checkpoint = latest_checkpoint(state / "checkpoints")
    assert checkpoint is not None and checkpoint.step == 4
    assert [m["step"] for m in metric_lines(state)] == [1, 2, 3, 4, 5]  # step 5 is on disk, not checkpointed

    # life 3: step 5 is redone; "x" survived in the pool and completes a group; "z" stays pooled
    with _server_life(state, port) as proc:
        status = wait_for_step(port, 5, timeout_s=_POLL_TIMEOUT_S)
        assert status["step"] == 5 and status["pool"]["pooled_episodes"] == 1  # "x"
        _episode(client, "x", 0.0)
        wait_for_step(port, 6)
        leftover = _episode(client, "z", 1.0)
        final = swarm_status(port)
    assert final["state"] == "rolling" and final["step"] == 6 and final["policy_version"] == 6

    lines = metric_lines(state)
    assert [m["step"] for m in lines] == [1, 2, 3, 4, 5, 6]  # no step lost, none repeated
    assert lines[4]["time"] > killed_at  # the step-5 line of life 2 was dropped and the step redone
    trained = trained_seqs(lines)
    assert len(trained) == len(set(trained))  # no episode in two updates
    ended = ended_train_episodes(state)
    assert set(trained) <= set(ended)
    # each update trained one whole group, in the order the client completed them
    assert [sorted(ended[s].task_id for s in m["episode_seqs"]) for m in lines] == [[t, t] for t in [*groups, "x"]]
    # every completed episode was trained, except the one still pooled, as the server says
    seq_of = {record.episode_id: seq for seq, record in ended.items()}
    assert set(ended) - set(trained) == {seq_of[leftover]} and final["pool"]["pooled_episodes"] == 1
    assert open_episode.episode_id not in seq_of  # never completed: never journaled, never trained

    checkpoint = latest_checkpoint(state / "checkpoints")
    assert checkpoint is not None and checkpoint.step == 6 and set(checkpoint.consumed) == set(trained)
    _assert_adapter_loads(checkpoint.adapter_dir, state / "adapters" / "step-6", tiny_model)


def _assert_adapter_loads(adapter_dir: Path, served_dir: Path, tiny_model: Path) -> None:
    """The checkpoint's adapter is a PEFT folder peft loads onto `tiny`, equal to the one served, and trained."""
    import peft
    import torch
    from transformers import AutoModelForCausalLM

    model = peft.PeftModel.from_pretrained(AutoModelForCausalLM.from_pretrained(tiny_model), adapter_dir)
    lora_b = [p for name, p in model.named_parameters() if "lora_B" in name]
    assert lora_b and any(p.abs().sum() > 0 for p in lora_b)  # peft starts B at zero: six steps moved it
    saved, served = (load_file(d / "adapter_model.safetensors") for d in (adapter_dir, served_dir))
    assert saved.keys() == served.keys() and all(torch.equal(saved[k], served[k]) for k in saved)
