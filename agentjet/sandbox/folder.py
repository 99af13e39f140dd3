"""A folder's files for `Sandbox.run(files=...)`: what a client file needs beside it, nothing more.

A client file imports its sibling modules and reads `data/` next to it, so a sandboxed run
stages the client's whole folder; version control, virtual environments and caches stay out,
and a folder too big for the sandbox's work dir is refused before it is read into memory.
"""

from __future__ import annotations

import os
from collections.abc import Set
from pathlib import Path

from agentjet.sandbox.errors import SandboxError
from agentjet.sandbox.limits import Limits
from agentjet.sandbox.verdict import human_size

__all__ = ["NEVER_STAGED", "SECRET_NAMES", "folder_files"]

NEVER_STAGED = frozenset(
    {".git", ".hg", ".svn", ".venv", "venv", "node_modules", "__pycache__", ".pytest_cache", ".mypy_cache"}
)
# a server's token and key files (`agentjet server start --state-dir` writes these) and dotenv files
SECRET_NAMES = frozenset({"token", "secret", ".env"})


def folder_files(
    root: Path,
    *,
    skip_dirs: Set[str] = NEVER_STAGED,
    skip_names: Set[str] = SECRET_NAMES,
    max_bytes: int = Limits().workdir_bytes,
) -> dict[str, bytes]:
    """Relative POSIX path -> content of every regular file under `root`, in sorted order.

    Directories named in `skip_dirs` are left out at any depth, files named in `skip_names` (by
    default: token, secret and dotenv files) too; symlinks are never followed. SandboxError when
    the files total more than `max_bytes`."""
    if not root.is_dir():
        raise SandboxError(f"{root} is not a directory")
    found: list[Path] = []
    total = 0
    for folder, dirs, names in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in skip_dirs and not os.path.islink(os.path.join(folder, d)))
        for name in names:
            path = Path(folder, name)
            if name in skip_names or path.is_symlink() or not path.is_file():
                continue
            total += path.stat().st_size
            if total > max_bytes:
                raise SandboxError(
                    f"{root} holds more than {human_size(max_bytes)} of files to stage into the sandbox;"
                    " put the client and what it needs in a folder of their own"
                )
            found.append(path)
    return {path.relative_to(root).as_posix(): path.read_bytes() for path in sorted(found)}
