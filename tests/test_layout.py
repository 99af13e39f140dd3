"""The dependency direction of DESIGN §2 / STYLE §1, checked on the source (no imports run)."""

from __future__ import annotations

import ast
from pathlib import Path

import agentjet
import agentjet.core

ROOT = Path(agentjet.__file__).parent
LEAVES = {"types", "errors"}  # import nothing of ours
FORBIDDEN_FROM_CORE = ("agentjet.vibe", "agentjet.a3r", "agentjet.chat", "agentjet.cli", "agentjet.bench")
CORE_INTERNALS = ("agentjet.core.server", "agentjet.core.engine", "agentjet.core.backends", "agentjet.core.serving")


def _imports(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


def test_core_never_imports_the_research_layer_or_the_cli() -> None:
    for path in (ROOT / "core").rglob("*.py"):
        bad = {n for n in _imports(path) if n.startswith(FORBIDDEN_FROM_CORE)}
        assert not bad, f"{path} imports {bad}"


def test_leaf_modules_import_nothing_of_ours() -> None:
    for leaf in LEAVES:
        ours = {n for n in _imports(ROOT / "core" / f"{leaf}.py") if n.startswith("agentjet")}
        assert not ours, f"core/{leaf}.py imports {ours}"


def test_research_layer_uses_only_the_public_core() -> None:
    for package in ("vibe", "a3r"):
        for path in (ROOT / package).rglob("*.py"):
            bad = {n for n in _imports(path) if n.startswith(CORE_INTERNALS)}
            assert not bad, f"{path} imports core internals {bad}"


def test_public_api_is_exactly_all() -> None:
    public = {name for name in dir(agentjet.core) if not name.startswith("_")}
    modules = {name for name in public if type(getattr(agentjet.core, name)).__name__ == "module"}
    assert public - modules == set(agentjet.core.__all__)
    assert {"SwarmClient", "AsyncSwarmClient", "TrainConfig"} <= set(agentjet.__all__)
