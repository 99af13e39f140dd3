"""The example plans shipped with the package: found by name, so an installed wheel runs them without a checkout."""

from __future__ import annotations

from pathlib import Path

from agentjet.a3r.errors import CampaignError

__all__ = ["EXAMPLES_DIR", "example_names", "example_summary", "resolve_plan"]

EXAMPLES_DIR = Path(__file__).resolve().parent / "example_plans"


def example_names() -> list[str]:
    """The shipped plans' names (file stems), sorted."""
    return sorted(p.stem for p in EXAMPLES_DIR.glob("*.md"))


def example_summary(name: str) -> str:
    """The first sentence of the comment that opens an example's front matter: what it is for."""
    comment: list[str] = []
    for line in (EXAMPLES_DIR / f"{name}.md").read_text(encoding="utf-8").splitlines()[1:]:
        if not line.startswith("#"):
            break
        comment.append(line.lstrip("#").strip())
    text = " ".join(comment)
    return text.split(". ")[0].rstrip(".") if text else ""


def resolve_plan(given: str | Path) -> Path:
    """A plan file that exists, else the shipped example of that name (`quick-tiny` or `quick-tiny.md`)."""
    path = Path(given)
    if path.is_file():
        return path
    name = path.name.removesuffix(".md")
    if path.parent == Path(".") or path.parent == Path("campaigns"):  # a bare name, or the old checkout path
        shipped = EXAMPLES_DIR / f"{name}.md"
        if shipped.is_file():
            return shipped
    if path.exists():
        raise CampaignError(f"{path} is not a file: give a plan (markdown with YAML front matter)")
    raise CampaignError(
        f"no plan file {path}, and no example plan of that name (examples: {', '.join(example_names())})"
    )
