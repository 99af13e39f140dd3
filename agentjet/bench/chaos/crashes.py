"""kill -9 of servers and clients, a damaged journal, a full disk: nothing acknowledged is lost, nothing trained twice.

The invariants are read from the state dir alone after the faults: every episode whose `end`
returned is in the journal as ended; no journal seq appears in two metric lines; every ended
train episode is trained, pooled or quarantined, exactly one of them.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import httpx

from agentjet.bench.chaos.target import Target, kill9, launch, stop
from agentjet.core import AgentJetError, SwarmClient
from agentjet.core.episodes.journal import Journal
from agentjet.core.types import EpisodeKind, EpisodeStatus
from agentjet.vibe.errors import VibeError

__all__ = ["corrupt_journal", "disk_full", "kill9_client", "kill9_server"]

_CHAT = {"model": "tiny", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 4}


def _episodes_until(target: Target, stop_event: threading.Event, acked: list[str], rng: random.Random) -> None:
    """Groups of two train episodes, back to back, until told to stop or the server dies."""
    with SwarmClient(target.url, token=target.token, retries=1, timeout_s=30) as client:
        while not stop_event.is_set():
            task = f"t{rng.randrange(1000)}"
            for reward in (1.0, 0.0):
                try:
                    episode = client.begin_episode(task)
                    key = {"Authorization": f"Bearer {episode.api_key}"}
                    httpx.post(f"{target.url}/v1/chat/completions", json=_CHAT, headers=key, timeout=30)
                    episode.end(reward)
                except (AgentJetError, httpx.HTTPError):
                    return  # the server was killed under us
                acked.append(episode.episode_id)


def _audit(state: Path) -> dict[str, Any]:
    """The state dir's own account: ended train episodes, seqs per metric line, quarantine."""
    journal = Journal(state / "journal.sqlite")
    try:
        ended = {
            seq: r.episode_id
            for seq, r in journal.read_from(0, status=EpisodeStatus.ENDED)
            if r.kind is EpisodeKind.TRAIN
        }
        quarantined = set(journal.quarantined())
    finally:
        journal.close()
    lines = [json.loads(line) for line in (state / "metrics.jsonl").read_text().splitlines() if line.strip()]
    trained = Counter(seq for m in lines for seq in (*m["episode_seqs"], *m["skipped_seqs"]))
    return {"ended": ended, "trained": trained, "quarantined": quarantined, "steps": [m["step"] for m in lines]}


def kill9_server(scratch: Path, *, rounds: int = 3, seed: int = 0) -> dict[str, Any]:
    """`rounds` times: clients run groups, the server is killed -9 at a random moment, restarted on the same state."""
    rng = random.Random(seed)
    acked: list[str] = []
    kills: list[float] = []
    for _ in range(rounds):
        target = launch(scratch)
        stop_event = threading.Event()
        workers = [threading.Thread(target=_episodes_until, args=(target, stop_event, acked, rng)) for _ in range(4)]
        for worker in workers:
            worker.start()
        delay = rng.uniform(1.0, 4.0)
        time.sleep(delay)
        kill9(target)
        kills.append(round(delay, 2))
        stop_event.set()
        for worker in workers:
            worker.join(timeout=60)
    final = launch(scratch)  # restores, trains what complete groups remain, then idles
    status = _settled(final)
    stop(final)
    audit = _audit(scratch / "state")
    ended_ids = set(audit["ended"].values())
    lost = [episode_id for episode_id in acked if episode_id not in ended_ids]
    twice = [seq for seq, n in audit["trained"].items() if n > 1]
    pooled = int(status["pool"]["pooled_episodes"])
    unaccounted = len(audit["ended"]) - len(audit["trained"]) - len(audit["quarantined"]) - pooled
    ok = not lost and not twice and unaccounted == 0 and audit["steps"] == sorted(set(audit["steps"]))
    return {
        "ok": ok,
        "tried": f"{rounds} rounds of kill -9 of a training server under 4 clients, at random moments",
        "kill_after_s": kills,
        "acknowledged_episodes": len(acked),
        "lost": len(lost),
        "trained_twice": len(twice),
        "steps": len(audit["steps"]),
        "pooled_at_end": pooled,
        "unaccounted": unaccounted,
    }


def _settled(target: Target, timeout_s: float = 120.0) -> dict[str, Any]:
    """The status once the restored server has trained every complete group it holds."""
    deadline = time.monotonic() + timeout_s
    while True:
        status = target.status()
        if status["state"] == "rolling" and status["training"]["state"] == "ready":
            if status["pool"].get("complete_groups", 0) == 0 or time.monotonic() > deadline:
                return status
        time.sleep(0.2)


_DOOMED_CLIENT = """
import sys, time, httpx
from agentjet.core import SwarmClient
url, token = sys.argv[1], sys.argv[2]
with SwarmClient(url, token=token) as client:
    done = client.begin_episode("doomed")
    key = {"Authorization": f"Bearer {done.api_key}"}
    chat = {"model": "tiny", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 4}
    httpx.post(f"{url}/v1/chat/completions", json=chat, headers=key, timeout=30)
    done.end(1.0)
    left = client.begin_episode("doomed")
    httpx.post(f"{url}/v1/chat/completions", json=chat, headers={"Authorization": f"Bearer {left.api_key}"}, timeout=30)
    print(done.episode_id, left.episode_id, flush=True)
    time.sleep(600)
"""


def kill9_client(scratch: Path, *, rounds: int = 3) -> dict[str, Any]:
    """A client process is killed -9 with an episode open: its ended episode stays, the open one is reclaimed."""
    target = launch(scratch, extra_args=("--idle-timeout-s", "1.5"))
    results = []
    try:
        for _ in range(rounds):
            proc = subprocess.Popen(
                [sys.executable, "-c", _DOOMED_CLIENT, target.url, target.token], stdout=subprocess.PIPE, text=True
            )
            assert proc.stdout is not None
            done_id, left_id = proc.stdout.readline().split()
            proc.kill()
            proc.wait(timeout=30)
            deadline = time.monotonic() + 30
            while _status_of(target, left_id) == "open" and time.monotonic() < deadline:
                time.sleep(0.2)
            results.append((_status_of(target, done_id), _status_of(target, left_id)))
    finally:
        stop(target)
    journal = Journal(scratch / "state" / "journal.sqlite")
    try:
        reclaimed = {seq for seq, _ in journal.read_from(0, status=EpisodeStatus.RECLAIMED)}
    finally:
        journal.close()
    trained = set(_audit(scratch / "state")["trained"]) if (scratch / "state" / "metrics.jsonl").is_file() else set()
    leaked = len(trained & reclaimed)
    ok = all(r == ("ended", "reclaimed") for r in results) and len(reclaimed) == rounds and not leaked
    return {"ok": ok, "tried": f"{rounds} client processes killed -9 with an episode open",
            "statuses": results, "reclaimed": len(reclaimed), "reclaimed_trained": leaked}  # fmt: skip


def _status_of(target: Target, episode_id: str) -> str:
    reply = httpx.get(f"{target.url}/swarm/episodes/{episode_id}", headers=target.headers, timeout=30)
    status: str = reply.json().get("status", "?")
    return status


def corrupt_journal(scratch: Path) -> dict[str, Any]:
    """Damage the middle of a stopped server's journal: start must refuse, repair must salvage, start must work."""
    target = launch(scratch)
    for index in range(60):
        episode = target.begin(f"t{index // 2}")
        httpx.post(
            f"{target.url}/swarm/episodes/{episode['episode_id']}/end",
            json={"reward": index % 2},
            headers=target.headers,
        )
    stop(target)
    path = scratch / "state" / "journal.sqlite"
    data = bytearray(path.read_bytes())
    middle = len(data) // 2 // 4096 * 4096
    data[middle : middle + 4096] = random.Random(7).randbytes(4096)
    path.write_bytes(bytes(data))
    try:
        stop(launch(scratch))
        refused = None
    except VibeError as exc:
        refused = next((line for line in str(exc).splitlines() if "repair" in line), str(exc)[:300])
    repaired = subprocess.run(
        [sys.executable, "-m", "agentjet", "server", "repair", str(scratch / "state"), "--json"],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    report: dict[str, Any] = json.loads(repaired.stdout) if repaired.returncode == 0 else {}
    again = launch(scratch)
    finished = again.status()["episodes"]["finished"]
    stop(again)
    ok = refused is not None and int(report.get("salvaged") or 0) > 0 and finished == report.get("salvaged")
    repair = {k: report.get(k) for k in ("salvaged", "lost", "method")}
    return {"ok": ok, "tried": "4 KB of garbage in the middle of a 60-episode journal", "start_refused": refused,
            "repair": repair, "finished_after_repair": finished}  # fmt: skip


def disk_full(scratch: Path) -> dict[str, Any]:
    """A 4 MB tmpfs under the state dir, filled while an episode is open (root only)."""
    if os.geteuid() != 0:
        return {"ok": None, "tried": "a full disk", "skipped": "mounting a tmpfs needs root"}
    disk = scratch / "disk"
    disk.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(disk)], check=True)
    try:
        return _fill_and_end(launch(scratch, state_dir=disk / "state"), disk)
    finally:
        subprocess.run(["umount", "-l", str(disk)], check=False)


def _fill_and_end(target: Target, disk: Path) -> dict[str, Any]:
    try:
        with SwarmClient(target.url, token=target.token, retries=1) as client:
            episode = client.begin_episode("t")
            filler = disk / "filler"
            with contextlib.suppress(OSError), filler.open("wb") as handle:
                while True:
                    handle.write(b"\0" * 65536)
                    handle.flush()
            end = httpx.post(
                f"{target.url}/swarm/episodes/{episode.episode_id}/end", json={"reward": 1}, headers=target.headers
            )
            still_open = _status_of(target, episode.episode_id) == "open"
            filler.unlink()
            client.retries = 20
            ended = episode.end(1.0)["status"]
    finally:
        stop(target)
    code = end.json().get("error", {}).get("code")
    ok = end.status_code == 507 and code == "storage_full" and still_open and ended == "ended"
    return {"ok": ok, "tried": "end with the state dir's disk full, then again once space is back",
            "full_disk_status": end.status_code, "code": code, "episode_stayed_open": still_open,
            "after_space_returned": ended}  # fmt: skip
