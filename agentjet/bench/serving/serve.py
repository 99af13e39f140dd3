"""`agentjet bench serve`: what the swarm server costs per call, and how generation scales with episodes.

(a) Overhead. The swarm server on the zero-cost `EchoBackend` and a bare FastAPI app that
parses the same request model run in their own processes (`serve_process.py`); 1, 16 and 64
keep-alive clients (one episode each) post a 2-message chat. Our latency is then auth, rendering, tokenising,
tracking and shaping; the bare app's is what any FastAPI server pays. (b) Throughput, unless
quick: smollm2-135m on each `--backend` (transformers, vllm), generated tokens/s while 1, 8 and 16
episodes of two chat rounds are in flight at all times (the continuous-batching claim), and the
seconds a LoRA hot-load takes.

Keys of the returned dict, C in {1, 16, 64}: overhead_p50_ms_cC, overhead_p99_ms_cC (ours,
client side), bare_p50_ms_cC, bare_p99_ms_cC, bare_ratio_p50_cC (ours / bare), calls_per_s_cC and
bare_calls_per_s_cC, server_cpu_ms_per_call_cC and bare_cpu_ms_per_call_cC (server process CPU
time per timed call: the cost of a call free of queueing); unless quick, tokens_per_s_cK for
K in {1, 8, 16}, speedup_c8 and speedup_c16 (over c1), hot_load_s_p50/max (LoRA hot-load); plus
quick, requests_per_level, cpus and bench_wall_s. Client and servers share this machine's cores, so
figures from a busy or 2-core machine are upper bounds.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import httpx
import psutil

from agentjet.bench.output import print_result
from agentjet.bench.serving.serve_process import admin_headers, bench_server, best_device

__all__ = ["main", "overhead_samples", "run_serve_bench"]

Progress = Callable[[str], None]

_OVERHEAD_LEVELS = (1, 16, 64)
_THROUGHPUT_LEVELS = (1, 8, 16)
_CHAT: dict[str, Any] = {
    "model": "echo",
    "messages": [
        {"role": "system", "content": "You are a helpful assistant."},
        {"role": "user", "content": "What is the capital of France? Answer in one word."},
    ],
    "max_tokens": 16,
}


def _stderr(message: str) -> None:
    sys.stderr.write(f"[bench serve] {message}\n")
    sys.stderr.flush()


# ---- episodes -----------------------------------------------------------------------------------
async def _begin(client: httpx.AsyncClient, url: str, task_id: str) -> tuple[str, str]:
    reply = await client.post(f"{url}/swarm/episodes", json={"task_id": task_id}, headers=admin_headers())
    reply.raise_for_status()
    body = reply.json()
    return body["episode_id"], body["api_key"]


async def _end(client: httpx.AsyncClient, url: str, episode_id: str) -> None:
    reply = await client.post(f"{url}/swarm/episodes/{episode_id}/end", json={"reward": 0.0}, headers=admin_headers())
    reply.raise_for_status()


# ---- (a) overhead -------------------------------------------------------------------------------
@dataclass(frozen=True)
class LatencyLevel:
    concurrency: int
    latencies_s: list[float]
    wall_s: float
    server_cpu_s: float = 0.0  # CPU the server process used over the level (warm-up and episode calls included)

    def percentile_ms(self, q: float) -> float:
        ordered = sorted(self.latencies_s)
        return 1000.0 * ordered[min(len(ordered) - 1, int(q * len(ordered)))]

    @property
    def calls_per_s(self) -> float:
        return len(self.latencies_s) / self.wall_s


async def _latency_level(url: str, concurrency: int, total: int, *, with_episodes: bool) -> LatencyLevel:
    """`concurrency` clients, one episode and one keep-alive connection each, post the chat back to back.

    Each client has its own `httpx.AsyncClient`: one shared pool serialises 64 clients on its lock
    (p99 in seconds against a server that answers in milliseconds) and would measure httpx.
    Warm-up calls open the connections and are not timed.
    """
    per_client = max(2, total // concurrency)
    async with httpx.AsyncClient(timeout=60) as control:
        episodes = (
            [await _begin(control, url, f"bench-c{concurrency}") for _ in range(concurrency)]
            if with_episodes
            else [("", "bare-key")] * concurrency
        )
        clients = [httpx.AsyncClient(timeout=60, limits=httpx.Limits(max_connections=1)) for _ in episodes]
        try:
            await asyncio.gather(*(_timed_calls(c, url, key, 3) for c, (_, key) in zip(clients, episodes, strict=True)))
            started = time.perf_counter()
            timed = await asyncio.gather(
                *(_timed_calls(c, url, key, per_client) for c, (_, key) in zip(clients, episodes, strict=True))
            )
            wall_s = time.perf_counter() - started
        finally:
            await asyncio.gather(*(c.aclose() for c in clients))
        if with_episodes:
            await asyncio.gather(*(_end(control, url, episode_id) for episode_id, _ in episodes))
    return LatencyLevel(concurrency, [x for xs in timed for x in xs], wall_s)


async def _timed_calls(client: httpx.AsyncClient, url: str, key: str, calls: int) -> list[float]:
    latencies: list[float] = []
    headers = {"Authorization": f"Bearer {key}"}
    for _ in range(calls):
        started = time.perf_counter()
        reply = await client.post(f"{url}/v1/chat/completions", json=_CHAT, headers=headers)
        latencies.append(time.perf_counter() - started)
        if reply.status_code != 200:
            raise RuntimeError(f"bench call failed: {reply.status_code} {reply.text[:300]}")
    return latencies


def _overhead(state_root: Path, requests_per_level: int, progress: Progress) -> dict[str, float]:
    levels: dict[str, dict[int, LatencyLevel]] = {}
    for kind in ("echo", "bare"):
        progress(f"starting the {kind} server")
        with bench_server(kind, state_root / kind) as (url, pid):
            levels[kind] = {}
            server = psutil.Process(pid)
            for concurrency in _OVERHEAD_LEVELS:
                cpu_before = sum(server.cpu_times()[:2])
                level = asyncio.run(_latency_level(url, concurrency, requests_per_level, with_episodes=kind == "echo"))
                level = replace(level, server_cpu_s=sum(server.cpu_times()[:2]) - cpu_before)
                levels[kind][concurrency] = level
                progress(
                    f"{kind:4s} c={concurrency:<3d} p50={level.percentile_ms(0.5):7.2f} ms  "
                    f"p99={level.percentile_ms(0.99):7.2f} ms  {level.calls_per_s:8.1f} calls/s"
                )
    out: dict[str, float] = {}
    for c in _OVERHEAD_LEVELS:
        ours, bare = levels["echo"][c], levels["bare"][c]
        out[f"overhead_p50_ms_c{c}"] = round(ours.percentile_ms(0.5), 3)
        out[f"overhead_p99_ms_c{c}"] = round(ours.percentile_ms(0.99), 3)
        out[f"bare_p50_ms_c{c}"] = round(bare.percentile_ms(0.5), 3)
        out[f"bare_p99_ms_c{c}"] = round(bare.percentile_ms(0.99), 3)
        out[f"bare_ratio_p50_c{c}"] = round(ours.percentile_ms(0.5) / bare.percentile_ms(0.5), 3)
        out[f"calls_per_s_c{c}"] = round(ours.calls_per_s, 1)
        out[f"bare_calls_per_s_c{c}"] = round(bare.calls_per_s, 1)
        out[f"server_cpu_ms_per_call_c{c}"] = round(1000 * ours.server_cpu_s / len(ours.latencies_s), 3)
        out[f"bare_cpu_ms_per_call_c{c}"] = round(1000 * bare.server_cpu_s / len(bare.latencies_s), 3)
    return out


def overhead_samples(repeats: int, calls: int = 100, progress: Progress = _stderr) -> dict[str, list[float]]:
    """Per repeat, our server against the bare app at one client, measured back to back (`agentjet nightly`).

    Both servers start once; each repeat times `calls` calls on each. A ratio within one repeat
    cancels most of a noisy machine's drift: `latency_ratio` (our p50 / bare p50) and `cpu_ratio`
    (our server CPU per call / the bare app's).
    """
    samples: dict[str, list[float]] = {"latency_ratio": [], "cpu_ratio": []}
    with tempfile.TemporaryDirectory(prefix="agentjet-nightly-") as tmp:
        with (
            bench_server("echo", Path(tmp) / "echo") as (ours_url, ours_pid),
            bench_server("bare", Path(tmp) / "bare") as (bare_url, bare_pid),
        ):
            servers = {"echo": (ours_url, psutil.Process(ours_pid)), "bare": (bare_url, psutil.Process(bare_pid))}
            for repeat in range(repeats):
                latencies: dict[str, list[float]] = {"echo": [], "bare": []}
                cpu = {"echo": 0.0, "bare": 0.0}
                for _block in range(4):  # alternate short blocks: both sides see the same machine state
                    for kind, (url, server) in servers.items():
                        before = sum(server.cpu_times()[:2])
                        level = asyncio.run(_latency_level(url, 1, calls // 4, with_episodes=kind == "echo"))
                        cpu[kind] += sum(server.cpu_times()[:2]) - before
                        latencies[kind] += level.latencies_s
                ours, bare = statistics.median(latencies["echo"]), statistics.median(latencies["bare"])
                samples["latency_ratio"].append(round(ours / bare, 4))
                samples["cpu_ratio"].append(round(cpu["echo"] / max(cpu["bare"], 1e-6), 4))
                progress(
                    f"repeat {repeat + 1}/{repeats}: p50 {1000 * ours:.2f} vs {1000 * bare:.2f} ms, "
                    f"ratio {samples['latency_ratio'][-1]}"
                )
    return samples


# ---- (b) generation throughput ------------------------------------------------------------------
async def _episode_tokens(client: httpx.AsyncClient, url: str, index: int, rounds: int, max_tokens: int) -> int:
    """One episode of `rounds` chat turns; returns the completion tokens the server reported."""
    episode_id, key = await _begin(client, url, f"throughput-{index}")
    messages: list[dict[str, str]] = [{"role": "user", "content": f"Tell me a short story about robot number {index}."}]
    tokens = 0
    for _ in range(rounds):
        body = {"model": "m", "messages": messages, "max_tokens": max_tokens, "temperature": 1.0}
        reply = await client.post(f"{url}/v1/chat/completions", json=body, headers={"Authorization": f"Bearer {key}"})
        if reply.status_code != 200:
            raise RuntimeError(f"generation call failed: {reply.status_code} {reply.text[:300]}")
        data = reply.json()
        tokens += int(data["usage"]["completion_tokens"])
        messages += [
            {"role": "assistant", "content": data["choices"][0]["message"]["content"] or ""},
            {"role": "user", "content": "Go on."},
        ]
    await _end(client, url, episode_id)
    return tokens


async def _tokens_per_s(url: str, concurrency: int, duration_s: float, max_tokens: int, rounds: int) -> float:
    """Generated tokens/s with `concurrency` episodes in flight at all times for `duration_s`.

    Each client starts a new episode as soon as its last one ends, so the batch stays full; a
    fixed amount of work per client would instead end with stragglers running alone.
    """
    deadline = time.perf_counter() + duration_s

    async def client_loop(client: httpx.AsyncClient, index: int) -> int:
        tokens, episode = 0, 0
        while time.perf_counter() < deadline:
            tokens += await _episode_tokens(client, url, index * 1000 + episode, rounds, max_tokens)
            episode += 1
        return tokens

    async with httpx.AsyncClient(timeout=600, limits=httpx.Limits(max_connections=concurrency + 4)) as client:
        started = time.perf_counter()
        counts = await asyncio.gather(*(client_loop(client, i) for i in range(concurrency)))
        return sum(counts) / (time.perf_counter() - started)


def _throughput(
    state_root: Path,
    progress: Progress,
    *,
    backend: str = "transformers",
    vllm_python: Path | None = None,
    duration_s: float = 40.0,
    rounds: int = 2,
    max_tokens: int = 64,
) -> dict[str, float]:
    out: dict[str, float] = {}
    progress(f"starting the smollm2-135m server ({backend} backend); {duration_s:.0f} s per level")
    with bench_server(
        "model", state_root / f"model-{backend}", model="smollm2-135m", max_batch_size=max(_THROUGHPUT_LEVELS),
        backend=backend, vllm_python=vllm_python,
    ) as (url, _):  # fmt: skip
        asyncio.run(_episode_tokens_once(url))  # first forward passes are slow: keep them out
        for concurrency in _THROUGHPUT_LEVELS:
            rate = asyncio.run(_tokens_per_s(url, concurrency, duration_s, max_tokens, rounds))
            out[f"tokens_per_s_c{concurrency}"] = round(rate, 1)
            progress(f"{backend} c={concurrency:<3d} {rate:8.1f} generated tokens/s")
    out["speedup_c8"] = round(out["tokens_per_s_c8"] / out["tokens_per_s_c1"], 2)
    out["speedup_c16"] = round(out["tokens_per_s_c16"] / out["tokens_per_s_c1"], 2)
    out.update(_hot_load(state_root, backend, vllm_python, progress))
    return out


def _hot_load(state_root: Path, backend: str, vllm_python: Path | None, progress: Progress) -> dict[str, float]:
    """Seconds of `load_adapter` for a rank-16 LoRA on q/k/v/o of smollm2 (3 loads, each a new version)."""
    from agentjet.core.backends.factory import build_backend
    from agentjet.core.config import ServerSettings

    adapter = _random_adapter(state_root / "adapter")
    settings = ServerSettings(
        model="smollm2-135m", state_dir=state_root / f"hotload-{backend}", device=best_device(),
        backend=backend, vllm_python=vllm_python if backend == "vllm" else None,
    )  # fmt: skip

    async def timed() -> list[float]:
        instance = build_backend(settings)
        await instance.start()
        try:
            took = []
            for version in (1, 2, 3):
                started = time.perf_counter()
                await instance.load_adapter(adapter, version)
                took.append(time.perf_counter() - started)
            return took
        finally:
            await instance.close()

    took = asyncio.run(timed())
    progress(f"{backend} LoRA hot-load: {', '.join(f'{t:.2f}' for t in took)} s")
    return {"hot_load_s_p50": round(sorted(took)[1], 3), "hot_load_s_max": round(max(took), 3)}


def _random_adapter(out: Path) -> Path:
    """A rank-16 LoRA adapter for smollm2 with non-zero weights (what a trainer step saves)."""
    if (out / "adapter_config.json").is_file():
        return out
    import peft
    import torch
    from transformers import AutoModelForCausalLM

    from agentjet.core.models import resolve_model

    base = AutoModelForCausalLM.from_pretrained(resolve_model("smollm2-135m"), dtype=torch.float32)
    config = peft.LoraConfig(r=16, lora_alpha=32, target_modules=["q_proj", "k_proj", "v_proj", "o_proj"])
    peft.get_peft_model(base, config).save_pretrained(str(out))
    return out


async def _episode_tokens_once(url: str) -> None:
    async with httpx.AsyncClient(timeout=600) as client:
        await _episode_tokens(client, url, 0, 1, 4)


# ---- entry points -------------------------------------------------------------------------------
def run_serve_bench(
    quick: bool,
    requests_per_level: int | None = None,
    progress: Progress = _stderr,
    *,
    backends: tuple[str, ...] = ("transformers",),
    vllm_python: Path | None = None,
) -> dict[str, Any]:
    """Run the benchmark and return one flat dict of figures (keys listed in the module docstring).

    `quick` skips the real-model part and times fewer calls (well under a minute on 2 cores).
    With one backend its figures are top-level keys; with several each backend's are under its name.
    """
    requests = requests_per_level or (384 if quick else 2000)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="agentjet-bench-") as tmp:
        results: dict[str, Any] = {"quick": quick, "requests_per_level": requests, "cpus": os.cpu_count() or 1}
        results.update(_overhead(Path(tmp), requests, progress))
        if not quick:
            measured = {b: _throughput(Path(tmp), progress, backend=b, vllm_python=vllm_python) for b in backends}
            if len(backends) == 1:
                results.update(measured[backends[0]])
            else:
                results.update(measured)
    results["bench_wall_s"] = round(time.perf_counter() - started, 1)
    return results


def main(
    quick: bool, as_json: bool, backends: tuple[str, ...] = ("transformers",), vllm_python: Path | None = None
) -> dict[str, Any]:
    """`agentjet bench serve [--quick] [--json] [--backend B ...]`: run, write the figures to stdout, return them."""
    results = run_serve_bench(quick, backends=backends, vllm_python=vllm_python)
    print_result(results, as_json=as_json)
    return results
