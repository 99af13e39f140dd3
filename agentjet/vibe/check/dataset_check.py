"""The dataset schema check: a workspace's JSONL split files against the contract, read as data only.

One item a line: `{"task_id": str, "seed": int, "data": {...}}`. The files come from generated code,
so they are parsed here, never imported or run, and every problem is said in words with its line
number (the repair prompt quotes them).
"""

from __future__ import annotations

import json

__all__ = ["MAX_LINE_CHARS", "check_rows"]

MAX_LINE_CHARS = 1_000_000  # one item; more is a runaway generator, not data
_MAX_PROBLEMS = 20


def _row_problem(row: object) -> str | None:
    if not isinstance(row, dict):
        return f"is a JSON {type(row).__name__}, not an object"
    missing = [key for key in ("task_id", "seed", "data") if key not in row]
    if missing:
        return f"lacks {', '.join(missing)} (keys: {sorted(row)[:8]})"
    task_id, seed, data = row["task_id"], row["seed"], row["data"]
    if not isinstance(task_id, str) or not 1 <= len(task_id) <= 256:
        return f"task_id must be a string of 1-256 characters, got {task_id!r:.80}"
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**63:
        return f"seed must be a non-negative integer, got {seed!r:.80}"
    if not isinstance(data, dict):
        return f"data must be an object, got {type(data).__name__}"
    return None


def check_rows(text: str, name: str) -> tuple[int, set[str], list[str]]:
    """(items, their task_ids, problems) of one split file's text."""
    problems: list[str] = []
    ids: set[str] = set()
    count = 0
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        count += 1
        if len(line) > MAX_LINE_CHARS:
            problems.append(f"{name} line {number} is {len(line)} characters long (at most {MAX_LINE_CHARS})")
            continue
        try:
            row = json.loads(line)
        except ValueError as exc:
            problems.append(f"{name} line {number} is not JSON: {exc}")
            continue
        problem = _row_problem(row)
        if problem is not None:
            problems.append(f"{name} line {number} {problem}")
        elif row["task_id"] in ids:
            problems.append(f"{name} line {number} repeats task_id {row['task_id']!r}")
        else:
            ids.add(row["task_id"])
    if count == 0:
        problems.append(f"{name} holds no items")
    if len(problems) > _MAX_PROBLEMS:
        problems = [*problems[:_MAX_PROBLEMS], f"... and {len(problems) - _MAX_PROBLEMS} more problems in {name}"]
    return count, ids, problems
