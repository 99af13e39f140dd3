"""The import-graph figures of an agentjet tree (issue 16): circles, upward imports, core internals used from
above the core, the largest module and the largest flat folder, as JSON.

    python scripts/import_graph.py [CHECKOUT]      # default: this checkout

The rules are tests/test_layout.py's own (its import graph, layers and circle finder), applied to CHECKOUT's
agentjet/ package, so an older checkout is measured by today's rules.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]


def _layout() -> object:
    spec = importlib.util.spec_from_file_location("layout_rules", HERE / "tests" / "test_layout.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def figures(checkout: Path) -> dict[str, object]:
    layout = _layout()
    root = checkout / "agentjet"
    problems: list[str] = layout.layer_violations(root)  # type: ignore[attr-defined]
    circles: list[list[str]] = layout.circles(layout.import_graph(root))  # type: ignore[attr-defined]
    modules = [p for p in root.rglob("*.py") if "templates" not in p.parts]
    lines = {p: len(p.read_text().splitlines()) for p in modules}
    folders: dict[Path, int] = {}
    for path in modules:
        if path.name != "__init__.py":
            folders[path.parent] = folders.get(path.parent, 0) + 1
    largest, widest = max(lines, key=lines.__getitem__), max(folders, key=folders.__getitem__)
    return {
        "circles": len(circles),
        "largest_circle": max((len(c) for c in circles), default=0),
        "upward_imports": sum(p.startswith("upward") for p in problems),
        "core_internals_from_above": sum(p.startswith("core internals") for p in problems),
        "largest_module": f"{largest.relative_to(root)} ({lines[largest]} lines)",
        "modules_over_400_lines": sum(n > 400 for n in lines.values()),
        "largest_flat_folder": f"{widest.relative_to(checkout)} ({folders[widest]} modules)",
        "folders_over_15_modules": sum(n > 15 for n in folders.values()),
    }


if __name__ == "__main__":
    print(json.dumps(figures(Path(sys.argv[1]).resolve() if len(sys.argv) > 1 else HERE), indent=1))
