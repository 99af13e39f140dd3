"""Files only their owner may read (mode 600): admin tokens, server tokens handed to a child, the key secret."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["write_private_file"]


def write_private_file(path: Path, data: str | bytes) -> None:
    """Write `path` whole, created with mode 600 so it is never readable by others, not even for a moment; the
    chmod also tightens a file that existed with looser bits. Its folder is created when missing."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as handle:
        handle.write(data.encode() if isinstance(data, str) else data)
    os.chmod(path, 0o600)
