"""Training metrics: step values, eval reward, drift counts, TensorBoard files, reload after restart."""

from __future__ import annotations

import io
import json
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest
import yaml
from rich.console import Console

from agentjet.core.backends.fakes import EchoBackend
from agentjet.core.config import ServerSettings
from agentjet.core.engine import Engine
from agentjet.core.episodes.merging import DriftReason, merge_timelines
from agentjet.core.sdk.status_view import render_status
from agentjet.core.server.app import create_app
from agentjet.core.step.step_stats import StepStats
from agentjet.core.testing import RunningServer, serve_in_thread
from agentjet.core.training.loop import TrainingLoop
from agentjet.core.training.metrics import EvalRewards, merge_report, step_metrics, tensorboard_scalars
from agentjet.core.training.metrics_log import MetricsLog, last_metrics
from agentjet.core.types import CallRecord, EpisodeKind, EpisodeRecord, EpisodeStatus
from tests.conftest import TOKEN, _wait_rolling
from tests.core.factories import call_record
from tests.core.test_training_loop import CONFIG, HEADERS, FakeTrainer
from tests.core.tracker_readers import read_tensorboard

STATS = StepStats(loss=0.25, kl=0.01, clip_fraction=0.1, grad_norm=2.0, tokens_trained=9, samples=3,
                  micro_batches=1, step_time_s=0.5, prefix_tokens_saved=40)  # fmt: skip
# one episode's calls: the second extends the first (merged), the third rewrites its history (a drift)
MERGED_AND_EDITED = [call_record(0, [1, 2, 3], [4, 5]), call_record(1, [1, 2, 3, 4, 5, 6], [7]),
                     call_record(2, [1, 9, 9], [8])]  # fmt: skip


def _lines(state_dir: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (state_dir / "metrics.jsonl").read_text().splitlines()]


async def _episode(
    engine: Engine, task: str, reward: float, calls: list[CallRecord], kind: EpisodeKind = EpisodeKind.TRAIN
) -> None:
    episode, _ = engine.begin_episode(task, kind=kind, agent=None, client_id=None)
    for call in calls:
        engine.call_started(episode)
        engine.call_finished(episode, [call])
    await engine.end_episode(episode.episode_id, reward, {})


def _loop(engine: Engine, state_dir: Path, trainer: FakeTrainer) -> TrainingLoop:
    return TrainingLoop(engine, model_path=state_dir, state_dir=state_dir, trainer_factory=lambda p, c: trainer)


# ---- pure values ------------------------------------------------------------------------------
def test_step_metrics_rewards_per_group_advantages_and_drifts() -> None:
    samples, drifts = merge_timelines(MERGED_AND_EDITED, match="token")
    values = step_metrics(
        STATS,
        rewards=[1.0, 0.0, 0.5, 0.5],
        task_ids=["a", "a", "b", "b"],
        advantages=[1.0, -1.0, 0.0, 0.0],
        drifts=drifts,
        calls=5,
        samples=4,
        eval_rewards=[0.25, 0.75],
    )
    assert values["reward_mean"] == 0.5 and values["reward_std"] == pytest.approx(0.3535534)
    assert values["group_reward_mean"] == 0.5 and values["group_reward_std"] == 0.25  # (0.5 + 0) / 2
    assert values["groups_without_signal"] == 1
    assert values["groups"] == [
        {"task_id": "a", "episodes": 2, "reward_mean": 0.5, "reward_std": 0.5},
        {"task_id": "b", "episodes": 2, "reward_mean": 0.5, "reward_std": 0.0},
    ]
    assert (values["advantage_mean"], values["advantage_absmax"]) == (0.0, 1.0)
    assert values["advantage_std"] == pytest.approx(0.7071068)
    assert values["merge_ratio"] == 1.25 and values["drifts"] == 1 and values["drift_history_edited"] == 1
    assert {k for k in values if k.startswith("drift_")} == {f"drift_{r}" for r in DriftReason}
    assert (values["eval_episodes"], values["eval_reward_mean"], values["eval_reward_std"]) == (2, 0.5, 0.25)
    assert values["loss"] == 0.25 and values["tokens_trained"] == 9 and values["train_time_s"] == 0.5
    assert values["prefix_tokens_saved"] == 40
    assert len(samples) == 2


def test_no_eval_episodes_means_no_eval_reward_and_no_scalar_for_it() -> None:
    values = step_metrics(
        STATS, rewards=[1.0], task_ids=["a"], advantages=[0.0], drifts=[], calls=1, samples=1, eval_rewards=[]
    )
    assert (values["eval_episodes"], values["eval_reward_mean"]) == (0, None)
    tags = dict(tensorboard_scalars({"step": 3, "time": 1.0, **values}))
    assert "eval/eval_reward_mean" not in tags and tags["eval/eval_episodes"] == 0.0
    assert tags["train/loss"] == 0.25 and tags["reward/reward_mean"] == 1.0 and tags["merge/drift_forked"] == 0.0
    assert not any(tag.endswith(("/step", "/time", "/groups")) for tag in tags)


def test_merge_report_names_the_drift_of_each_new_sample() -> None:
    report = merge_report(MERGED_AND_EDITED, match="token")
    assert (report["calls"], report["samples"], report["merge_ratio"]) == (3, 2, 1.5)
    assert report["drifts"] == {"history_edited": 1}
    first, edited = report["sample_starts"]
    assert (first["call_index"], first["calls"], first["reason"], first["trainable_tokens"]) == (0, 2, None, 3)
    assert (edited["call_index"], edited["reason"], edited["compared_with"], edited["shared_tokens"]) == (
        2,
        "history_edited",
        [0, 0],
        1,
    )
    off = merge_report(MERGED_AND_EDITED, match="off")
    assert off["samples"] == 3 and off["drifts"] == {"merge_off": 2}


def test_eval_rewards_are_reported_once_and_only_for_ended_eval_episodes() -> None:
    evals = EvalRewards()

    def record(kind: EpisodeKind, status: EpisodeStatus, reward: float | None) -> EpisodeRecord:
        return EpisodeRecord("e", "t", kind, None, status, reward, {}, 0.0, 0.0, 0, ())

    evals.observe(record(EpisodeKind.EVAL, EpisodeStatus.ENDED, 1.0), 3)
    evals.observe(record(EpisodeKind.EVAL, EpisodeStatus.ENDED, 1.0), 3)  # replayed from the journal
    evals.observe(record(EpisodeKind.TRAIN, EpisodeStatus.ENDED, 0.0), 4)
    evals.observe(record(EpisodeKind.EVAL, EpisodeStatus.ABORTED, None), 5)
    evals.observe(record(EpisodeKind.EVAL, EpisodeStatus.ENDED, 0.0), 2)
    assert evals.take() == [0.0, 1.0] and evals.through_seq == 3
    evals.observe(record(EpisodeKind.EVAL, EpisodeStatus.ENDED, 0.5), 3)  # already reported
    assert evals.take() == [] and evals.through_seq == 3


def test_last_metrics_skips_a_torn_line(tmp_path: Path) -> None:
    path = tmp_path / "metrics.jsonl"
    assert last_metrics(path) is None
    path.write_text('{"step": 1, "loss": 0.5}\n{"step": 2, "lo')
    assert last_metrics(path) == {"step": 1, "loss": 0.5}


def test_metrics_log_writes_the_jsonl_line_and_the_same_scalars(tmp_path: Path) -> None:
    log = MetricsLog(tmp_path)
    log.append({"step": 4, "time": 10.0, "loss": 0.125, "reward_mean": 0.75, "episode_seqs": [1, 2]})
    log.append({"step": 5, "time": 11.0, "loss": 0.5, "reward_mean": 1.0, "eval_reward_mean": None})
    log.close()
    assert [line["step"] for line in _lines(tmp_path)] == [4, 5]
    scalars, purges = read_tensorboard(tmp_path / "tensorboard")
    assert scalars == {
        4: {"train/loss": 0.125, "reward/reward_mean": 0.75},
        5: {"train/loss": 0.5, "reward/reward_mean": 1.0},
    }
    assert purges == [4]  # a rerun of steps >= 4 hides what an earlier run logged for them


# ---- the training loop with a fake trainer ------------------------------------------------------
async def test_step_line_has_eval_reward_and_drifts_and_eval_is_never_trained(
    tmp_path: Path, make_engine: Callable[..., Awaitable[Engine]]
) -> None:
    engine = await make_engine(train_config=CONFIG)
    trainer = FakeTrainer()
    loop = _loop(engine, tmp_path / "state", trainer)
    await _episode(engine, "e", 0.25, [call_record(0, [1, 2], [3, 4, 5, 6, 7, 8])], EpisodeKind.EVAL)
    await _episode(engine, "a", 1.0, MERGED_AND_EDITED)
    await _episode(engine, "e", 0.75, [call_record(0, [1, 2], [3, 4, 5, 6, 7, 8])], EpisodeKind.EVAL)
    await _episode(engine, "a", 0.0, [call_record(0, [1, 2, 3], [4, 5])])
    await loop._train_ready_batches()
    assert trainer.seen == [(3, [pytest.approx(1.0, rel=1e-4)] * 2 + [pytest.approx(-1.0, rel=1e-4)])]
    (line,) = _lines(loop.state_dir)
    assert line["tokens_trained"] == 6  # 3 + 1 from the merged sample, 1 edited, 2: no eval token
    assert (line["eval_episodes"], line["eval_reward_mean"], line["eval_reward_std"]) == (2, 0.5, 0.25)
    assert (line["calls"], line["samples"], line["merge_ratio"]) == (4, 3, pytest.approx(4 / 3))
    assert line["drifts"] == 1 and line["drift_history_edited"] == 1 and line["drift_tools_changed"] == 0
    assert line["groups"] == [{"task_id": "a", "episodes": 2, "reward_mean": 0.5, "reward_std": 0.5}]
    assert line["advantage_absmax"] == pytest.approx(1.0, rel=1e-4) and line["advantage_mean"] == 0.0
    assert engine.status()["pool"]["pooled_episodes"] == 0 and engine.status()["latest_metrics"] == line

    await _episode(engine, "e", 1.0, [call_record(0, [1], [2])], EpisodeKind.EVAL)  # after step 1: in step 2
    await _episode(engine, "b", 1.0, [call_record(0, [1], [2])])
    await _episode(engine, "b", 0.0, [call_record(0, [1], [3])])
    await loop._train_ready_batches()
    second = _lines(loop.state_dir)[1]
    assert (second["step"], second["eval_episodes"], second["eval_reward_mean"]) == (2, 1, 1.0)
    assert second["drifts"] == 0 and second["tokens_trained"] == 2

    scalars, _ = read_tensorboard(loop.state_dir / "tensorboard")
    for written in _lines(loop.state_dir):
        expected = {tag: pytest.approx(v, rel=1e-6) for tag, v in tensorboard_scalars(written)}
        assert scalars[written["step"]] == expected
    assert scalars[1]["eval/eval_reward_mean"] == 0.5 and scalars[1]["merge/drift_history_edited"] == 1.0


async def test_restart_reloads_the_last_line_and_reports_unreported_eval_episodes(
    tmp_path: Path, make_engine: Callable[..., Awaitable[Engine]]
) -> None:
    state_dir = tmp_path / "state"
    engine = await make_engine(train_config=CONFIG)
    loop = _loop(engine, state_dir, FakeTrainer())
    await _episode(engine, "e", 0.5, [call_record(0, [1], [2])], EpisodeKind.EVAL)
    for reward in (1.0, 0.0):
        await _episode(engine, "a", reward, [call_record(0, [1, 2], [3])])
    await loop._train_ready_batches()
    await _episode(engine, "e", 1.0, [call_record(0, [1], [2])], EpisodeKind.EVAL)  # ended, not yet reported
    first = _lines(state_dir)[0]

    restarted = await make_engine(train_config=CONFIG)  # the same journal file, a fresh process's engine
    assert restarted.status()["latest_metrics"] is None
    loop = _loop(restarted, state_dir, FakeTrainer())
    await loop.restore()
    assert restarted.step == 1 and restarted.status()["latest_metrics"] == first
    for reward in (1.0, 0.0):
        await _episode(restarted, "b", reward, [call_record(0, [1, 2], [3])])
    await loop._train_ready_batches()
    second = _lines(state_dir)[1]
    assert (second["step"], second["eval_episodes"], second["eval_reward_mean"]) == (2, 1, 1.0)
    scalars, purges = read_tensorboard(state_dir / "tensorboard")
    assert sorted(scalars) == [1, 2] and purges == [1, 2]  # each process's file starts at its first step


def test_status_view_shows_the_last_step(tmp_path: Path) -> None:
    metrics = {
        "step": 12,
        "reward_mean": 0.5,
        "reward_std": 0.25,
        "group_reward_std": 0.125,
        "eval_reward_mean": 0.75,
        "eval_reward_std": 0.0,
        "eval_episodes": 4,
        "loss": 0.0123,
        "kl": 0.002,
        "clip_fraction": 0.1,
        "tokens_trained": 4096,
        "merge_ratio": 1.5,
        "drift_history_edited": 2,
        "drift_forked": 0,
        "step_time_s": 3.5,
    }
    console = Console(file=io.StringIO(), width=120, record=True, color_system=None)
    console.print(render_status({"state": "rolling", "latest_metrics": metrics}))
    rows = {}
    for text_line in console.export_text().splitlines():
        label, _, value = text_line.strip("│╭╮╰╯─ ").partition("  ")
        rows[label.strip()] = value.strip()
    assert rows["last step"] == "12"
    assert rows["reward"] == "0.5 ± 0.25 (within-group std 0.125)"
    assert rows["eval reward"] == "0.75 ± 0.00 (4 episodes)"
    assert (rows["loss"], rows["kl"], rows["tokens trained"]) == ("0.0123", "0.002", "4,096")
    assert rows["merge ratio"] == "1.50 · drifts history_edited=2" and rows["step time"] == "3.5s"


# ---- GET /swarm/episodes/{id}: the merge section ------------------------------------------------
def test_episode_record_has_a_merge_report_with_drift_reasons(
    live_server: Callable[..., RunningServer], echo_backend: EchoBackend
) -> None:
    server = live_server(echo_backend)
    headers = {"Authorization": f"Bearer {TOKEN}"}
    begun = httpx.post(f"{server.url}/swarm/episodes", json={"task_id": "t"}, headers=headers).json()
    llm = openai.OpenAI(base_url=begun["base_url"], api_key=begun["api_key"], max_retries=0)
    llm.chat.completions.create(model="m", messages=[{"role": "user", "content": "hello there"}], max_tokens=4)
    edited = [{"role": "user", "content": "hello THERE, edited"}, {"role": "user", "content": "more"}]
    llm.chat.completions.create(model="m", messages=edited, max_tokens=4)
    url = f"{server.url}/swarm/episodes/{begun['episode_id']}"
    assert "merge" not in httpx.get(url, headers=headers).json()  # open: nothing merged yet
    assert httpx.post(f"{url}/end", json={"reward": 1.0}, headers=headers).status_code == 200
    merge = httpx.get(url, headers=headers).json()["merge"]
    assert (merge["match"], merge["calls"], merge["samples"]) == ("token", 2, 2)
    assert [s["reason"] for s in merge["sample_starts"]] == [None, "history_edited"]
    assert merge["drifts"] == {"history_edited": 1} and merge["sample_starts"][1]["shared_tokens"] > 0
    off = httpx.put(f"{server.url}/swarm/config", json={"merge": "off"}, headers=headers)
    assert off.status_code == 200, off.text
    assert httpx.get(url, headers=headers).json()["merge"]["drifts"] == {"merge_off": 1}


# ---- end to end: the real tiny model, a restart with the same state dir -------------------------
def _serve(tiny_model: Path, state_dir: Path) -> Any:
    from agentjet.core.backends.transformers_backend import TransformersBackend

    config_file = state_dir.parent / "train.yaml"
    config_file.write_text(yaml.safe_dump(CONFIG.model_dump(mode="json")))
    settings = ServerSettings(model="tiny", state_dir=state_dir, token=TOKEN, config=config_file)
    backend = TransformersBackend(tiny_model, name="tiny", max_batch_size=4)
    return serve_in_thread(create_app(settings, backend=backend, model_path=tiny_model))


def _poll_status(url: str, ready: Callable[[dict[str, Any]], bool], timeout_s: float = 60.0) -> dict[str, Any]:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        status: dict[str, Any] = httpx.get(f"{url}/swarm/status", headers=HEADERS, timeout=10).json()
        if ready(status):
            return status
        time.sleep(0.05)
    raise TimeoutError(f"status never got there: {status}")


def _live_episode(url: str, task: str, reward: float, kind: str = "train") -> None:
    begun = httpx.post(f"{url}/swarm/episodes", json={"task_id": task, "kind": kind}, headers=HEADERS).json()
    llm = openai.OpenAI(base_url=begun["base_url"], api_key=begun["api_key"], max_retries=0, timeout=60)
    llm.chat.completions.create(model="tiny", messages=[{"role": "user", "content": task}], max_tokens=4)
    end = httpx.post(f"{url}/swarm/episodes/{begun['episode_id']}/end", json={"reward": reward}, headers=HEADERS)
    assert end.status_code == 200, end.text


def test_live_server_reports_eval_reward_and_status_survives_a_restart(tmp_path: Path, tiny_model: Path) -> None:
    state_dir = tmp_path / "state"
    with _serve(tiny_model, state_dir) as server:
        _wait_rolling(server.url)
        _live_episode(server.url, "eval-1", 0.25, kind="eval")
        _live_episode(server.url, "t", 1.0)
        _live_episode(server.url, "t", 0.0)
        status = _poll_status(server.url, lambda s: s["step"] >= 1 and s["state"] == "rolling")
    (line,) = _lines(state_dir)
    assert status["latest_metrics"] == line and line["tokens_trained"] > 0
    assert (line["eval_episodes"], line["eval_reward_mean"], line["episodes"]) == (1, 0.25, 2)
    scalars, _ = read_tensorboard(state_dir / "tensorboard")
    assert scalars[1] == {tag: pytest.approx(v, rel=1e-6) for tag, v in tensorboard_scalars(line)}

    with _serve(tiny_model, state_dir) as server:  # a restart: status shows step 1 before any new step
        _wait_rolling(server.url)
        status = _poll_status(server.url, lambda s: s["latest_metrics"] is not None)
        assert status["step"] == 1 and status["latest_metrics"] == line
