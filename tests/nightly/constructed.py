"""A scratch copy of this checkout with a constructed history, for `agentjet nightly`'s own tests.

Commit 1 is the checkout as it is (the package, pyproject.toml, constraints.txt: the same
dependencies, so the running venv measures every commit); then `unchanged` commits that touch
only a notes file; then one that makes the server's request path burn a few milliseconds of
CPU per chat call; then one that silently changes the trainer's loss normalisation (a sum per
sample instead of the mean over trained tokens). `scripts/nightly_constructed_history.py` runs
the whole demonstration on it.
"""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

__all__ = ["LOSS_SUBJECT", "SLOW_SUBJECT", "Constructed", "build_history"]

ROOT = Path(__file__).resolve().parents[2]
SLOW_SUBJECT = "server: validate the chat request once more (slower request path)"
LOSS_SUBJECT = "trainer: tidy the loss reduction (wrong normalisation)"
_ROUTES = "agentjet/core/server/openai_routes.py"
_TRAINER = "agentjet/core/step/trainer.py"
_HANDLER = "    call = to_chat_call(body, default_max_tokens=request.app.state.runtime.settings.max_tokens_default)\n"
_BUSY = "    _deadline = time.process_time() + 0.004\n    while time.process_time() < _deadline:\n        pass\n"
_LOSS = "loss = torch.where(mask, per_token, 0.0).sum() / tokens"
_WRONG = "loss = torch.where(mask, per_token, 0.0).sum() / batch.token_ids.shape[0]"


@dataclass(frozen=True)
class Constructed:
    repo: Path
    base: str  # the first commit: ranges start after it
    slow: str
    loss: str
    shas: list[str]  # every commit, oldest first


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout.strip()


def _commit(repo: Path, subject: str) -> str:
    _git(repo, "add", "-A")
    _git(repo, "-c", "user.name=nightly", "-c", "user.email=nightly@localhost", "commit", "-q", "-m", subject)
    return _git(repo, "rev-parse", "HEAD")


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    if text.count(old) != 1:
        raise RuntimeError(f"{path}: expected one {old.strip()!r}")
    path.write_text(text.replace(old, new))


def build_history(target: Path, *, unchanged: int = 5) -> Constructed:
    """The scratch repo at `target`: base, `unchanged` no-op commits, the slowdown, the loss change."""
    target.mkdir(parents=True)
    shutil.copytree(ROOT / "agentjet", target / "agentjet", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    for name in ("pyproject.toml", "constraints.txt", "Makefile"):
        shutil.copy(ROOT / name, target / name)
    (target / ".gitignore").write_text("__pycache__/\n*.pyc\n")
    (target / "NOTES.md").write_text("# notes\n")
    _git(target, "init", "-q", "-b", "main")
    shas = [_commit(target, "base: the checkout under test")]
    for n in range(unchanged):
        with (target / "NOTES.md").open("a") as notes:
            notes.write(f"- unchanged commit {n + 1}\n")
        shas.append(_commit(target, f"docs: note {n + 1} (no code change)"))
    _edit(target / _ROUTES, _HANDLER, _BUSY + _HANDLER)
    shas.append(_commit(target, SLOW_SUBJECT))
    _edit(target / _TRAINER, _LOSS, _WRONG)
    shas.append(_commit(target, LOSS_SUBJECT))
    return Constructed(target, shas[0], shas[-2], shas[-1], shas)
