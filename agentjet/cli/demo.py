"""`agentjet demo`, the swarm demo: one real server on loopback, several concurrent agent clients, no training.

Each client runs a two-turn agent with the official `openai` SDK inside an episode, scores the
answer and reports the reward; the demo then shows what the server captured (token ids,
logprobs, policy version) and its live statistics. The server's modules load only when the demo runs: the
CLI also starts inside sandboxes, whose image holds the client side only.
"""

from __future__ import annotations

import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from agentjet.cli.one_shot import run_one_shot
from agentjet.core import SwarmClient

__all__ = ["demo_command", "run_demo"]

_QUESTIONS = [
    ("What is the capital of France?", "paris"),
    ("What is 2 + 3?", "5"),
    ("Which planet is known as the red planet?", "mars"),
    ("What colour is the sky on a clear day?", "blue"),
]


def _agent(client: SwarmClient, index: int) -> dict[str, Any]:
    """A tiny two-turn agent: answer, then confirm in one word. Reward: the right word appears."""
    from openai import OpenAI

    question, answer = _QUESTIONS[index % len(_QUESTIONS)]
    with client.episode(task_id=f"demo-{index % len(_QUESTIONS)}", agent="demo") as ep:
        llm = OpenAI(base_url=ep.base_url, api_key=ep.api_key, max_retries=0)
        messages: list[Any] = [{"role": "user", "content": question}]
        first = llm.chat.completions.create(
            model="policy", messages=messages, max_tokens=48, temperature=0.7, seed=index
        )
        messages += [
            {"role": "assistant", "content": first.choices[0].message.content or ""},
            {"role": "user", "content": "Answer again in one word."},
        ]
        second = llm.chat.completions.create(
            model="policy", messages=messages, max_tokens=16, temperature=0.7, seed=index
        )
        final = (second.choices[0].message.content or "").strip()
        reward = 1.0 if answer in final.lower() or answer in (first.choices[0].message.content or "").lower() else 0.0
        ep.end(reward=reward, metadata={"question": question})
        return {"episode_id": ep.episode_id, "question": question, "final": final, "reward": reward}


def run_demo(*, model: str, episodes: int, concurrency: int, state_dir: Path | None) -> None:
    from agentjet.core.access.tokens import new_admin_token
    from agentjet.core.config import ServerSettings
    from agentjet.core.server.app import create_app
    from agentjet.core.testing import serve_in_thread

    console = Console() if sys.stdout.isatty() else Console(width=120)  # logs and CI get whole rows
    state = state_dir or Path(tempfile.mkdtemp(prefix="agentjet-demo-"))
    token = new_admin_token()
    settings = ServerSettings(model=model, state_dir=state, token=token)
    console.print(f"[bold]AgentJet swarm demo[/] model={model} state_dir={state}")
    console.print("loading the model (first run converts it once)...")
    started = time.monotonic()
    with serve_in_thread(create_app(settings)) as server, SwarmClient(server.url, token=token) as client:
        _wait_rolling(client)
        console.print(
            f"server rolling at {server.url} after {time.monotonic() - started:.1f}s; "
            f"running {episodes} episodes, {concurrency} at a time"
        )
        with ThreadPoolExecutor(concurrency) as pool:
            results = list(pool.map(lambda i: _agent(client, i), range(episodes)))
        _show(console, client, results)
        status = client.status()
    console.print(
        f"server: {status['episodes']}, {status['calls_total']} calls, {status['tokens_total']} tokens, "
        f"policy v{status['policy_version']}; journal: {state / 'journal.sqlite'}"
    )
    console.print(f"done in {time.monotonic() - started:.1f}s")


def _wait_rolling(client: SwarmClient, timeout_s: float = 600.0) -> None:
    deadline = time.monotonic() + timeout_s
    while client.health().get("state") != "rolling":
        if time.monotonic() > deadline:
            raise TimeoutError("server did not finish loading the model")
        time.sleep(0.2)


def _show(console: Console, client: SwarmClient, results: list[dict[str, Any]]) -> None:
    table = Table(title="episodes (captured by the server)")
    for column in (
        "episode",
        "task",
        "final answer",
        "reward",
        "calls",
        "prompt tok",
        "sampled tok",
        "mean logprob",
    ):
        table.add_column(column, no_wrap=True, overflow="ellipsis", max_width=28 if column == "final answer" else None)
    for result in results:
        record = client.get_episode(result["episode_id"])
        calls = record["calls"]
        sampled = [lp for c in calls for lp in c["completion_logprobs"]]
        table.add_row(
            result["episode_id"][:11],
            record["task_id"],
            result["final"].replace("\n", " ")[:28],
            f"{result['reward']:.0f}",
            str(len(calls)),
            str(sum(len(c["prompt_ids"]) for c in calls)),
            str(len(sampled)),
            f"{sum(sampled) / max(len(sampled), 1):.2f}",
        )
    console.print(table)
    mean = sum(r["reward"] for r in results) / max(len(results), 1)
    console.print(f"mean reward {mean:.2f} (no training in this demo: rewards are recorded for the trainer)")


def demo_command(
    model: Annotated[str, typer.Option(help="policy model")] = "smollm2-135m",
    episodes: Annotated[int, typer.Option(help="episodes to run")] = 8,
    concurrency: Annotated[int, typer.Option(help="clients running at once")] = 4,
    state_dir: Annotated[Path | None, typer.Option(help="server state dir (default: a temp dir)")] = None,
) -> None:
    """The swarm demo: a server on loopback and concurrent agent clients; prints what was captured."""
    run_one_shot(
        lambda: run_demo(model=model, episodes=episodes, concurrency=concurrency, state_dir=state_dir),
        quiet_tokenizers=True,
    )
