"""Files out of an LLM reply: fenced blocks that name their path, checked before anything is written.

The LLM is asked for one block per file, opened as ```` ```python path=client.py ````. Models drift,
so a block whose fence has no `path=` is still taken when the line just above it names a file
(`client.py`, `**reward.py**`, `### tests/test_task.py`, `File: dataset.py`). Whatever cannot be read
is returned as a plain-words problem for the next repair prompt, never raised: a bad reply costs a
round, not the run.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field

__all__ = ["ParsedReply", "parse_files", "syntax_problems"]

_OPEN = re.compile(r"^(?P<fence>`{3,}|~{3,})\s*(?P<info>.*)$")
_PATH_ATTR = re.compile(r"""(?:path|file|filename|title)\s*[=:]\s*["']?(?P<path>[^\s"']+)["']?""")
_HEADER = re.compile(r"^\W*(?:file\s*:\s*)?`?(?P<path>[\w./-]+\.(?:py|jsonl|json|md|txt|yaml))`?\W*$", re.IGNORECASE)


@dataclass
class ParsedReply:
    """The files found (path -> text), what could not be read (`problems`: the reply needs another
    round) and what was passed over (`notes`: blocks naming no file, repeated paths)."""

    files: dict[str, str] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def parse_files(reply: str) -> ParsedReply:
    """Every fenced block with a path; the last block wins when a path repeats."""
    parsed = ParsedReply()
    lines = reply.splitlines()
    i, previous = 0, ""
    while i < len(lines):
        opened = _OPEN.match(lines[i].strip())
        if opened is None:
            previous = lines[i] if lines[i].strip() else previous
            i += 1
            continue
        fence, info = opened.group("fence"), opened.group("info")
        end = next((j for j in range(i + 1, len(lines)) if _closes(lines[j], fence)), None)
        body = "\n".join(lines[i + 1 : end if end is not None else len(lines)])
        path = _path_of(info, previous)
        if path is None:
            parsed.notes.append(
                f"a fenced block opened by {lines[i].strip()!r} names no file (use ```python path=FILE)"
            )
        elif end is None:
            parsed.problems.append(f"the block for {path} is never closed (a line with {fence} must end it)")
        else:
            if path in parsed.files:
                parsed.notes.append(f"{path} came twice; the last block was kept")
            parsed.files[path] = body + "\n"
        i, previous = (end if end is not None else len(lines)) + 1, ""
    if not parsed.files and not parsed.problems:
        parsed.problems.append(
            "the reply holds no fenced code block naming a file (one ```python path=FILE block per file)"
        )
        parsed.problems += parsed.notes
    return parsed


def _closes(line: str, fence: str) -> bool:
    stripped = line.strip()
    return stripped.startswith(fence) and not stripped.strip(fence[0])


def _path_of(info: str, previous: str) -> str | None:
    attr = _PATH_ATTR.search(info)
    if attr:
        return attr.group("path").strip("`*")
    header = _HEADER.match(previous.strip())
    return header.group("path") if header else None


def syntax_problems(files: dict[str, str]) -> list[str]:
    """Python files that do not parse (ast only: nothing is executed on the host)."""
    problems = []
    for path, text in sorted(files.items()):
        if not path.endswith(".py"):
            continue
        try:
            ast.parse(text, filename=path)
        except SyntaxError as exc:
            problems.append(f"{path} line {exc.lineno}: SyntaxError: {exc.msg}")
        except (ValueError, RecursionError, MemoryError) as exc:  # NUL bytes, absurd nesting
            problems.append(f"{path} cannot be parsed: {type(exc).__name__}: {exc}")
    return problems
