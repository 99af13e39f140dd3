"""A task spec as a readable block: what `agentjet vibe TEXT --dry-run` prints (or its JSON with `--json`).

Pure: the spec in, text out. It shows what the run would train (family, parameters, trained roles,
policies, budget, model) and every assumption, so a sentence can be checked before anything runs.
"""

from __future__ import annotations

import json
from typing import Any

from agentjet.vibe.plan.spec import TaskSpec

__all__ = ["dry_run_json", "spec_text"]


def _value(value: Any) -> str:
    return json.dumps(value) if isinstance(value, dict | list) else str(value)


def _training(train: dict[str, Any]) -> str:
    """The recipe's overrides as dotted `key=value`s, or that the defaults apply."""

    def flat(prefix: str, node: Any) -> list[str]:
        if isinstance(node, dict):
            return [item for key, value in node.items() for item in flat(f"{prefix}{key}.", value)]
        return [f"{prefix[:-1]}={_value(node)}"]

    return ", ".join(flat("", train)) or "the defaults (docs/training-config.md)"


def spec_text(spec: TaskSpec) -> str:
    """The spec as aligned `key: value` lines, then the assumptions."""
    params = ", ".join(f"{k}={_value(v)}" for k, v in spec.params.items()) or "defaults"
    policies = "; ".join(f"{p.name} ({', '.join(p.roles) or 'the one actor'})" for p in spec.policies)
    shared = (
        "one shared policy" if spec.shares_one_policy else f"{len(spec.policies)} separate policies, one server each"
    )
    budget = f"{spec.budget.steps} steps" + (f", {spec.budget.minutes:g} minutes" if spec.budget.minutes else "")
    model = spec.model + (f" (asked for: {spec.requested_model})" if spec.requested_model else "")
    rows = [
        ("task", f"{spec.name} (planner: {spec.planner})"),
        ("family", spec.family),
        ("parameters", params),
        ("trained roles", ", ".join(spec.trained_roles) or "none"),
        ("policies", f"{shared}: {policies}"),
        ("budget", budget),
        ("training", _training(spec.train)),
        (
            "held-out",
            f"{spec.dataset.eval_items} eval items before and after training; success: the task's won flag where it "
            f"reports one, else reward >= {spec.success_metric.success_reward:g} ({spec.success_metric.rate})",
        ),
        ("model", model),
    ]
    if spec.model_note:
        rows.append(("model note", spec.model_note))
    width = max(len(key) for key, _ in rows)
    lines = [f"dry run: nothing was written; this is the spec `agentjet vibe` would run for {spec.sentence!r}", ""]
    lines += [f"  {key.ljust(width)}  {value}" for key, value in rows]
    lines += ["", "assumptions:"] + [f"  - {a}" for a in spec.assumptions or ["none"]]
    return "\n".join(lines)


def dry_run_json(spec: TaskSpec) -> str:
    """The spec as JSON (task.yaml's fields)."""
    return json.dumps(spec.model_dump(mode="json"), indent=2)
