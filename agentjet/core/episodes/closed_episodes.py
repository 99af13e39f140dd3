"""Closing an open episode into the journal, and what the engine remembers of the episodes it closed.

A close writes the episode's `EpisodeRecord` to the journal before anyone hears back. The ids
of recently closed episodes are kept with their status, so a stale key or a second close gets
a reason ("was ended", "was reclaimed") without a journal lookup; the counts by status span the
whole journal. Event-loop only (the journal write runs in a thread).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any, NoReturn

from agentjet.core.episodes.journal import Journal
from agentjet.core.episodes.open_episode import OpenEpisode
from agentjet.core.errors import EpisodeClosed, EpisodeNotFound
from agentjet.core.types import EpisodeRecord, EpisodeStatus

__all__ = ["ClosedEpisodes"]

log = logging.getLogger(__name__)

_CLOSED_MEMORY = 100_000  # closed ids remembered to explain a 401 without a journal lookup


class ClosedEpisodes:
    """The closing side of one engine's episodes: journal writes, recent closed ids, counts by status."""

    def __init__(self, journal: Journal, clock: Callable[[], float]) -> None:
        self._journal = journal
        self._clock = clock
        self._status: dict[str, EpisodeStatus] = {}
        journaled = journal.counts()
        self._counts = {
            s: journaled.get(str(s), 0) for s in (EpisodeStatus.ENDED, EpisodeStatus.ABORTED, EpisodeStatus.RECLAIMED)
        }

    def status_of(self, episode_id: str) -> EpisodeStatus | None:
        """How a recently closed episode was closed; None when it is not remembered (or was never closed)."""
        return self._status.get(episode_id)

    def refuse(self, episode_id: str) -> NoReturn:
        """Why `episode_id`, not open, cannot be closed: EpisodeClosed if it was, else EpisodeNotFound."""
        status = self._status.get(episode_id)
        if status is not None:
            code = "episode_reclaimed" if status is EpisodeStatus.RECLAIMED else "episode_closed"
            raise EpisodeClosed(f"episode {episode_id} was already {status}", status=code)
        raise EpisodeNotFound(f"no open episode {episode_id}")

    async def close(
        self, episode: OpenEpisode, status: EpisodeStatus, reward: float | None, metadata: dict[str, Any]
    ) -> tuple[EpisodeRecord, int]:
        """Journal the episode's record, durable before we answer; (record, journal seq).

        It counts as closed from the call on (a second close fails fast); when the write fails it
        is forgotten again and the error raised, so the caller can reopen it for its client to retry.
        """
        episode_id = episode.episode_id
        self._status[episode_id] = status
        if len(self._status) > _CLOSED_MEMORY:
            self._status.pop(next(iter(self._status)))
        record = EpisodeRecord(
            episode_id=episode_id,
            task_id=episode.task_id,
            kind=episode.kind,
            agent=episode.agent,
            status=status,
            reward=reward,
            metadata=metadata,
            created_at=episode.created_at,
            closed_at=self._clock(),
            policy_version_at_begin=episode.policy_version_at_begin,
            calls=tuple(sorted(episode.calls, key=lambda c: (c.call_index, c.choice_index))),
            client_id=episode.client_id,
            owner=episode.owner,
            base_model=episode.base_model,
        )
        try:
            seq = await asyncio.to_thread(self._journal.append, record)
        except BaseException:
            log.error("journal write failed id=%s; the episode stays open so its client can retry", episode_id)
            self._status.pop(episode_id, None)
            raise
        self._counts[status] += 1
        return record, seq

    def counts(self) -> dict[str, int]:
        """Closed episodes by status since the journal began: ended, aborted, reclaimed."""
        return {str(status): count for status, count in self._counts.items()}
