"""Collection strategies C1-C5 over a pool of finished episodes."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from agentjet.core.config import CollectConfig
from agentjet.core.training.collect import AllClients, AnyClient, Episodes, PoolEpisode, Tasks, build_strategy

NONE: frozenset[str] = frozenset()


def _pool(spec: list[tuple[str, float]]) -> list[PoolEpisode]:
    return [PoolEpisode(i, f"e{i}", task, reward, f"c{i % 2}") for i, (task, reward) in enumerate(spec)]


def test_c1_takes_the_oldest_n() -> None:
    pool = _pool([("a", 1), ("b", 0), ("a", 0)])
    assert Episodes(4).select(pool, active=NONE, requested=NONE) is None
    batch = Episodes(2).select(list(reversed(pool)), active=NONE, requested=NONE)
    assert batch is not None and [e.seq for e in batch.episodes] == [0, 1]


def test_c2_needs_b_full_groups_and_leaves_the_rest() -> None:
    pool = _pool([("a", 1), ("b", 0), ("a", 0), ("c", 1), ("b", 1), ("a", 1)])
    assert Tasks(3, 2).select(pool, active=NONE, requested=NONE) is None  # c has one episode
    batch = Tasks(2, 2).select(pool, active=NONE, requested=NONE)
    assert batch is not None and [e.seq for e in batch.episodes] == [0, 2, 1, 4]  # a's third waits


def test_c3_skips_groups_without_signal() -> None:
    pool = _pool([("a", 1), ("a", 1), ("b", 0), ("b", 1)])
    assert Tasks(2, 2, informative=True).select(pool, active=NONE, requested=NONE) is None
    batch = Tasks(1, 2, informative=True).select(pool, active=NONE, requested=NONE)
    assert batch is not None
    assert [e.task_id for e in batch.episodes] == ["b", "b"] and [e.task_id for e in batch.skipped] == ["a", "a"]


def test_c4_and_c5_follow_the_clients() -> None:
    pool = _pool([("a", 1)])
    active = frozenset({"c0", "c1"})
    assert AnyClient().select(pool, active=active, requested=NONE) is None
    assert AnyClient().select(pool, active=active, requested=frozenset({"gone"})) is None  # not active
    assert AnyClient().select(pool, active=active, requested=frozenset({"c1"})) is not None
    assert AllClients().select(pool, active=active, requested=frozenset({"c1"})) is None
    assert AllClients().select(pool, active=active, requested=active) is not None
    assert AllClients().select([], active=active, requested=active) is None


def test_build_strategy_maps_every_name() -> None:
    for name in ("episodes", "tasks", "informative_tasks", "any_client", "all_clients"):
        assert build_strategy(CollectConfig(strategy=name), group_size=4) is not None  # type: ignore[arg-type]
    assert build_strategy(CollectConfig(strategy="tasks", tasks=3), group_size=4) == Tasks(3, 4)


@given(
    st.lists(st.tuples(st.sampled_from("abcd"), st.sampled_from([0.0, 1.0])), max_size=40),
    st.integers(1, 3),
    st.integers(2, 4),
    st.booleans(),
)
def test_a_batch_takes_each_episode_at_most_once_and_only_from_the_pool(
    spec: list[tuple[str, float]], tasks: int, group_size: int, informative: bool
) -> None:
    pool = _pool(spec)
    batch = Tasks(tasks, group_size, informative).select(pool, active=NONE, requested=NONE)
    if batch is None:
        return
    taken = [e.seq for e in (*batch.episodes, *batch.skipped)]
    assert len(taken) == len(set(taken)) and set(taken) <= {e.seq for e in pool}
    assert len(batch.episodes) == tasks * group_size
