"""The state of one vibe run as the graph carries it: JSON-able data only, checkpointed after every node.

Live objects (the LLM, sandboxes, servers, the progress view) never enter the state: they are
rebuilt from `options` on `--resume`, so a run killed with `kill -9` continues from its last
checkpoint in a new process. Keys a node returns are merged in by the reducers below (dicts
by key, lists appended); every other key is replaced.
"""

from __future__ import annotations

import operator
import re
import secrets
from datetime import UTC, datetime
from typing import Annotated, Any, Literal, TypedDict

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "NODES",
    "NodeName",
    "Failure",
    "RepairRecord",
    "RunStatus",
    "VibeOptions",
    "VibeState",
    "initial_state",
    "new_run_id",
]

NodeName = Literal["understand", "generate", "validate", "red_team", "launch_and_watch", "report", "repair"]
NODES: tuple[NodeName, ...] = ("understand", "generate", "validate", "red_team", "launch_and_watch", "report")
RunStatus = Literal["running", "done", "failed", "refused"]
_RUN_ID = re.compile(r"^[a-z0-9][a-z0-9-]{0,79}$")


class VibeOptions(BaseModel):
    """What the user asked for besides the sentence (CLI flags), kept in the state so a resume needs none."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    llm: str | None = Field(None, description="--llm: a litellm model name or an OpenAI-compatible URL")
    model: str | None = Field(None, description="--model: the policy model, overriding the planner's choice")
    steps: int | None = Field(None, ge=1, description="--steps: training steps, overriding the sentence")
    budget_minutes: float | None = Field(None, gt=0, description="--budget: wall-clock minutes for the run")
    eval_items: int | None = Field(None, ge=1, le=100_000, description="--eval-items: held-out items per round")
    eval_every: int | None = Field(None, ge=1, le=100_000, description="--eval-every: steps between held-out rounds")
    seed: int | None = Field(None, ge=0, le=2**31 - 1, description="--seed: the seed the items are drawn with")
    train: dict[str, Any] = Field(
        default_factory=dict, description="--train: TrainConfig overrides over the family's recipe (nested)"
    )
    workdir: str = Field("vibe-runs", min_length=1, description="runs live in <workdir>/<run_id>/")
    max_repairs: int = Field(3, ge=0, le=20, description="repair rounds allowed per failing node")

    def plan_flags(self) -> dict[str, Any]:
        """The flags the planner takes (`plan(sentence, llm=..., **options.plan_flags())`): one mapping for the
        run, its offline pre-check and `--dry-run`."""
        return {
            "model": self.model, "steps": self.steps, "minutes": self.budget_minutes, "eval_items": self.eval_items,
            "eval_every": self.eval_every, "seed": self.seed, "train": self.train,
        }  # fmt: skip


class Failure(TypedDict):
    """A node's failure that the repair node may fix: what went wrong and the log tail a fix needs."""

    node: str
    error: str
    logs: str


class RepairRecord(TypedDict):
    """One repair round, for the report."""

    node: str
    attempt: int
    error: str
    summary: str


def _merge(left: dict[str, Any], right: dict[str, Any]) -> dict[str, Any]:
    """Reducer: a node's dict updates replace those keys and keep the rest."""
    return {**left, **right}


class VibeState(TypedDict, total=False):
    """One run. `results[node]` is that node's last report (JSON); `timings[node]` its last run."""

    run_id: str
    sentence: str
    options: dict[str, Any]  # VibeOptions.model_dump()
    workspace: str  # absolute path of <workdir>/<run_id>
    spec: dict[str, Any] | None  # TaskSpec.model_dump(mode="json") once understood
    status: RunStatus
    results: Annotated[dict[str, Any], _merge]
    timings: Annotated[dict[str, dict[str, float]], _merge]  # node -> {started_at, elapsed_s, runs}
    finished: Annotated[list[str], operator.add]  # node names in the order they finished, repeats included
    failure: Failure | None  # set by a failing node, cleared by repair (or by the next success)
    resume_at: str | None  # where the repair sends the run back to
    repair_counts: Annotated[dict[str, int], _merge]  # failing node -> repair rounds so far
    repairs: Annotated[list[RepairRecord], operator.add]
    errors: Annotated[list[str], operator.add]  # every failure message, in order
    message: str  # the last word: the refusal text, the fatal error, or where the report is
    failed_at: str | None  # the node whose failure failed the run (a resume retries it)


def new_run_id(sentence: str, *, now: datetime | None = None, token: str | None = None) -> str:
    """A readable, unique run id: a slug of the sentence's first words, the time and 4 random hex digits."""
    words = re.findall(r"[a-z0-9]+", sentence.lower())
    slug = "-".join(words)[:32].strip("-") or "run"
    stamp = (now or datetime.now(UTC)).strftime("%Y%m%d-%H%M%S")
    return f"{slug}-{stamp}-{token or secrets.token_hex(2)}"


def is_run_id(text: str) -> bool:
    """True when `text` could name a run (and is safe as a folder name)."""
    return bool(_RUN_ID.match(text))


def initial_state(run_id: str, sentence: str, options: VibeOptions, workspace: str) -> VibeState:
    """The state a new run starts from."""
    return VibeState(
        run_id=run_id,
        sentence=sentence,
        options=options.model_dump(mode="json"),
        workspace=workspace,
        spec=None,
        status="running",
        results={},
        timings={},
        finished=[],
        failure=None,
        resume_at=None,
        repair_counts={},
        repairs=[],
        errors=[],
        message="",
        failed_at=None,
    )
