"""Hot-swap a vibe run's client: a new client file takes over while the server keeps running and its step count.

`hot_swap` returns the latency from the edit of the file to the first episode the new client began
on the server (the episode's `created_at`, read back through `GET /swarm/episodes/{id}`).
"""

from __future__ import annotations

import logging
import threading
import time
from pathlib import Path

from agentjet.core import AgentJetError
from agentjet.vibe.errors import VibeError
from agentjet.vibe.run.client_process import ClientHandle, stop_client
from agentjet.vibe.run.episode_tap import TappedEpisode
from agentjet.vibe.run.launch import TrainingRun, spawn_next_standby, start_next_client

__all__ = ["hot_swap"]

log = logging.getLogger(__name__)


def hot_swap(
    run: TrainingRun, new_client_path: Path, *, edited_at: float | None = None, timeout_s: float = 300.0
) -> float:
    """Replace the client with `new_client_path`; the server is untouched. Returns seconds from the
    edit (`edited_at`, default the file's mtime) to the new client's first episode begun on the server.

    The old process is stopped while the new one starts (its interpreter and sandbox take the
    longest), so the swap costs the slower of the two, not their sum."""
    edited = edited_at if edited_at is not None else new_client_path.stat().st_mtime
    old = run.client
    stopping = threading.Thread(target=stop_client, args=(old,), name="vibe-stop-old-client")
    stopping.start()
    started = time.time()
    handle = start_next_client(run, new_client_path, spawn_next=False)  # nothing else competes for the CPU now
    try:
        first = _first_episode(handle, timeout_s)
    finally:
        stopping.join()
        spawn_next_standby(run)
    begun = first.begun_at
    try:
        with run.swarm() as swarm:
            begun = float(swarm.get_episode(first.episode_id)["created_at"])
    except (AgentJetError, KeyError, TypeError, ValueError) as exc:  # fall back to the time the tap saw it
        log.warning("could not read episode %s back: %s", first.episode_id, exc)
    latency = max(0.0, begun - edited)
    run.hot_swaps.append(
        {
            "from_generation": old.generation,
            "generation": handle.generation,
            "client": str(new_client_path),
            "latency_s": round(latency, 3),
            "process_to_episode_s": round(begun - started, 3),
            "first_episode": first.episode_id,
        }
    )
    run.progress(f"hot-swapped the client (generation {handle.generation}) in {latency:.2f} s; server not restarted")
    return latency


def _first_episode(handle: ClientHandle, timeout_s: float) -> TappedEpisode:
    deadline = time.monotonic() + timeout_s
    while True:
        first = handle.tap.wait_first(0.05)
        if first is not None:
            return first
        if handle.exit_code is not None:
            raise VibeError(
                f"the new client exited ({handle.exit_code}) before its first episode:\n{handle.log_tail()}"
            )
        if time.monotonic() > deadline:
            raise VibeError(f"the new client began no episode within {timeout_s:.0f} s:\n{handle.log_tail()}")
