"""Render: the shared skeletons and each family's pieces compose into whole template files, strictly (a
missing, misspelt or misplaced piece is an error, never a silent default), and the package ships them."""

from __future__ import annotations

import tomllib
from pathlib import Path, PurePosixPath

import pytest

from agentjet.vibe.errors import VibeError
from agentjet.vibe.generate.contract import CODE_FILES
from agentjet.vibe.generate.render import TEMPLATE_ROOT, TEMPLATES, fill_skeleton, parse_pieces, render_template

PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"


def test_pieces_run_to_the_next_marker_without_trailing_blank_lines() -> None:
    text = "a note for the reader\n@@ block\ndef f() -> int:\n\n    return 1\n\n\n@@ empty\n\n@@ word\nVibeWord\n"
    assert parse_pieces(text) == {"block": "def f() -> int:\n\n    return 1", "empty": "", "word": "VibeWord"}
    with pytest.raises(VibeError, match="'word' is given twice"):
        parse_pieces("@@ word\na\n@@ word\nb\n")


def test_a_slot_alone_on_its_line_takes_a_block_and_one_inside_a_line_takes_a_word() -> None:
    skeleton = "class ${cls}:\n${body}\n${extra}\nEND = '${family}'\n"
    defaults = {"family": "word", "extra": "", "body": "    pass"}  # an empty piece drops its line
    pieces = {"cls": "VibeWord", "body": "    x = 1\n\n    y = '${family}'"}  # a block's own slots are filled too
    assert fill_skeleton(skeleton, pieces, defaults) == "class VibeWord:\n    x = 1\n\n    y = 'word'\nEND = 'word'\n"
    assert (
        fill_skeleton(skeleton, {"cls": "A", "extra": "# more"}, defaults)
        == "class A:\n    pass\n# more\nEND = 'word'\n"
    )


@pytest.mark.parametrize(
    ("pieces", "problem"),
    [
        ({"name": "x"}, r"no piece fills the slot \$\{body\}"),
        ({"name": "x", "body": "a", "boddy": "b"}, "the pieces boddy fill no slot"),
        ({"name": "two\nlines", "body": "a"}, "'name' has several lines"),
    ],
)
def test_a_missing_misspelt_or_misplaced_piece_is_an_error(pieces: dict[str, str], problem: str) -> None:
    with pytest.raises(VibeError, match=problem):
        fill_skeleton("NAME = '${name}'\n${body}\n", pieces, {})


@pytest.mark.parametrize("family", TEMPLATES)
def test_each_workspace_file_has_one_template_per_family(family: str) -> None:
    """A whole file or pieces of the shared skeleton, never both: a stray pieces file would be ignored."""
    folder = TEMPLATE_ROOT / family
    for path in CODE_FILES:
        whole, pieces = (folder / path).is_file(), (folder / f"{path}.pieces").is_file()
        assert whole != pieces, (family, path)
        assert whole or (TEMPLATE_ROOT / "_shared" / f"{path}.tmpl").is_file(), (family, path)


@pytest.mark.parametrize("family", TEMPLATES)
def test_every_composed_template_is_plain_python(family: str) -> None:
    for path, text in render_template(family, {}).items():
        compile(text, path, "exec")  # a syntax error fails the test
        assert "${" not in text and "\n@@ " not in text, path


def test_the_package_ships_every_template_file() -> None:
    globs = tomllib.loads(PYPROJECT.read_text())["tool"]["setuptools"]["package-data"]["agentjet.vibe.generate"]
    files = [p for p in TEMPLATE_ROOT.rglob("*") if p.is_file() and "__pycache__" not in p.parts]
    assert {p.suffix for p in files} >= {".py", ".pieces", ".tmpl"}
    for file in files:
        relative = PurePosixPath(file.relative_to(TEMPLATE_ROOT.parent).as_posix())
        assert any(relative.match(glob) for glob in globs), f"pyproject.toml's package-data misses {relative}"
