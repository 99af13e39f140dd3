"""A damaged journal stops the start with a sentence; `repair` salvages every intact record, and says what was lost."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from agentjet.core.episodes.journal import Journal
from agentjet.core.episodes.journal_repair import repair_journal
from agentjet.core.errors import JournalCorrupted
from agentjet.core.types import EpisodeKind, EpisodeRecord, EpisodeStatus
from tests.core.factories import call_record

RECORDS = 400


def _record(index: int) -> EpisodeRecord:
    calls = (call_record(0, list(range(index % 50, index % 50 + 200)), [index % 1000, 7, 8]),)
    return EpisodeRecord(
        f"ep-{index:04d}", f"task-{index % 9}", EpisodeKind.TRAIN, None, EpisodeStatus.ENDED, float(index % 3),
        {"note": "x" * (index % 300)}, float(index), float(index) + 1, 0, calls,
    )  # fmt: skip


@pytest.fixture
def state(tmp_path: Path) -> Path:
    state = tmp_path / "state"
    journal = Journal(state / "journal.sqlite")
    for index in range(RECORDS):
        journal.append(_record(index))
    journal.quarantine([3, 4], "reward outside [-1e+06, 1e+06]", at=1.0)
    journal.close()  # checkpoints the WAL into the file
    return state


def _originals() -> dict[int, EpisodeRecord]:
    return {index + 1: _record(index) for index in range(RECORDS)}


def _damage_middle(path: Path) -> None:
    data = bytearray(path.read_bytes())
    middle = len(data) // 2 // 4096 * 4096
    data[middle : middle + 8192] = random.Random(0).randbytes(8192)  # two pages of garbage
    path.write_bytes(bytes(data))


def _truncate(path: Path) -> None:
    data = path.read_bytes()
    path.write_bytes(data[: int(len(data) * 0.6) // 4096 * 4096 + 100])


def _edit_inside_a_record(path: Path) -> None:
    data = bytearray(path.read_bytes())
    spot = data.find(b'"note":"xxxxxxxxxx')
    data[spot + 9 : spot + 11] = b"yy"  # valid JSON, same length: only the digest can tell
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("damage", [_damage_middle, _truncate, _edit_inside_a_record])
def test_repair_salvages_every_intact_record(state: Path, damage: object) -> None:
    path = state / "journal.sqlite"
    damage(path)  # type: ignore[operator]
    with pytest.raises(JournalCorrupted, match="agentjet server repair"):
        journal = Journal(path)
        try:
            journal.verify()
        finally:
            journal.close()
    report = repair_journal(state)
    assert report.method == "page scan" and report.damaged_copy is not None and report.damaged_copy.exists()
    assert report.highest_seq == RECORDS  # sqlite_sequence survived: the lost tail is counted too
    assert report.salvaged + report.lost == RECORDS
    assert report.salvaged >= RECORDS // 2 and report.lost > 0
    repaired = Journal(path)
    try:
        assert repaired.verify() == report.salvaged
        originals = _originals()
        salvaged = dict(repaired.read_from(0))
        assert all(record == originals[seq] for seq, record in salvaged.items())  # nothing altered survives
        assert set(salvaged).isdisjoint(report.lost_seqs)
        if damage is _edit_inside_a_record:
            assert report.lost == 1  # exactly the edited record
        new_seq = repaired.append(_record(RECORDS + 1))
        assert new_seq > max(report.highest_seq, *salvaged)  # a lost seq is never handed out again
    finally:
        repaired.close()
    assert "salvaged" in report.describe() and json.dumps(report.as_json())


def test_an_intact_journal_is_left_alone(state: Path) -> None:
    before = (state / "journal.sqlite").read_bytes()
    report = repair_journal(state)
    assert report.damaged_copy is None and report.salvaged == RECORDS and report.lost == 0
    assert (state / "journal.sqlite").read_bytes() == before
    assert "intact" in report.describe()


def test_the_quarantine_survives_a_repair(state: Path) -> None:
    _damage_middle(state / "journal.sqlite")
    report = repair_journal(state)
    journal = Journal(state / "journal.sqlite")
    try:
        assert report.quarantined == 2 and journal.quarantined() == {3: "reward outside [-1e+06, 1e+06]",
                                                                   4: "reward outside [-1e+06, 1e+06]"}  # fmt: skip
    finally:
        journal.close()
