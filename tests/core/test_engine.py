"""Engine: state machine, episode lifecycle, key checks, reclaiming, journaling before `end` returns."""

from __future__ import annotations

import pytest

from agentjet.core.engine import Engine
from agentjet.core.errors import AuthError, EngineNotReady, EpisodeClosed, EpisodeNotFound
from agentjet.core.types import CallRecord, EngineState, EpisodeKind, EpisodeStatus
from tests.core.factories import Clock


def _call(episode_id: str, index: int) -> CallRecord:
    return CallRecord(
        episode_id,
        index,
        0,
        None,
        [],
        None,
        {},
        "p",
        (1, 2),
        (3,),
        (-0.1,),
        "x",
        None,
        "stop",
        0,
        "none",
        0.0,
        None,
        0.0,
    )


async def test_state_machine(engine: Engine) -> None:
    assert engine.state is EngineState.ROLLING
    assert engine.stop() is EngineState.OFFLINE
    with pytest.raises(EngineNotReady) as info:
        engine.begin_episode("t", kind=EpisodeKind.TRAIN, agent=None, client_id=None)
    assert info.value.state == "offline"
    assert await engine.start() is EngineState.ROLLING


async def test_episode_lifecycle_journals_before_returning(engine: Engine) -> None:
    episode, key = engine.begin_episode("t", kind=EpisodeKind.TRAIN, agent="wolf", client_id="c1")
    assert engine.authorize_call(key) is episode
    index = engine.call_started(episode)
    engine.call_finished(episode, [_call(episode.episode_id, index)])
    record = await engine.end_episode(episode.episode_id, 0.5, {"note": 1})
    assert record.status is EpisodeStatus.ENDED and len(record.calls) == 1
    assert engine.journal.get(episode.episode_id) == record  # already durable when end returned
    with pytest.raises(AuthError, match="was ended"):
        engine.authorize_call(key)
    with pytest.raises(EpisodeClosed):
        await engine.end_episode(episode.episode_id, 1.0, {})
    with pytest.raises(EpisodeNotFound):
        await engine.abort_episode("ep_nope")


async def test_idle_episodes_are_reclaimed_but_not_while_a_call_runs(engine: Engine, clock: Clock) -> None:
    busy, _ = engine.begin_episode("t", kind=EpisodeKind.TRAIN, agent=None, client_id=None)
    idle, idle_key = engine.begin_episode("t", kind=EpisodeKind.TRAIN, agent=None, client_id=None)
    engine.call_started(busy)
    clock.now += 11
    assert await engine.reclaim_idle_episodes() == [idle.episode_id]
    with pytest.raises(AuthError, match="reclaimed"):
        engine.authorize_call(idle_key)
    with pytest.raises(EpisodeClosed) as info:
        await engine.end_episode(idle.episode_id, 1.0, {})
    assert info.value.status == "episode_reclaimed"
    assert engine.journal.get(idle.episode_id).status is EpisodeStatus.RECLAIMED  # type: ignore[union-attr]
    engine.call_finished(busy, [])
    clock.now += 5
    assert await engine.reclaim_idle_episodes() == []  # the finished call refreshed it


async def test_calls_finishing_after_close_are_dropped(engine: Engine) -> None:
    episode, _ = engine.begin_episode("t", kind=EpisodeKind.TRAIN, agent=None, client_id=None)
    index = engine.call_started(episode)
    await engine.abort_episode(episode.episode_id)
    engine.call_finished(episode, [_call(episode.episode_id, index)])
    record = engine.journal.get(episode.episode_id)
    assert record is not None and record.status is EpisodeStatus.ABORTED and record.calls == ()


async def test_status_counts(engine: Engine, clock: Clock) -> None:
    a, _ = engine.begin_episode("t1", kind=EpisodeKind.TRAIN, agent=None, client_id="c1")
    b, _ = engine.begin_episode("t2", kind=EpisodeKind.EVAL, agent=None, client_id="c2")
    engine.call_started(a)
    engine.call_finished(a, [_call(a.episode_id, 0)])
    await engine.end_episode(a.episode_id, 1.0, {})
    status = engine.status()
    assert status["episodes"] == {"in_flight": 1, "finished": 1, "aborted": 0, "reclaimed": 0}
    assert status["active_clients"] == 2 and status["calls_total"] == 1 and status["tokens_total"] == 1
    clock.now += 61
    assert engine.status()["active_clients"] == 1  # c2 still holds an open episode
    assert b.episode_id in (await engine.get_episode(b.episode_id))["episode_id"]
