"""Workspaces from the built-in templates (rendered as generate renders them) and prompts as a model sees them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

from agentjet.vibe.generate.render import render_template
from agentjet.vibe.plan.spec import TaskSpec
from agentjet.vibe.workspace import Workspace


def make_spec(family: str, *, train: int = 4, eval_items: int = 4, **params: Any) -> TaskSpec:
    return TaskSpec(
        name=family.replace("_", "-"),
        sentence=f"train a model on {family}",
        family=family,
        params=params,
        environment=f"the built-in {family} task",
        reward="the template's reward",
        dataset={"train_items": train, "eval_items": eval_items, "seed": 0},
        success_metric={"description": "eval reward"},
    )


def make_workspace(root: Path, spec: TaskSpec) -> Workspace:
    """The template's files, filled in from `spec`, with their data made by dataset.py; committed."""
    workspace = Workspace(root).init()
    for path, text in render_template(spec.family, spec.model_dump(mode="json")).items():
        workspace.write(path, text)
    subprocess.run([sys.executable, "dataset.py", "--out", "data"], cwd=root, check=True, capture_output=True)
    workspace.commit(f"generate: {spec.family} template")
    return workspace


def chatml(*turns: tuple[str, str]) -> str:
    """A prompt rendered the way SmolLM2's chat template renders it, ready for the assistant's turn."""
    body = "".join(f"<|im_start|>{role}\n{content}<|im_end|>\n" for role, content in turns)
    return body + "<|im_start|>assistant\n"
