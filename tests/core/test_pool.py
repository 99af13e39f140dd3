"""The training pool: ended train episodes wait by journal seq, and a consumed seq is never pooled again."""

from __future__ import annotations

from agentjet.core.training.pool import EpisodePool
from agentjet.core.types import EpisodeKind, EpisodeRecord, EpisodeStatus


def _record(episode_id: str, task_id: str = "t") -> EpisodeRecord:
    return EpisodeRecord(
        episode_id=episode_id,
        task_id=task_id,
        kind=EpisodeKind.TRAIN,
        agent=None,
        status=EpisodeStatus.ENDED,
        reward=1.0,
        metadata={},
        created_at=0.0,
        closed_at=1.0,
        policy_version_at_begin=0,
        calls=(),
    )


def test_episodes_come_out_oldest_first_and_a_consumed_seq_never_comes_back() -> None:
    pool = EpisodePool()
    for seq in (5, 2, 9):
        pool.add(seq, _record(f"ep{seq}"))
    assert [seq for seq, _ in pool.oldest_first()] == [2, 5, 9] and len(pool) == 3
    pool.consume([2, 9])
    assert [seq for seq, _ in pool.oldest_first()] == [5] and 2 not in pool and pool.is_consumed(9)
    assert pool.trained_through_seq == 9 and pool.consumed == {2, 9}
    pool.add(2, _record("ep2"))  # a replayed end of a trained episode
    assert 2 not in pool and len(pool) == 1


def test_dropped_seqs_leave_the_pool_unconsumed() -> None:
    pool = EpisodePool()
    pool.add(1, _record("a"))
    pool.add(2, _record("b"))
    pool.drop([1])
    assert list(pool.records) == [2] and not pool.is_consumed(1) and pool.trained_through_seq == 0


def test_a_restore_takes_the_checkpoints_consumed_seqs() -> None:
    pool = EpisodePool()
    pool.restore([3, 7, 4])
    assert pool.trained_through_seq == 7 and pool.consumed == {3, 4, 7}
    for seq in (3, 8):
        pool.add(seq, _record(f"ep{seq}"))
    assert [seq for seq, _ in pool.oldest_first()] == [8]
    pool.consume([8])
    assert pool.trained_through_seq == 8
