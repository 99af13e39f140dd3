"""Task names and user client files -> `TaskFamily` instances (for `agentjet client run`).

Built-in families are imported lazily by their agreed `module:Class` path, so a family's heavy
dependencies (LangChain, a game engine) load only when it is used, and a family still being
built does not break the others. A user's client file is any `.py` defining `TASK` (a family
instance) or `make_task(**params)` (returning one); `--param key=value` goes to the constructor
or to `make_task`.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import json
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from agentjet.core import ConfigError
from agentjet.tasks.base import TaskFamily

__all__ = ["FAMILIES", "family_params", "load_family", "parse_params"]

FAMILIES: dict[str, str] = {
    "word": "agentjet.tasks.word:FirstWord",
    "countdown": "agentjet.tasks.countdown:Countdown",
    "arithmetic": "agentjet.tasks.arithmetic:Arithmetic",
    "tool_use": "agentjet.tasks.tool_use:ToolUse",
    "werewolves": "agentjet.tasks.werewolves:Werewolves",
}


def parse_params(pairs: Sequence[str]) -> dict[str, Any]:
    """`["difficulty=3", "framework=langchain"]` -> `{"difficulty": 3, "framework": "langchain"}`.

    A value is read as JSON when it parses (numbers, true/false, null, lists, quoted strings),
    else kept as the plain string."""
    params: dict[str, Any] = {}
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        if not sep or not key.strip().isidentifier():
            raise ConfigError(f"--param must look like key=value with a Python identifier key, got {pair!r}")
        try:
            params[key.strip()] = json.loads(raw)
        except json.JSONDecodeError:
            params[key.strip()] = raw
    return params


def load_family(spec: str, params: Mapping[str, Any] | None = None) -> TaskFamily:
    """A registered family name or a path to a client file -> a family instance (ConfigError if not)."""
    params = dict(params or {})
    if spec in FAMILIES:
        return _checked(_build(_import_class(spec), params, what=f"task {spec!r}"), what=f"task {spec!r}")
    path = Path(spec)
    if spec.endswith(".py") or path.exists() or "/" in spec:
        return _load_file(path, params)
    raise ConfigError(
        f"unknown task {spec!r}: registered tasks are {', '.join(sorted(FAMILIES))}; "
        "or give the path to a .py client file defining TASK or make_task(**params)"
    )


def family_params(name: str) -> tuple[str, ...]:
    """The parameter names a registered family's constructor takes (empty for an unknown name)."""
    if name not in FAMILIES:
        return ()
    try:
        signature = inspect.signature(_import_class(name))
    except (ConfigError, TypeError, ValueError):
        return ()
    return tuple(p.name for p in signature.parameters.values() if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY))


def _import_class(name: str) -> Callable[..., Any]:
    module_name, _, attr = FAMILIES[name].partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ConfigError(f"task {name!r} is registered but {module_name} cannot be imported: {exc}") from exc
    factory: Callable[..., Any] | None = getattr(module, attr, None)
    if not callable(factory):
        raise ConfigError(f"task {name!r}: {module_name} has no {attr}")
    return factory


def _load_file(path: Path, params: dict[str, Any]) -> TaskFamily:
    if not path.is_file():
        raise ConfigError(f"client file {str(path)!r} does not exist (registered tasks: {', '.join(sorted(FAMILIES))})")
    module_name = f"agentjet_user_task_{abs(hash(path.resolve()))}"
    loader_spec = importlib.util.spec_from_file_location(module_name, path)
    if loader_spec is None or loader_spec.loader is None:
        raise ConfigError(f"client file {str(path)!r} is not a loadable Python file")
    module = importlib.util.module_from_spec(loader_spec)
    sys.modules[module_name] = module  # dataclasses and pickling look their module up here
    try:
        loader_spec.loader.exec_module(module)
    except Exception as exc:  # the user's file is arbitrary code: report what broke, with its type
        del sys.modules[module_name]
        raise ConfigError(f"client file {str(path)!r} failed to import: {type(exc).__name__}: {exc}") from exc
    what = f"client file {str(path)!r}"
    make_task = getattr(module, "make_task", None)
    if callable(make_task):
        return _checked(_build(make_task, params, what=what), what=what)
    if hasattr(module, "TASK"):
        if params:
            raise ConfigError(f"{what} defines TASK, which takes no --param; define make_task(**params) instead")
        return _checked(module.TASK, what=what)
    raise ConfigError(f"{what} defines neither TASK (a task family instance) nor make_task(**params)")


def _build(factory: Callable[..., Any], params: dict[str, Any], *, what: str) -> Any:
    """Call the factory with the params, naming the ones it accepts when they do not fit."""
    try:
        signature = inspect.signature(factory)
    except (TypeError, ValueError):  # builtins without a signature: just try the call
        signature = None
    if signature is not None:
        try:
            signature.bind(**params)
        except TypeError as exc:
            accepted = [
                f"{p.name}={p.default!r}" if p.default is not p.empty else p.name
                for p in signature.parameters.values()
                if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
            ]
            raise ConfigError(
                f"{what}: bad params {sorted(params)} ({exc}); accepted: {', '.join(accepted) or 'none'}"
            ) from exc
    try:
        return factory(**params)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"{what}: {type(exc).__name__}: {exc}") from exc


def _checked(family: Any, *, what: str) -> TaskFamily:
    if not isinstance(family, TaskFamily) or not _names_servers(family.servers):
        raise ConfigError(
            f"{what} gave {type(family).__name__}, not a task family "
            "(needs name, servers (non-empty), items(split, count=, seed=) and run(item, llms))"
        )
    return family


def _names_servers(servers: object) -> bool:
    if not isinstance(servers, Sequence) or isinstance(servers, str):
        return False
    return bool(servers) and all(isinstance(s, str) and s for s in servers)
