"""The compose example written out: a server and N sandboxed clients on one machine (`files/compose.yaml`).

`write_compose` copies compose.yaml, compose.gpu.yaml and train.yaml into a folder and writes
`.env` with the choices (image, model, task, clients, episodes each), which compose reads for
`${...}` in compose.yaml. Existing files are only replaced with `force`, so an edited train.yaml
is never lost to a second call.
"""

from __future__ import annotations

import re
import shutil
from dataclasses import dataclass
from pathlib import Path

from agentjet.deploy.image import files_dir
from agentjet.sandbox.errors import SandboxError

__all__ = ["COMPOSE_FILES", "ComposeSettings", "write_compose"]

COMPOSE_FILES = ("compose.yaml", "compose.gpu.yaml", "train.yaml")
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_./:@+-]*$")  # no spaces, quotes or `$`: safe in .env and compose


@dataclass(frozen=True)
class ComposeSettings:
    image: str
    model: str = "tiny"
    task: str = "arithmetic"
    clients: int = 2
    episodes: int = 64  # train episodes each client plays before it exits

    def env_lines(self) -> list[str]:
        """The `.env` lines; a value compose could misread is refused first."""
        for field, value in (("image", self.image), ("model", self.model), ("task", self.task)):
            if not _NAME.match(value):
                raise SandboxError(f"{field} {value!r}: use letters, digits and . _ / : @ + - only")
        if self.clients < 1 or self.episodes < 1:
            raise SandboxError(f"clients and episodes must be at least 1, got {self.clients} and {self.episodes}")
        return [
            f"AGENTJET_IMAGE={self.image}",
            f"AGENTJET_MODEL={self.model}",
            f"AGENTJET_TASK={self.task}",
            f"AGENTJET_CLIENTS={self.clients}",
            f"AGENTJET_EPISODES={self.episodes}",
        ]


def write_compose(out: Path, settings: ComposeSettings, *, force: bool = False) -> list[Path]:
    """compose.yaml, compose.gpu.yaml, train.yaml and .env in `out`; the paths written."""
    lines = settings.env_lines()
    targets = [out / name for name in (*COMPOSE_FILES, ".env")]
    existing = [path.name for path in targets if path.exists()]
    if existing and not force:
        raise SandboxError(f"{out} already has {', '.join(existing)}; pass --force to replace them")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:  # `out` or a folder above it is a file, or not writable
        reason = f"--out {out}: cannot make that folder ({exc.strerror}); give a folder for the files"
        raise SandboxError(reason) from exc
    for name in COMPOSE_FILES:
        shutil.copyfile(files_dir() / name, out / name)
    (out / ".env").write_text("# read by docker compose for ${...} in compose.yaml\n" + "\n".join(lines) + "\n")
    return targets
