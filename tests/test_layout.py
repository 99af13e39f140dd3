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


# ---- the layer contract: one way down, no circles, the public core above it -----------------------
# DESIGN §2: a package imports only those below it. Imports inside functions and under TYPE_CHECKING
# count too: a deferred import still couples the two, and a type-only circle is still a circle.
LAYERS = ("core", "llm", "sandbox", "deploy", "tasks", "vibe", "a3r", "bench", "nightly", "chat", "cli")
PUBLIC_CORE_ONLY = (
    "llm",
    "sandbox",
    "deploy",
    "tasks",
    "vibe",
    "a3r",
    "nightly",
    "chat",
)  # bench and cli may measure/wire internals


def _module_name(root: Path, path: Path) -> str:
    parts = path.relative_to(root.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _targets(root: Path, node: ast.Import | ast.ImportFrom, package: str) -> set[str]:
    """The modules of ours an import names (`from a.b import c` is module a.b.c when c is one)."""
    top = root.name
    if isinstance(node, ast.Import):
        return {alias.name for alias in node.names if alias.name.split(".")[0] == top}
    if node.level:  # relative: resolve against this module's package
        base = package.split(".")[: len(package.split(".")) - node.level + 1]
        module = ".".join(base + ([node.module] if node.module else []))
    else:
        module = node.module or ""
    if module.split(".")[0] != top:
        return set()
    found = set()
    for alias in node.names:
        candidate = f"{module}.{alias.name}"
        folder = root.parent.joinpath(*candidate.split("."))
        found.add(candidate if folder.with_suffix(".py").is_file() or (folder / "__init__.py").is_file() else module)
    return found


def import_graph(root: Path) -> dict[str, set[str]]:
    """Every module of the package at `root` -> the modules of ours it imports (anywhere in its body)."""
    graph: dict[str, set[str]] = {}
    for path in sorted(root.rglob("*.py")):
        name = _module_name(root, path)
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        edges: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import | ast.ImportFrom):
                edges |= _targets(root, node, package)
        graph[name] = edges - {name}
    return graph


def _layer(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in LAYERS else None


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in graph.get(node, ()):
            if target not in graph:
                continue
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def layer_violations(root: Path) -> list[str]:
    """Upward imports, circles, and imports of core internals from the packages that get only its public API."""
    graph = import_graph(root)
    problems = []
    for module, targets in sorted(graph.items()):
        here = _layer(module)
        for target in sorted(targets):
            there = _layer(target)
            if here and there and LAYERS.index(there) > LAYERS.index(here):
                problems.append(f"upward import: {module} -> {target}")
            if here in PUBLIC_CORE_ONLY and there == "core" and target != f"{root.name}.core":
                problems.append(f"core internals: {module} -> {target} (use {root.name}.core's public names)")
    problems += [f"circle: {' -> '.join(component)}" for component in circles(graph)]
    return problems


def test_every_import_runs_one_way_down_with_no_circle_and_only_the_public_core_above_it() -> None:
    problems = layer_violations(ROOT)
    assert not problems, "\n".join(problems)


def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    root = tmp_path / "agentjet"
    for name, text in {"__init__.py": "", **files}.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    for folder in {p.parent for p in root.rglob("*.py")}:
        (folder / "__init__.py").touch()
    return root


def test_the_contract_catches_an_upward_import_a_circle_and_a_reach_past_the_public_core(tmp_path: Path) -> None:
    clean = {
        "core/errors.py": "",
        "core/__init__.py": "from agentjet.core.errors import *\n",
        "tasks/run.py": "from agentjet.core import AgentJetError\n",
        "vibe/plan.py": "from agentjet.tasks.run import x\n",
    }
    assert layer_violations(_tree(tmp_path / "clean", clean)) == []
    upward = {**clean, "tasks/run.py": "def f():\n    from agentjet.vibe.plan import y\n"}  # deferred still counts
    assert any("upward import: agentjet.tasks.run -> agentjet.vibe.plan" in p for p in layer_violations(
        _tree(tmp_path / "upward", upward)))  # fmt: skip
    circle = {**clean, "vibe/a.py": "from agentjet.vibe import b\n", "vibe/b.py": "from typing import TYPE_CHECKING\n"
              "if TYPE_CHECKING:\n    from agentjet.vibe.a import A\n"}  # fmt: skip
    assert "circle: agentjet.vibe.a -> agentjet.vibe.b" in layer_violations(_tree(tmp_path / "circle", circle))
    reach = {**clean, "vibe/plan.py": "from agentjet.core.errors import AgentJetError\n"}
    assert any(p.startswith("core internals: agentjet.vibe.plan") for p in layer_violations(
        _tree(tmp_path / "reach", reach)))  # fmt: skip


# ---- the map in the folders: each package's docstring names what it holds ---------------------------
def _unlisted(root: Path) -> list[str]:
    """Modules and sub-packages a package's `__init__.py` docstring does not name (`x.py`, `x/`)."""
    missing = []
    for init in sorted(root.rglob("__init__.py")):
        folder = init.parent
        if "templates" in folder.relative_to(root).parts:
            continue  # workspace templates are data
        doc = ast.get_docstring(ast.parse(init.read_text())) or ""
        names = [p.name for p in folder.glob("*.py") if p.name not in ("__init__.py", "__main__.py")]
        names += [f"{p.name}/" for p in folder.iterdir() if (p / "__init__.py").is_file() or p.name == "templates"]
        missing += [f"{folder.relative_to(root.parent)}/{name}" for name in sorted(names) if name not in doc]
    return missing


def test_every_package_docstring_names_its_modules_and_sub_packages() -> None:
    missing = _unlisted(ROOT)
    assert not missing, "name these in their package's __init__.py docstring:\n" + "\n".join(missing)


def test_the_docstring_check_sees_an_unlisted_module(tmp_path: Path) -> None:
    root = _tree(tmp_path, {"vibe/__init__.py": '"""Vibe.\n\nplan.py  the plan\n"""\n', "vibe/plan.py": ""})
    (root / "__init__.py").write_text('"""Top.\n\nvibe/  vibe\n"""\n')
    assert _unlisted(root) == []
    (root / "vibe" / "watch.py").write_text("")
    assert _unlisted(root) == ["agentjet/vibe/watch.py"]


def test_no_module_over_400_lines_and_no_flat_folder_over_15_modules() -> None:
    """Issue 16's sizes, kept: a module that grows past 400 lines, or a folder past 15 modules, gets split."""
    modules = [p for p in ROOT.rglob("*.py") if "templates" not in p.relative_to(ROOT).parts]
    long = [f"{p.relative_to(ROOT)} ({n} lines)" for p in modules if (n := len(p.read_text().splitlines())) > 400]
    per_folder: dict[Path, int] = {}
    for path in modules:
        if path.name != "__init__.py":
            per_folder[path.parent] = per_folder.get(path.parent, 0) + 1
    wide = [f"{d.relative_to(ROOT.parent)} ({n} modules)" for d, n in per_folder.items() if n > 15]
    assert not long and not wide, f"split these: {long + wide}"
