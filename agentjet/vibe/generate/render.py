"""Built-in task templates -> workspace files, filled in from the task spec.

A template (`agentjet/vibe/generate/templates/<family>/`) is a working workspace for one built-in family
with defaults: valid Python that runs as it is. A line ending in `# vibe: KEY` has its value
replaced by the spec's value at KEY (`name`, `params`, `dataset.train_items`, `params.penalty`,
...); a key the spec lacks keeps the template's default. So what a person reads in the workspace
is plain code with the plan's numbers in it, not a template language.
"""

from __future__ import annotations

import pprint
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from agentjet.vibe.errors import VibeError
from agentjet.vibe.generate.contract import CODE_FILES

__all__ = ["TEMPLATES", "TEMPLATE_ROOT", "render_file", "render_template"]

TEMPLATE_ROOT = Path(__file__).resolve().parent / "templates"
TEMPLATES = ("countdown", "arithmetic", "tool_use", "werewolves", "word")  # every built-in family
_MARKED = re.compile(  # `NAME = value  # vibe: key` or `NAME: type = value  # vibe: key`
    r"^(?P<lhs>\s*[A-Za-z_]\w*(?:\s*:\s*[^=]+?)?\s*=\s*)(?P<value>.+?)\s*#\s*vibe:\s*(?P<key>[\w.]+)\s*$"
)
_MISSING = object()


def _lookup(context: Mapping[str, Any], key: str) -> Any:
    value: Any = context
    for part in key.split("."):
        if not isinstance(value, Mapping) or part not in value:
            return _MISSING
        value = value[part]
    return value


def _literal(value: Any, indent: int) -> str:
    """A Python literal for a JSON-like value, wrapped to fit the line."""
    text = pprint.pformat(value, width=110 - indent, sort_dicts=False)
    return text.replace("\n", "\n" + " " * indent)


def render_file(text: str, context: Mapping[str, Any]) -> str:
    """Replace the value of every `# vibe: KEY` line by `context[KEY]` (dotted keys go into mappings)."""
    lines = []
    for line in text.splitlines():
        match = _MARKED.match(line)
        if match is None:
            lines.append(line)
            continue
        value = _lookup(context, match.group("key"))
        key = match.group("key")
        if value is _MISSING:
            lines.append(f"{match.group('lhs')}{match.group('value')}  # default (task.yaml has no {key})")
        else:
            lines.append(f"{match.group('lhs')}{_literal(value, len(match.group('lhs')))}  # from task.yaml: {key}")
    return "\n".join(lines) + "\n"


def render_template(family: str, context: Mapping[str, Any]) -> dict[str, str]:
    """The workspace code files of a built-in family's template, filled in: relative path -> text."""
    folder = TEMPLATE_ROOT / family
    if family not in TEMPLATES or not folder.is_dir():
        raise VibeError(f"no template for family {family!r}; templates exist for {', '.join(TEMPLATES)}")
    return {path: render_file((folder / path).read_text(), context) for path in CODE_FILES}
