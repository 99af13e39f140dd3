"""Client tracking for C4/C5: who is active, who asked for an update, what a trained batch spends."""

from __future__ import annotations

from agentjet.core.engine import Engine
from agentjet.core.training.clients import ClientTracker
from agentjet.core.types import EpisodeKind
from tests.core.factories import Clock, RecordingTraining


# ---- the tracker (pure: time is an argument) --------------------------------------------------
def test_a_client_is_active_until_idle_past_the_timeout_unless_it_holds_an_episode() -> None:
    tracker = ClientTracker(idle_timeout_s=10.0)
    tracker.seen("a", 0.0)
    tracker.seen("b", 5.0)
    assert tracker.active(10.0, holding=frozenset()) == {"a", "b"}  # exactly at the timeout: still active
    assert tracker.active(12.0, holding=frozenset({"a"})) == {"a", "b"}  # a holds an open episode
    assert tracker.active(15.5, holding=frozenset()) == frozenset()
    assert tracker.active(15.5, holding=frozenset({"c"})) == {"c"}  # an open episode alone makes it active


def test_requests_are_one_per_client_withdrawable_and_forgotten_with_the_client() -> None:
    tracker = ClientTracker(idle_timeout_s=10.0)
    tracker.set_ready("a", True, 0.0)
    tracker.set_ready("a", True, 1.0)  # asking twice is still one request
    tracker.set_ready("b", True, 2.0)
    tracker.set_ready("b", False, 3.0)
    assert set(tracker.requests()) == {"a"}
    assert tracker.active(3.0, frozenset()) == {"a", "b"}  # withdrawing still counts as being seen
    assert tracker.forget_idle(11.5, holding=frozenset()) == {"a"}
    assert tracker.requests() == {}
    tracker.set_ready("a", True, 12.0)  # back later: a fresh request, not the stale one
    assert set(tracker.requests()) == {"a"}


def test_consume_spends_only_the_answered_requests() -> None:
    tracker = ClientTracker(idle_timeout_s=10.0)
    tracker.set_ready("a", True, 0.0)
    tracker.set_ready("b", True, 0.0)
    answered = tracker.requests()
    tracker.set_ready("b", False, 1.0)
    tracker.set_ready("b", True, 1.0)  # renewed after the batch was chosen: asks for the next one
    tracker.set_ready("c", True, 1.0)  # came in during the update
    tracker.consume(answered)
    assert set(tracker.requests()) == {"b", "c"}


# ---- the engine ---------------------------------------------------------------------------
async def test_begin_end_and_heartbeat_keep_a_client_active(engine: Engine, clock: Clock) -> None:
    episode, _ = engine.begin_episode("t", kind=EpisodeKind.TRAIN, agent=None, client_id="alice")
    engine.clients.heartbeat("bob")
    assert engine.clients.active() == {"alice", "bob"}
    clock.now += 30  # both idle past the timeout, but alice holds an open episode
    assert engine.clients.active() == {"alice"}
    await engine.end_episode(episode.episode_id, 1.0, {})  # ending is being seen
    assert engine.journal.get(episode.episode_id).client_id == "alice"  # type: ignore[union-attr]
    clock.now += 9
    assert engine.clients.active() == {"alice"} and engine.status()["active_clients"] == 1
    clock.now += 2
    assert engine.clients.active() == frozenset()


async def test_a_reclaimed_episode_does_not_count_as_its_client_being_seen(engine: Engine, clock: Clock) -> None:
    engine.begin_episode("t", kind=EpisodeKind.TRAIN, agent=None, client_id="ghost")
    clock.now += 11
    assert engine.clients.active() == {"ghost"}  # still holding its (idle) episode
    assert len(await engine.reclaim_idle_episodes()) == 1
    assert engine.clients.active() == frozenset()


async def test_requests_notify_and_the_janitor_notices_clients_leaving(engine: Engine, clock: Clock) -> None:
    training = RecordingTraining()
    engine.attach_training(training)
    view = engine.clients.request_update("alice", ready=True)
    engine.clients.heartbeat("bob")
    assert view == {
        "client_id": "alice",
        "active": True,
        "ready": True,
        "active_clients": ["alice"],
        "requested_clients": ["alice"],
    }
    assert training.client_changes == 1
    assert (
        engine.clients.request_update("bob", ready=False)["requested_clients"] == ["alice"]
        and training.client_changes == 2
    )
    await engine.reclaim_idle_episodes()  # nobody left yet: no wake-up
    assert training.client_changes == 2
    clock.now += 11
    await engine.reclaim_idle_episodes()  # both idle: the sweep forgets them and says so
    assert training.client_changes == 3 and engine.clients.requests() == {} and engine.clients.active() == frozenset()
    engine.clients.heartbeat("carol")
    clock.now += 11
    assert engine.status()["active_clients"] == 0  # a status read that notices carol left says so too
    assert training.client_changes == 4


async def test_consumed_requests_are_spent(engine: Engine) -> None:
    engine.clients.request_update("alice", ready=True)
    answered = engine.clients.requests()
    engine.clients.request_update("bob", ready=True)
    engine.clients.consume(answered)
    assert set(engine.clients.requests()) == {"bob"}
    assert engine.clients.view("alice")["ready"] is False and engine.clients.view("alice")["active"] is True
