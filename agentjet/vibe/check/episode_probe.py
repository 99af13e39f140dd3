"""Plays a few episodes of a workspace's client inside a sandbox and reports each one as a JSON line.

Staged into the sandbox's work dir beside the workspace files and run there as `python3 _vibe_probe.py
--server http://127.0.0.1:PORT --episodes K` (the bridge adds the server token on the host). Every
server name the family uses goes to that URL; a `--server NAME=URL` sends one name elsewhere (the red
team plays a side of a game against another server), `--params JSON` overrides the client's
make_task parameters, and `--discard` aborts each episode once scored (validation's real episodes,
played on the run's own server, stay out of its eval metrics). Up to `--concurrency` episodes play at
once on threads, as the training client plays them (a client that breaks when two episodes share its
process breaks here, not in training), each line printed as its episode ends. Unlike `agentjet client
run`, which reports means, it prints one line per episode (`VIBE-EPISODE {...}`: rewards, the start of
the reply, the error and its traceback), so a failed validation can show a repair prompt exactly which
episode broke and how. Episodes are begun as `kind="eval"` (never trained) and ended with their reward,
or aborted when the client raised or gave no finite reward. Standalone on purpose: it imports only the
client-side agentjet (the core's SDK and the task registry), never the vibe package.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
import traceback
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed
from typing import Any

from agentjet.core import AgentJetError, Episode, SwarmClient
from agentjet.tasks.base import Endpoint, Outcome, TaskFamily, TaskItem
from agentjet.tasks.registry import load_family

__all__ = ["EPISODE_MARK", "LOAD_ERROR_MARK", "main"]

EPISODE_MARK, LOAD_ERROR_MARK = "VIBE-EPISODE ", "VIBE-LOAD-ERROR "
_TRACEBACK_LINES, _REPLY_CHARS = 12, 300


def _emit(mark: str, record: Mapping[str, Any]) -> None:
    sys.stdout.write(mark + json.dumps(record, default=str) + "\n")
    sys.stdout.flush()


def _reward_value(value: object) -> float | str:
    """A finite number stays a number; anything else is reported as its repr (JSON has no NaN)."""
    if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
        return float(value)
    return repr(value)


def _reply_of(outcome: Outcome) -> str:
    """What the policy said (`reply`/`final_reply`), or for a game its result and last log lines."""
    meta = outcome.metadata
    reply = meta.get("reply") or meta.get("final_reply")
    if not reply and isinstance(meta.get("log"), list):
        reply = f"winner: {meta.get('winner')}; " + " | ".join(str(line) for line in meta["log"][-3:])
    return str(reply or json.dumps(dict(meta), default=str))[:_REPLY_CHARS]


def play(
    family: TaskFamily, clients: Mapping[str, SwarmClient], item: TaskItem, *, discard: bool = False
) -> dict[str, Any]:
    """One episode: begin on every server the family names (each on its client), run, end (or abort); its record.

    With `discard` a scored episode is aborted rather than ended: the server keeps no reward of it."""
    started = time.monotonic()
    record: dict[str, Any] = {"task_id": item.task_id, "ok": False, "rewards": {}, "reply": "", "error": ""}
    episodes: dict[str, Episode] = {}
    try:
        for server in family.servers:
            episodes[server] = clients[server].begin_episode(item.task_id, kind="eval", agent=family.name)
        endpoints = {server: Endpoint(ep.base_url, ep.api_key) for server, ep in episodes.items()}
        outcome = family.run(item, endpoints)
        if not isinstance(outcome, Outcome):
            raise TypeError(f"run() must return an Outcome, got {type(outcome).__name__}")
        record["reply"] = _reply_of(outcome)
        record["rewards"] = {name: _reward_value(value) for name, value in outcome.rewards.items()}
        if set(outcome.rewards) != set(family.servers):
            raise ValueError(f"Outcome rewards name {sorted(outcome.rewards)}, the servers are {list(family.servers)}")
        bad = {name: value for name, value in record["rewards"].items() if isinstance(value, str)}
        if bad:
            raise ValueError(f"rewards must be finite numbers, got {bad}")
        for server, episode in episodes.items():
            if discard:
                episode.abort()
            else:
                episode.end(float(outcome.rewards[server]), {"reply": record["reply"]})
        record["ok"] = True
    except Exception as exc:  # the client is generated code: any failure is what the report is for
        record["error"] = f"{type(exc).__name__}: {exc}"[:2000]
        record["traceback"] = "".join(traceback.format_exc().splitlines(keepends=True)[-_TRACEBACK_LINES:])
        for episode in episodes.values():
            try:
                if not episode.is_closed:
                    episode.abort()
            except AgentJetError:
                pass  # the server reclaims it; the error above is what matters
    record["seconds"] = round(time.monotonic() - started, 3)
    return record


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python3 _vibe_probe.py")
    parser.add_argument("--client", default="client.py")
    parser.add_argument("--server", action="append", required=True, help="URL for every name; NAME=URL for one")
    parser.add_argument("--split", choices=("train", "eval"), default="eval")
    parser.add_argument("--params", default="{}", help="JSON object of make_task(**params) overrides")
    parser.add_argument("--episodes", type=int, default=4)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--concurrency", type=int, default=4, help="episodes in flight at once (>= 1)")
    parser.add_argument(
        "--discard", action="store_true", help="abort each scored episode: the server's eval metrics count none"
    )
    args = parser.parse_args(argv)
    if args.concurrency < 1:
        parser.error(f"--concurrency must be at least 1, got {args.concurrency}")
    try:
        family = load_family(args.client, json.loads(args.params))
        items = family.items(args.split, count=args.episodes, seed=args.seed)
    except Exception as exc:  # a client that does not load or read its data: report, do not crash
        _emit(LOAD_ERROR_MARK, {"error": f"{type(exc).__name__}: {exc}"[:2000], "traceback": traceback.format_exc()})
        return 2
    default = next((s for s in args.server if "=" not in s.split("://")[0]), None)
    named = dict(s.split("=", 1) for s in args.server if "=" in s.split("://")[0])
    urls = {name: named.get(name, default) for name in family.servers}
    missing = [name for name, url in urls.items() if url is None]
    if missing:
        parser.error(f"no --server for {missing}: give a URL for every name, or NAME=URL each")
    clients = {url: SwarmClient(url) for url in set(urls.values()) if url is not None}
    by_name = {name: clients[str(url)] for name, url in urls.items()}
    try:
        with ThreadPoolExecutor(max_workers=args.concurrency) as pool:
            futures = [pool.submit(play, family, by_name, item, discard=args.discard) for item in items]
            for done in as_completed(futures):
                _emit(EPISODE_MARK, done.result())  # in the order they end: a timeout keeps the finished ones
    finally:
        for client in clients.values():
            client.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
