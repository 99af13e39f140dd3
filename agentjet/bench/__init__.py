"""Benchmarks behind `agentjet bench`: each measures one speed claim against real servers on loopback.

Nothing loads at import: `python -m agentjet.bench.gpu` runs where only torch, transformers and
peft are installed, so this package must not pull in the serving stack (httpx, psutil) itself.

agent_workload.py  A synthetic tool-using agent, recorded the way the swarm server records real episodes.
campaign.py        `agentjet bench campaign`: the campaign engine's overhead per trial and pool utilisation.
chat_latency.py    `agentjet bench chat`: time to the first streamed token in the chat page vs the openai SDK.
frameworks.py      `agentjet bench frameworks`: the same task written four ways trains the same way.
learn.py           `agentjet bench learn TASK`: does training through a real swarm server make the agent better?
learn_check.py     `agentjet bench learn-check`: does GRPO through a real swarm server raise the reward within a few
                   steps?
load.py            `agentjet bench load`: do updates still happen while many clients keep the server busy, and what
                   do calls wait?
logprob_gap.py     `agentjet bench logprob-gap`: how far the sampler's logprobs are from the trainer's on the same
                   tokens.
merging.py         `agentjet bench merging`: what timeline merging and group prefix sharing save per update.
output.py          How every benchmark hands its figures over: JSON or an aligned table on stdout, PNG charts.
sandbox.py         `agentjet bench sandbox`: start-to-exit latency of `python3 -c pass` per backend, and 8 sandboxes
                   at once.
train_invariants.py  Seeded training curves that must not depend on how a batch is cut: the nightly invariants' source.
train_memory.py    `agentjet bench train-memory`: peak memory and time of one update per micro-batch budget.
vibe_hotswap.py    `agentjet bench vibe-hotswap`: how fast a vibe run swaps its client, against restarting the
                   server.
chaos/             `agentjet bench chaos`: attacks and faults against real servers, each with the invariant it must
                   keep.
gpu/               The GPU check (`agentjet bench gpu`, `python -m agentjet.bench.gpu`, `scripts/gpu-check.sh`).

serving/           `agentjet bench serve`: what the swarm server costs per call and how generation scales, each
                   server in its own process.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agentjet.bench.serving.serve import main, run_serve_bench

__all__ = ["main", "run_serve_bench"]


def __getattr__(name: str) -> Any:
    if name not in __all__:
        raise AttributeError(f"module 'agentjet.bench' has no attribute {name!r}")
    from agentjet.bench.serving import serve

    return getattr(serve, name)
