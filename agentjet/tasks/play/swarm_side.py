"""The runner's swarm side: which server episodes are open, and on-policy update rounds.

`OpenEpisodes` is shared by the worker threads (which begin and close episodes) and the main
thread (which aborts them all on Ctrl-C), so it is the one place with a lock. Its guarantee:
once `abort_all` has returned, every episode begun through it is ended or aborted, including
begins that were in flight when it was called.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable, Mapping

from agentjet.core import AgentJetError, Episode, SwarmClient

__all__ = ["OpenEpisodes", "round_steps", "wait_for_update"]

log = logging.getLogger(__name__)

_HEARTBEAT_S = 10.0
# A round's update takes seconds to minutes: polls begin 0.1 s apart and slow to 1 s, so a waiting client
# costs the server (whose CPU the update needs) ~1 request a second, not 10.
_WAIT_POLL_S, _WAIT_POLL_MAX_S = 0.1, 1.0


class OpenEpisodes:
    """Thread-safe ledger of the server episodes a runner holds open."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._open: dict[str, Episode] = {}
        self._beginning = 0
        self._aborting = 0  # abort_all calls still sending their aborts
        self._idle = threading.Condition(self._lock)  # notified when no begin or abort_all is in flight
        self.stopping = False
        self.aborted_on_stop = 0  # episodes aborted because the run stopped (Ctrl-C, stop(), an error)

    def begin(
        self, clients: Mapping[str, SwarmClient], task_id: str, kind: str, agent: str, *, base_model: bool = False
    ) -> dict[str, Episode] | None:
        """Begin one episode per server (all or none: a failed begin aborts the others and raises);
        None once stopping. `base_model`: eval episodes played by the base weights."""
        with self._lock:
            if self.stopping:
                return None
            self._beginning += 1
        begun: dict[str, Episode] = {}
        try:
            for name, client in clients.items():
                is_eval = kind == "eval"
                begun[name] = client.begin_episode(
                    task_id, kind="eval" if is_eval else "train", agent=agent, base_model=base_model and is_eval
                )
            with self._lock:
                late = self.stopping
                if not late:
                    self._open.update({ep.episode_id: ep for ep in begun.values()})
            if late:  # stopping began while we were beginning: these never run
                self._count_stopped(_abort(begun.values()))
                return None
            return begun
        except BaseException:
            _abort(begun.values())
            raise
        finally:  # only now may abort_all return: every episode begun here is registered or aborted
            with self._lock:
                self._beginning -= 1
                self._idle.notify_all()

    def forget(self, episodes: Iterable[Episode]) -> None:
        with self._lock:
            for episode in episodes:
                self._open.pop(episode.episode_id, None)

    def abort(self, episodes: Iterable[Episode]) -> None:
        _abort(episodes)

    def open_count(self) -> int:
        with self._lock:
            return len(self._open)

    def abort_all(self, wait_begins_s: float = 0.0) -> int:
        """Stop beginning episodes, abort every open one, wait (up to `wait_begins_s`) for begins in
        flight (they abort their own) and for another thread's abort_all still sending (so a summary
        read after this counts every abort). Returns how many open episodes were aborted here."""
        with self._lock:
            self.stopping = True
            episodes = list(self._open.values())
            self._open.clear()
            self._aborting += 1
        aborted = 0
        try:
            aborted = _abort(episodes)
        finally:
            with self._lock:
                self.aborted_on_stop += aborted
                self._aborting -= 1
                self._idle.notify_all()
        with self._lock:
            if not self._idle.wait_for(lambda: self._beginning == 0 and self._aborting == 0, timeout=wait_begins_s):
                log.warning("%d episode begin(s) still in flight after %.0f s", self._beginning, wait_begins_s)
        return aborted

    def _count_stopped(self, count: int) -> None:
        with self._lock:
            self.aborted_on_stop += count


def _abort(episodes: Iterable[Episode]) -> int:
    """Abort each (idempotent: closed ones stay closed); a server that cannot be reached is logged."""
    count = 0
    for episode in episodes:
        if episode.is_closed:
            continue
        try:
            episode.abort()
            count += 1
        except AgentJetError as exc:
            log.warning("could not abort episode id=%s: %s", episode.episode_id, exc)
    return count


def round_steps(clients: Mapping[str, SwarmClient]) -> dict[str, int]:
    """Each server's step now: what a round's update must go past."""
    return {name: int(client.status()["step"]) for name, client in clients.items()}


def wait_for_update(
    clients: Mapping[str, SwarmClient],
    timeout_s: float,
    tick: Callable[[], object],
    since: Mapping[str, int] | None = None,
) -> None:
    """Agree to the next update on every server (`request_update`) and wait until each has trained
    it and rolls again; heartbeats keep this client active (and so counted by `all_clients`).

    `since`: each server's step when the round began. A server that trains as soon as the round's
    groups are complete (`tasks`) may have stepped already; waiting for a step past the one read
    now would then wait for an update that never comes."""
    before = dict(since) if since is not None else round_steps(clients)
    for client in clients.values():
        client.request_update()
    deadline = time.monotonic() + timeout_s
    last_beat = time.monotonic()
    waiting = dict(clients)
    pause = _WAIT_POLL_S
    while waiting:
        for name, client in list(waiting.items()):
            status = client.status()
            if int(status["step"]) > before[name] and status["state"] == "rolling":
                del waiting[name]
        if not waiting:
            break  # no pause after the last server has stepped
        if time.monotonic() > deadline:
            raise TimeoutError(f"no update within {timeout_s:.0f} s on {sorted(waiting)} (steps before: {before})")
        if time.monotonic() - last_beat > _HEARTBEAT_S:
            for client in waiting.values():
                client.heartbeat()
            last_beat = time.monotonic()
        tick()
        time.sleep(pause)
        pause = min(pause * 1.5, _WAIT_POLL_MAX_S)
