"""What a task folder's client file needs from its folder: modules and JSONL items beside it.

Vibe workspaces (and any user's client folder) keep `client.py`, `reward.py` and `data/*.jsonl`
side by side and may be copied anywhere (a sandbox's work dir), so the client finds them relative
to its own file. These two helpers are that lookup, shared instead of pasted into every template.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType

from agentjet.tasks.base import Split, TaskItem

__all__ = ["load_beside", "read_items"]


def load_beside(folder: Path, name: str) -> ModuleType:
    """The module `<folder>/<name>.py`, loaded by path (the folder need not be on sys.path)."""
    path = folder / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"vibe_{name}_{abs(hash(str(path)))}", path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def read_items(folder: Path, split: Split, count: int, seed: int) -> list[TaskItem]:
    """`count` items of `<folder>/data/<split>.jsonl` from row `seed` on, cycling when the file is shorter."""
    lines = (folder / "data" / f"{split}.jsonl").read_text().splitlines()
    rows = [json.loads(line) for line in lines if line.strip()]
    if not rows:
        raise ValueError(f"data/{split}.jsonl is empty: run `python3 dataset.py`")
    picked = [rows[(seed + i) % len(rows)] for i in range(count)]
    return [TaskItem(str(row["task_id"]), int(row["seed"]), dict(row["data"])) for row in picked]
