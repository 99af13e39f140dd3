"""`agentjet bench load`: do updates still happen while many clients keep the server busy, and what do calls wait?

N clients (asyncio tasks over real HTTP) loop for `seconds`: begin a train episode of one of
`tasks` task ids, make `calls` chat calls of up to `max_tokens` (a multi-turn agent), end it with
a random reward. Nobody ever pauses, so at any
moment dozens of calls are in flight: a drain that waits for zero in-flight calls while still
admitting new ones never ends (it timed out after 30 s, then trained with calls in flight).
Reported: updates per minute (server steps over the window), chat latency p50/p95/p99/max,
episodes ended, errors, and the server's `straddled_calls` (calls that saw a hot-load mid-way).
Against `--url` (e.g. an older version's server) or a tiny server started here as a subprocess.
"""

from __future__ import annotations

import asyncio
import random
import statistics
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import yaml

from agentjet.bench.output import print_result

__all__ = ["LoadResult", "Workload", "main", "run_load"]

LOAD_CONFIG: dict[str, Any] = {
    "grpo": {"group_size": 4},
    "collect": {"strategy": "tasks", "tasks": 4},  # 16 episodes per update
    "optim": {"lr": 1e-4},
}


@dataclass
class LoadResult:
    latencies_s: list[float] = field(default_factory=list)
    ended: int = 0
    errors: dict[str, int] = field(default_factory=dict)

    def error(self, what: str) -> None:
        self.errors[what] = self.errors.get(what, 0) + 1


def _percentile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


@dataclass(frozen=True)
class Workload:
    clients: int = 64
    calls: int = 2  # chat calls per episode, each extending the last (a multi-turn agent)
    max_tokens: int = 32
    tasks: int = 16


async def _client(
    http: httpx.AsyncClient, headers: dict[str, str], work: Workload, deadline: float, out: LoadResult
) -> None:
    rng = random.Random()
    while time.monotonic() < deadline:
        try:
            begun = await http.post(
                "/swarm/episodes", json={"task_id": f"t{rng.randrange(work.tasks)}"}, headers=headers
            )
            if begun.status_code != 200:
                out.error(f"begin {begun.status_code}")
                await asyncio.sleep(0.1)
                continue
            episode = begun.json()
            await _calls(http, episode["api_key"], work, out)
            end = await http.post(
                f"/swarm/episodes/{episode['episode_id']}/end", json={"reward": rng.random()}, headers=headers
            )
            if end.status_code == 200:
                out.ended += 1
            else:
                out.error(f"end {end.status_code}")
        except httpx.HTTPError as exc:
            out.error(type(exc).__name__)


async def _calls(http: httpx.AsyncClient, key: str, work: Workload, out: LoadResult) -> None:
    messages: list[dict[str, Any]] = [{"role": "user", "content": "Tell me a short story."}]
    for _ in range(work.calls):
        body = {"model": "policy", "messages": messages, "max_tokens": work.max_tokens}
        started = time.monotonic()
        reply = await http.post("/v1/chat/completions", json=body, headers={"Authorization": f"Bearer {key}"})
        if reply.status_code != 200:
            out.error(f"chat {reply.status_code}")
            return
        out.latencies_s.append(time.monotonic() - started)
        text = reply.json()["choices"][0]["message"]["content"] or ""
        messages += [{"role": "assistant", "content": text}, {"role": "user", "content": "Go on."}]


async def _status(http: httpx.AsyncClient, headers: dict[str, str]) -> dict[str, Any]:
    reply = await http.get("/swarm/status", headers=headers)
    reply.raise_for_status()
    body: dict[str, Any] = reply.json()
    return body


async def run_load(url: str, token: str, work: Workload, *, seconds: float) -> dict[str, Any]:
    """The figures of one load window against a rolling server at `url`."""
    headers = {"Authorization": f"Bearer {token}"}
    clients = work.clients
    limits = httpx.Limits(max_connections=clients * 2 + 8, max_keepalive_connections=clients * 2 + 8)
    async with httpx.AsyncClient(base_url=url, timeout=httpx.Timeout(300.0), limits=limits) as http:
        before = await _status(http, headers)
        started = time.monotonic()
        out = LoadResult()
        deadline = started + seconds
        await asyncio.gather(*(_client(http, headers, work, deadline, out) for _ in range(clients)))
        elapsed = time.monotonic() - started
        after = await _status(http, headers)
    steps = int(after["step"]) - int(before["step"])
    return {
        "clients": clients,
        "calls_per_episode": work.calls,
        "max_tokens": work.max_tokens,
        "seconds": round(elapsed, 1),
        "updates": steps,
        "updates_per_min": round(steps / elapsed * 60, 2),
        "chat_calls": len(out.latencies_s),
        "chat_p50_s": _round(_percentile(out.latencies_s, 0.50)),
        "chat_p95_s": _round(_percentile(out.latencies_s, 0.95)),
        "chat_p99_s": _round(_percentile(out.latencies_s, 0.99)),
        "chat_max_s": _round(max(out.latencies_s, default=None)),
        "chat_mean_s": _round(statistics.fmean(out.latencies_s) if out.latencies_s else None),
        "episodes_ended": out.ended,
        "errors": out.errors,
        "straddled_calls": after.get("straddled_calls"),
        "pooled_at_end": (after.get("pool") or {}).get("pooled_episodes"),
    }


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 3)


def main(*, work: Workload, seconds: float, model: str, url: str | None, token: str | None, as_json: bool) -> None:
    """Run against `url`, or start a `model` server (subprocess, fresh state dir, LOAD_CONFIG) for the window."""
    from agentjet.vibe.run.swarm_server import start_server, stop_server

    if url is not None:
        if not token:
            raise ValueError("--url needs the server's admin token (AGENTJET_TOKEN or --token-file)")
        result = asyncio.run(run_load(url, token, work, seconds=seconds))
        print_result({"url": url, **result}, as_json=as_json)
        return
    with tempfile.TemporaryDirectory(prefix="agentjet-bench-load-") as scratch:
        config = Path(scratch) / "train.yaml"
        config.write_text(yaml.safe_dump(LOAD_CONFIG))
        server = start_server(Path(scratch) / "state", Path(scratch) / "server.log", model=model, config_path=config)
        try:
            result = asyncio.run(run_load(server.url, server.token, work, seconds=seconds))
        finally:
            stop_server(server)
    print_result({"model": model, **result}, as_json=as_json)
