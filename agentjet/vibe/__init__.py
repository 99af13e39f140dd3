"""Vibe training: a sentence -> a planned, generated, sandbox-validated, red-teamed, watched training run and a report.

    from agentjet.vibe import VibeOptions, run_vibe, resume_vibe
    result = run_vibe("train a 7B to play werewolves", VibeOptions(steps=5))

Uses the core only through `agentjet.core.__all__` and the CLI. The names below load on first use
(LangGraph and litellm are slow to import), so `agentjet.vibe.errors` and friends stay cheap.

context.py    What a vibe node gets besides the state: live objects rebuilt per process, and the node contract.
driver.py     The vibe run drivers: start a run of the graph, resume one after a stop, a crash or a failure.
errors.py     Errors of vibe training: every one says what went wrong and what the user can do about it.
graph.py      The vibe graph: understand -> generate -> validate -> red_team -> launch_and_watch -> report, plus
              bounded repair.
nodes.py      The real vibe nodes: thin adapters from the graph's `(state, ctx) -> dict` contract to the planner,
              generator, validator, red team, repairer, launcher/watcher and reporter.
progress.py   What a vibe run shows in a terminal: each node with status and elapsed time, the last log line, the
              reward curve.
repair.py     One round of the bounded repair loop: a failed node's error, log tail and the workspace files go to
              the LLM; the files of its fenced-block answer are checked, written and committed as `repair(<node>):
              ...`.
runs.py       Where vibe runs live besides their workspaces: the checkpoint DB, run locks, and undoing a run that
              never began.
state.py      The state of one vibe run as the graph carries it: JSON-able data only, checkpointed after every node.
workspace.py  A vibe run's workspace: a folder that is a git repo, where every generated file, repair and decision
              is a commit.
check/        The validate and red-team steps: a workspace's tests, data and episodes in a sandbox, and policies
              that try to earn reward without solving.
generate/     The generate step: a `TaskSpec` -> workspace files, from a built-in template or written by an LLM
              under the workspace contract.
plan/         The understand step: a sentence -> a `TaskSpec` (keywords, built-in families, or an LLM planner) and
              the policy model it trains.
report/       The report step: `report.md`, `run.json` and `curves.png` from what happened in a run.
run/          The launch-and-watch step: the run's swarm server, its sandboxed client processes behind an episode
              tap, hot-swaps, and trouble detection.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agentjet.vibe.context import NodeFailed, NodeFn, VibeContext
    from agentjet.vibe.driver import RunResult, resume_vibe, run_vibe
    from agentjet.vibe.errors import PlanRefused, VibeError
    from agentjet.vibe.plan.spec import TaskSpec
    from agentjet.vibe.progress import ProgressSink
    from agentjet.vibe.state import VibeOptions, VibeState

__all__ = [
    "NodeFailed",
    "NodeFn",
    "PlanRefused",
    "ProgressSink",
    "RunResult",
    "TaskSpec",
    "VibeContext",
    "VibeError",
    "VibeOptions",
    "VibeState",
    "resume_vibe",
    "run_vibe",
]

_HOME = {
    "NodeFailed": "context",
    "NodeFn": "context",
    "VibeContext": "context",
    "PlanRefused": "errors",
    "VibeError": "errors",
    "RunResult": "driver",
    "resume_vibe": "driver",
    "run_vibe": "driver",
    "ProgressSink": "progress",
    "TaskSpec": "plan.spec",
    "VibeOptions": "state",
    "VibeState": "state",
}


def __getattr__(name: str) -> Any:
    if name not in _HOME:
        raise AttributeError(f"module 'agentjet.vibe' has no attribute {name!r}")
    return getattr(importlib.import_module(f"agentjet.vibe.{_HOME[name]}"), name)
