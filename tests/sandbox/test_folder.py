"""`folder_files`: what a sandboxed client's folder stages, and what it never does."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentjet.sandbox import SandboxError
from agentjet.sandbox.folder import folder_files


def _tree(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)


def test_a_folder_stages_code_and_data_but_not_vcs_venvs_caches_or_secrets(tmp_path: Path) -> None:
    _tree(tmp_path, {
        "client.py": "import helper", "helper.py": "X = 1", "data/train.jsonl": "{}", "pkg/sub/mod.py": "",
        ".git/HEAD": "ref", ".venv/bin/python": "", "pkg/__pycache__/m.pyc": "", "pkg/.git/x": "",
        "token": "secret-token", "state/secret": "key", ".env": "API_KEY=1",
    })  # fmt: skip
    (tmp_path / "outside.txt").symlink_to("/etc/hostname")
    (tmp_path / "linked").symlink_to(tmp_path / "data", target_is_directory=True)

    files = folder_files(tmp_path)

    assert list(files) == ["client.py", "data/train.jsonl", "helper.py", "pkg/sub/mod.py"]
    assert files["client.py"] == b"import helper"


def test_callers_add_their_own_skipped_dirs_and_names(tmp_path: Path) -> None:
    _tree(tmp_path, {"client.py": "", "state/journal.sqlite": "", "report.md": "", "data/x": ""})
    files = folder_files(tmp_path, skip_dirs={"state"}, skip_names={"report.md"})
    assert list(files) == ["client.py", "data/x"]


def test_a_folder_too_big_for_the_sandbox_is_refused_with_what_to_do(tmp_path: Path) -> None:
    _tree(tmp_path, {"client.py": "x" * 600, "big/blob.bin": "y" * 600})
    with pytest.raises(SandboxError, match=r"more than 1000 B .* folder of their own"):
        folder_files(tmp_path, max_bytes=1000)
    with pytest.raises(SandboxError, match="is not a directory"):
        folder_files(tmp_path / "client.py")
