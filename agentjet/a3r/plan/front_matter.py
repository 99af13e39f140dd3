"""Markdown with YAML front matter -> (data, body), keeping the YAML nodes to point errors at lines.

Lines are 1-based lines of the whole file (the opening `---` is line 1), so a message such as
`plan.md:9: search_space.lr.low: ...` opens in an editor at the right place.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from agentjet.a3r.errors import PlanError

__all__ = ["NO_FRONT_MATTER", "FrontMatter", "has_front_matter", "split_front_matter"]

NO_FRONT_MATTER = (
    "the plan has no YAML front matter (a block between --- lines at the top): add one (`agentjet campaign "
    "examples` lists plans to copy; the format: campaigns/README.md in the source), or let the LLM planner "
    "write it from the prose by configuring an LLM "
    "(--llm MODEL_OR_URL or the AGENTJET_CAMPAIGN_LLM env var)"
)
_FENCE = "---"
_CLOSERS = ("---", "...")


class _PlanLoader(yaml.SafeLoader):  # type: ignore[misc]  # PyYAML ships no type hints
    """SafeLoader that also reads `1e-5` as a float (YAML 1.2 does; PyYAML's 1.1 rules say string)."""


_FLOAT = re.compile(r"^[-+]?(?:[0-9][0-9_]*(?:\.[0-9_]*)?|\.[0-9_]+)(?:[eE][-+]?[0-9]+)?$|^[-+]?\.(?:inf|Inf|INF)$")
_PlanLoader.add_implicit_resolver("tag:yaml.org,2002:float", _FLOAT, list("-+0123456789."))
# ints stay ints: the int resolver was added to SafeLoader first and matches before this one


@dataclass(frozen=True)
class FrontMatter:
    """The parsed front matter, its YAML node tree, and the markdown after it."""

    data: dict[str, Any]
    body: str
    root: Node | None
    first_line: int  # file line of the first YAML line (the line after the opening fence)

    def line_of(self, loc: Sequence[str | int]) -> int:
        """The file line of the deepest key of `loc` present in the YAML; parts absent are skipped
        (pydantic adds union tags such as `str` to its error paths), else the opening fence."""
        node, line = self.root, None
        for part in loc:
            if isinstance(node, MappingNode):
                for key, value in node.value:
                    if isinstance(key, ScalarNode) and key.value == str(part):
                        node, line = value, key.start_mark.line
                        break
            elif isinstance(node, SequenceNode) and isinstance(part, int) and 0 <= part < len(node.value):
                node = node.value[part]
                line = node.start_mark.line
        return self.first_line - 1 if line is None else line + self.first_line


def has_front_matter(text: str) -> bool:
    """Whether the text opens with a `---` fence (leading blank lines allowed)."""
    return text.lstrip("\ufeff").lstrip("\r\n\t ").startswith(_FENCE + "\n") or text.strip() == _FENCE


def split_front_matter(text: str, *, path: str | None = None) -> FrontMatter:
    """Parse the front matter (PlanError with the line on bad YAML, duplicate keys, a non-mapping)."""
    lines = text.lstrip("\ufeff").splitlines()
    start = next((i for i, line in enumerate(lines) if line.strip()), None)
    if start is None or lines[start].rstrip() != _FENCE:
        raise PlanError(NO_FRONT_MATTER, path=path, line=1)
    end = next((i for i in range(start + 1, len(lines)) if lines[i].rstrip() in _CLOSERS), None)
    if end is None:
        message = "the front matter opened here is never closed: add a line with --- after it"
        raise PlanError(message, path=path, line=start + 1)
    first_line = start + 2
    yaml_text = "\n".join(lines[start + 1 : end]) + "\n"
    root, data = _load(yaml_text, path=path, first_line=first_line)
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise PlanError(
            f"the front matter must be a mapping of keys (name:, task:, ...), got a {type(data).__name__}",
            path=path,
            line=first_line,
        )
    _refuse_duplicates(root, path=path, first_line=first_line)
    body = "\n".join(lines[end + 1 :]).strip("\n")
    return FrontMatter(data, body + "\n" if body else "", root, first_line)


def _load(yaml_text: str, *, path: str | None, first_line: int) -> tuple[Node | None, Any]:
    loader = _PlanLoader(yaml_text)
    try:
        root = loader.get_single_node()
        data = loader.construct_document(root) if root is not None else None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = first_line + mark.line if mark is not None else first_line
        what = " ".join(str(p) for p in (exc.context, exc.problem) if p)
        raise PlanError(f"invalid YAML in the front matter: {what}", path=path, line=line) from exc
    except yaml.YAMLError as exc:
        raise PlanError(f"invalid YAML in the front matter: {exc}", path=path, line=first_line) from exc
    finally:
        loader.dispose()
    return root, data


def _refuse_duplicates(node: Node | None, *, path: str | None, first_line: int) -> None:
    """PyYAML keeps the last of two equal keys silently; a plan's typo should not vanish that way."""
    if isinstance(node, MappingNode):
        seen: set[str] = set()
        for key, value in node.value:
            if isinstance(key, ScalarNode):
                if key.value in seen:
                    line = key.start_mark.line + first_line
                    raise PlanError(f"key {key.value!r} appears twice", path=path, line=line)
                seen.add(key.value)
            _refuse_duplicates(value, path=path, first_line=first_line)
    elif isinstance(node, SequenceNode):
        for item in node.value:
            _refuse_duplicates(item, path=path, first_line=first_line)
