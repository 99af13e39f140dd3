"""The episode probe (validation's and the red team's player), run in-process against a scripted server: episodes
play concurrently as the training client plays them, and `--discard` leaves the server no reward of a check."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentjet.core import serve_scripted
from agentjet.core.types import EpisodeKind, EpisodeRecord, EpisodeStatus
from agentjet.vibe.check import episode_probe
from tests.tasks.swarm_helpers import TOKEN, journal

# A client whose episodes meet at a barrier before their one call: two of them finish only when both are in
# flight at once (a probe that plays them one after another breaks the barrier after its timeout).
BARRIER_CLIENT = '''
import threading

from openai import OpenAI

from agentjet.tasks.base import Outcome, TaskItem

MEET = threading.Barrier(2, timeout=5)


class Meet:
    name = "meet"
    servers = ("policy",)

    def items(self, split, *, count, seed):
        return [TaskItem(f"{split}-{seed + i}", seed + i, {}) for i in range(count)]

    def run(self, item, llms):
        MEET.wait()
        endpoint = llms["policy"]
        client = OpenAI(base_url=endpoint.base_url, api_key=endpoint.api_key, max_retries=0)
        reply = client.chat.completions.create(
            model=endpoint.model, messages=[{"role": "user", "content": item.task_id}], max_tokens=4
        )
        return Outcome.single(0.5, reply=reply.choices[0].message.content or "")


def make_task(**params):
    return Meet()
'''


def _probe(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, *flags: str
) -> tuple[list[dict[str, Any]], list[EpisodeRecord]]:
    """The probe's records of 2 episodes, and what the server's journal kept of them."""
    client = tmp_path / "client.py"
    client.write_text(BARRIER_CLIENT)
    monkeypatch.setenv("AGENTJET_TOKEN", TOKEN)
    with serve_scripted(lambda prompt: "ok", token=TOKEN) as server:
        code = episode_probe.main(["--client", str(client), "--server", server.url, "--episodes", "2", *flags])
        kept = journal(server.app.state.settings.state_dir)
    assert code == 0
    lines = capsys.readouterr().out.splitlines()
    return [json.loads(line[len(episode_probe.EPISODE_MARK) :]) for line in lines], kept


def test_episodes_play_concurrently_as_in_training_and_end_with_their_reward(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    records, kept = _probe(tmp_path, capsys, monkeypatch)
    assert [r["ok"] for r in records] == [True, True], records
    assert sorted(str(r["task_id"]) for r in records) == ["eval-0", "eval-1"]
    assert [(r.kind, r.status, r.reward) for r in kept] == [(EpisodeKind.EVAL, EpisodeStatus.ENDED, 0.5)] * 2


def test_one_at_a_time_the_barrier_breaks(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    records, _ = _probe(tmp_path, capsys, monkeypatch, "--concurrency", "1")
    assert [r["ok"] for r in records] == [False, False]  # so the test above passes only because they overlap
    assert all("BrokenBarrierError" in str(r["error"]) for r in records)


def test_discard_scores_each_episode_but_leaves_the_server_no_reward(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    records, kept = _probe(tmp_path, capsys, monkeypatch, "--discard")
    assert [(r["ok"], r["rewards"]) for r in records] == [(True, {"policy": 0.5})] * 2, records
    assert [(r.kind, r.status, r.reward) for r in kept] == [(EpisodeKind.EVAL, EpisodeStatus.ABORTED, None)] * 2


@pytest.mark.parametrize("value", ["0", "-2"])
def test_a_concurrency_below_one_is_refused_in_one_line(value: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        episode_probe.main(["--server", "http://127.0.0.1:9", "--concurrency", value])
    assert exited.value.code == 2
    assert f"--concurrency must be at least 1, got {value}" in capsys.readouterr().err
