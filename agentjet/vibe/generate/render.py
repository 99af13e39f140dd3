"""Built-in task templates -> workspace files, filled in from the task spec.

A family's template of a workspace file (`agentjet/vibe/generate/templates/<family>/`) is either the
whole file (`reward.py`) or, where the families share most of it, that family's pieces
(`client.py.pieces`) of one skeleton in `templates/_shared/` (`client.py.tmpl`): each `${NAME}`
slot of the skeleton takes the piece NAME, from the family's pieces or else the skeleton's default
pieces (`_shared/client.py.pieces`). So the shared code has one copy here while every rendered
workspace stays a self-contained folder of plain files.

The composed template is a working workspace for the family with defaults: valid Python that runs as
it is. A line ending in `# vibe: KEY` has its value replaced by the spec's value at KEY (`name`,
`params`, `dataset.train_items`, `params.penalty`, ...); a key the spec lacks keeps the template's
default. So what a person reads in the workspace is plain code with the plan's numbers in it, not a
template language.
"""

from __future__ import annotations

import pprint
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from agentjet.vibe.errors import VibeError
from agentjet.vibe.generate.contract import CODE_FILES

__all__ = ["TEMPLATES", "TEMPLATE_ROOT", "fill_skeleton", "parse_pieces", "render_file", "render_template"]

TEMPLATE_ROOT = Path(__file__).resolve().parent / "templates"
TEMPLATES = ("countdown", "arithmetic", "tool_use", "werewolves", "word")  # every built-in family
_SHARED = TEMPLATE_ROOT / "_shared"  # the skeletons (`<path>.tmpl`) and their default pieces (`<path>.pieces`)
_MARKED = re.compile(  # `NAME = value  # vibe: key` or `NAME: type = value  # vibe: key`
    r"^(?P<lhs>\s*[A-Za-z_]\w*(?:\s*:\s*[^=]+?)?\s*=\s*)(?P<value>.+?)\s*#\s*vibe:\s*(?P<key>[\w.]+)\s*$"
)
_PIECE = re.compile(r"^@@ (?P<name>\w+)\s*$")  # starts a piece in a `.pieces` file
_SLOT = re.compile(r"\$\{(?P<name>\w+)\}")  # `${NAME}` in a skeleton
_MISSING = object()


def parse_pieces(text: str) -> dict[str, str]:
    """The pieces of a `.pieces` file: a line `@@ NAME` starts the piece NAME, which runs to the next
    such line; its trailing blank lines are dropped, so blank lines may part the pieces. Text before
    the first piece is a note for the reader."""
    pieces: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in text.splitlines():
        match = _PIECE.match(line)
        if match is None:
            if current is not None:
                current.append(line)
        elif match.group("name") in pieces:
            raise VibeError(f"the piece {match.group('name')!r} is given twice")
        else:
            current = pieces[match.group("name")] = []
    return {name: "\n".join(lines).rstrip("\n") for name, lines in pieces.items()}


def fill_skeleton(skeleton: str, pieces: Mapping[str, str], defaults: Mapping[str, str]) -> str:
    """The skeleton with each `${NAME}` slot replaced by the piece NAME of `pieces`, else of `defaults`.

    A slot alone on its line takes a piece of any number of lines (an empty piece drops the line); a
    slot inside a line takes a one-line piece, also inside an inserted block. A piece of `pieces` that
    fills no slot is an error: a misspelt name must not fall back to a default."""
    chosen = {**defaults, **pieces}
    used: set[str] = set()

    def piece(name: str) -> str:
        if name not in chosen:
            raise VibeError(f"no piece fills the slot ${{{name}}}")
        used.add(name)
        return chosen[name]

    def inline(match: re.Match[str]) -> str:
        text = piece(match.group("name"))
        if "\n" in text:
            raise VibeError(f"the piece {match.group('name')!r} has several lines: its slot must stand alone on a line")
        return text

    lines: list[str] = []
    for line in skeleton.splitlines():
        alone = _SLOT.fullmatch(line)
        block = piece(alone.group("name")).splitlines() if alone else [line]
        lines.extend(_SLOT.sub(inline, each) for each in block)
    if unused := sorted(set(pieces) - used):
        raise VibeError(f"the pieces {', '.join(unused)} fill no slot")
    return "\n".join(lines) + "\n"


def _template_text(family: str, path: str) -> str:
    """The family's template of one workspace file: its own whole file, or the skeleton with its pieces."""
    folder = TEMPLATE_ROOT / family
    if (folder / path).is_file():
        return (folder / path).read_text()
    shared_pieces = _SHARED / f"{path}.pieces"
    defaults = {"family": family, **(parse_pieces(shared_pieces.read_text()) if shared_pieces.is_file() else {})}
    try:
        pieces = parse_pieces((folder / f"{path}.pieces").read_text())
        return fill_skeleton((_SHARED / f"{path}.tmpl").read_text(), pieces, defaults)
    except VibeError as exc:
        raise VibeError(f"the {family} template of {path} ({family}/{path}.pieces): {exc}") from exc


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
    return {path: render_file(_template_text(family, path), context) for path in CODE_FILES}
