"""The journal stores closed episodes durably, in order, once each."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from agentjet.core.episodes.journal import Journal
from agentjet.core.types import CallRecord, EpisodeKind, EpisodeRecord, EpisodeStatus


def _record(episode_id: str, status: EpisodeStatus = EpisodeStatus.ENDED, reward: float | None = 1.0) -> EpisodeRecord:
    call = CallRecord(
        episode_id=episode_id,
        call_index=0,
        choice_index=0,
        agent=None,
        messages=[{"role": "user", "content": "hi"}],
        tools=None,
        sampling={"temperature": 1.0},
        prompt_text="hi",
        prompt_ids=(1, 2, 3),
        completion_ids=(4, 5),
        completion_logprobs=(-0.5, -0.25),
        completion_text="ok",
        tool_calls=None,
        finish_reason="stop",
        policy_version=3,
        tool_format="none",
        started_at=1.0,
        first_token_s=0.1,
        finished_at=2.0,
    )
    return EpisodeRecord(episode_id, "task", EpisodeKind.TRAIN, None, status, reward, {"k": 1}, 0.0, 3.0, 3, (call,))


def test_round_trip_keeps_exact_tokens(tmp_path: Path) -> None:
    journal = Journal(tmp_path / "j.sqlite")
    journal.append(_record("a"))
    got = journal.get("a")
    assert got == _record("a")
    assert got is not None and got.calls[0].completion_logprobs == (-0.5, -0.25)
    assert journal.get("missing") is None


def test_seq_orders_records_and_filters_by_status(tmp_path: Path) -> None:
    journal = Journal(tmp_path / "j.sqlite")
    seqs = [
        journal.append(_record(f"e{i}", EpisodeStatus.ENDED if i % 2 == 0 else EpisodeStatus.RECLAIMED))
        for i in range(4)
    ]
    assert seqs == sorted(seqs) and len(set(seqs)) == 4
    ended = [r.episode_id for _, r in journal.read_from(0, status=EpisodeStatus.ENDED)]
    assert ended == ["e0", "e2"]
    assert [r.episode_id for _, r in journal.read_from(seqs[1])] == ["e2", "e3"]
    assert journal.counts() == {"ended": 2, "reclaimed": 2}


def test_an_episode_is_journaled_once(tmp_path: Path) -> None:
    journal = Journal(tmp_path / "j.sqlite")
    journal.append(_record("a"))
    with pytest.raises(sqlite3.IntegrityError):
        journal.append(_record("a"))


def test_append_survives_kill_9_of_the_writer(tmp_path: Path) -> None:
    path = tmp_path / "j.sqlite"
    script = (
        "import os, signal, sys\n"
        f"sys.path.insert(0, {str(Path(__file__).parents[2])!r})\n"
        "from tests.core.test_journal import _record\n"
        "from agentjet.core.episodes.journal import Journal\n"
        f"Journal(__import__('pathlib').Path({str(path)!r})).append(_record('durable'))\n"
        "os.kill(os.getpid(), signal.SIGKILL)\n"
    )
    proc = subprocess.run([sys.executable, "-c", script], check=False)
    assert proc.returncode == -9
    assert Journal(path).get("durable") == _record("durable")
