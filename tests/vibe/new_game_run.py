"""The scripted `agentjet vibe --llm` run of a new game (tic-tac-toe), from the sentence to the report.

A fake OpenAI-compatible LLM on loopback (`tests.vibe.fake_llm`) answers, in order: the planner (a
`generated` task spec), the generator (the workspace of `tests.vibe.new_game`, whose `read_move`
raises on a reply naming several moves) and the repair (a fixed `read_move` and a test for it).
Everything else is real: the docker (or auto) sandbox runs the generated code, validation plays dry
and real episodes, the red team's degenerate replies make the first version raise, the repair is
committed, validation and the red team pass, a `tiny` server trains 2 steps on loopback, and the
report is written. `test_new_game.py` asserts on it; an engineer reproduces it with

    python -m tests.vibe.new_game_run [--workdir DIR] [--steps N] [--sandbox auto|docker|bwrap]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentjet.sandbox import Sandbox
from agentjet.vibe import VibeOptions, run_vibe
from agentjet.vibe.context import NodeFn
from agentjet.vibe.driver import RunResult
from agentjet.vibe.progress import PlainProgress, ProgressSink
from tests.vibe.fake_llm import serve_fake_llm
from tests.vibe.new_game import EVAL_ITEMS, FIXED_REWARD, FIXED_TESTS, TIC_TAC_TOE, TRAIN_ITEMS, reply_with

__all__ = ["PLAN", "REPAIR_SUMMARY", "SENTENCE", "ScriptedRun", "main", "script", "scripted_run"]

SENTENCE = "train a small model to win at tic-tac-toe as X against a random opponent"
PLAN: dict[str, Any] = {  # what the planner LLM replies: no built-in family fits, so the task is generated
    "name": "tic-tac-toe-x",
    "family": "generated",
    "params": {},
    "requested_model": None,
    "environment": (
        "A 3x3 tic-tac-toe board with cells numbered 1-9. On each of its turns the policy (X) gets one chat "
        "message showing the board, the legal moves and the answer format `MOVE: <cell>`, and replies with "
        "one move. The opponent (O) plays a uniformly random legal move. Who moves first is part of the item."
    ),
    "actors": ["X (policy)", "O (uniformly random legal opponent, scripted)"],
    "trained_roles": ["X"],
    "policies": [{"name": "policy", "roles": ["X"]}],
    "reward": (
        "At the end of the game: 1.0 for a win, 0.5 for a draw, 0.0 for a loss. A reply without exactly one "
        "legal move (nothing, an occupied cell, several moves, the prompt echoed) forfeits the game: 0.0."
    ),
    "dataset": {
        "train_items": TRAIN_ITEMS,
        "eval_items": EVAL_ITEMS,
        "seed": 0,
        "params": {},
        "description": "one game per item: who moves first (X or O) and the seed of the random opponent",
    },
    "success_metric": {"name": "eval_reward_mean", "description": "mean game reward against the random opponent"},
    "budget": {"steps": 2},
    "assumptions": [
        "the policy always plays X; the random opponent plays O",
        "a malformed or illegal move loses the game, so degenerate replies earn nothing",
    ],
}
REPAIR_SUMMARY = "read_move forfeits a reply naming several moves instead of raising on it"


def script() -> list[str]:
    """The fake LLM's replies, in the order the run asks: plan, workspace, repair."""
    repair = f"SUMMARY: {REPAIR_SUMMARY}\n\n" + reply_with(
        {"reward.py": FIXED_REWARD, "tests/test_task.py": FIXED_TESTS}, preamble="The fix:"
    )
    return [json.dumps(PLAN), reply_with(TIC_TAC_TOE), repair]


@dataclass
class ScriptedRun:
    """How the scripted run ended, what the fake LLM was asked, and how long it took."""

    result: RunResult
    requests: list[dict[str, Any]]
    prompts: list[str]
    seconds: float
    unanswered: int  # scripted replies left over (0 when the run asked for each one)
    events: list[str] = field(default_factory=list)

    @property
    def summary(self) -> dict[str, Any]:
        path = self.result.workspace / "run.json"
        loaded: dict[str, Any] = json.loads(path.read_text()) if path.is_file() else {}
        return loaded


class _Recorder:
    """A progress sink that keeps every event (and passes it on to another sink, e.g. plain lines)."""

    def __init__(self, inner: ProgressSink | None) -> None:
        self.events: list[str] = []
        self._inner = inner

    def node_started(self, node: str) -> None:
        self.events.append(f"{node}: started")
        if self._inner:
            self._inner.node_started(node)

    def node_finished(self, node: str, outcome: str, elapsed_s: float, detail: str = "") -> None:
        self.events.append(f"{node}: {outcome}")
        if self._inner:
            self._inner.node_finished(node, outcome, elapsed_s, detail)

    def log(self, line: str) -> None:
        self.events.append(f"log: {line}")
        if self._inner:
            self._inner.log(line)

    def train_step(self, step: int, reward: float | None) -> None:
        self.events.append(f"step {step}: {reward}")
        if self._inner:
            self._inner.train_step(step, reward)


def scripted_run(
    workdir: Path,
    *,
    steps: int = 2,
    sandbox: str = "auto",
    progress: ProgressSink | None = None,
    nodes: Mapping[str, NodeFn] | None = None,
    replies: list[str] | None = None,
) -> ScriptedRun:
    """Run the whole graph for SENTENCE against the scripted LLM (`nodes` may replace some, e.g. the launch)."""
    recorder = _Recorder(progress)
    factory: Callable[[], Sandbox] = lambda: Sandbox(sandbox)  # noqa: E731
    started = time.monotonic()
    with serve_fake_llm(script() if replies is None else replies) as fake:
        options = VibeOptions(llm=fake.url, model="tiny", steps=steps, workdir=str(workdir))
        result = run_vibe(SENTENCE, options, progress=recorder, nodes=nodes, sandbox_factory=factory)
        unanswered = len(fake.replies)
        requests = list(fake.requests)
        prompts = fake.prompts
    return ScriptedRun(result, requests, prompts, time.monotonic() - started, unanswered, recorder.events)


def describe(run: ScriptedRun) -> list[str]:
    """The run in a few lines: status, nodes in order, the repair, steps, timings, the report."""
    state, summary = run.result.state, run.summary
    lines = [f"status: {run.result.status} ({run.seconds:.1f} s)", f"nodes: {' -> '.join(state.get('finished', []))}"]
    for record in state.get("repairs", []):
        lines.append(f"repair({record['node']}) attempt {record['attempt']}: {record['summary']}")
        lines.append(f"  because: {record['error'].splitlines()[0][:200]}")
    lines.append(f"steps: {summary.get('steps')}, time to first step: {summary.get('time_to_first_step_s')} s")
    timings = state.get("timings", {})
    lines.append("timings: " + ", ".join(f"{n} {t['elapsed_s']:.1f}s x{int(t['runs'])}" for n, t in timings.items()))
    lines.append(f"LLM requests: {len(run.requests)} (unanswered scripted replies: {run.unanswered})")
    lines.append(f"report: {run.result.report}")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.vibe.new_game_run", description=__doc__.splitlines()[0])
    parser.add_argument("--workdir", type=Path, default=None, help="runs go to DIR/RUN_ID (default: a temp dir)")
    parser.add_argument("--steps", type=int, default=2)
    parser.add_argument("--sandbox", default="auto", choices=("auto", "docker", "bwrap"))
    args = parser.parse_args(argv)
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="vibe-new-game-"))
    sys.stdout.write(f"workdir: {workdir.resolve()}\n")
    run = scripted_run(workdir, steps=args.steps, sandbox=args.sandbox, progress=PlainProgress(sys.stdout))
    sys.stdout.write("\n".join(describe(run)) + "\n")
    return 0 if run.result.status == "done" else 1


if __name__ == "__main__":
    sys.exit(main())
