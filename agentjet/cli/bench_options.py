"""The flags several `agentjet bench ...` commands share, and the checks and defaults of their values."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from agentjet.cli.one_shot import fail

__all__ = [
    "GroupsOption",
    "JsonOption",
    "PolicyModelOption",
    "VllmPythonOption",
    "checked_backends",
    "vllm_python_or_venv",
]

JsonOption = Annotated[bool, typer.Option("--json", help="print only the JSON result")]
PolicyModelOption = Annotated[str, typer.Option(help="policy model: smollm2-135m, tiny or an HF folder")]
GroupsOption = Annotated[int, typer.Option(min=1, help="GRPO groups (tasks) of 8 episodes in the batch")]
VllmPythonOption = Annotated[Path | None, typer.Option(help="python of the vLLM venv (--backend vllm)")]


def vllm_python_or_venv(given: Path | None) -> Path:
    """The vLLM venv's python: `--vllm-python`, else `.venv-vllm` here."""
    return given or Path(".venv-vllm/bin/python").absolute()


def checked_backends(given: list[str] | None, python: Path | None) -> tuple[tuple[str, ...], Path | None]:
    """`--backend` values checked (default transformers); vllm's python defaults to `.venv-vllm`."""
    chosen = tuple(dict.fromkeys(given or ["transformers"]))
    if unknown := sorted(set(chosen) - {"transformers", "vllm"}):
        raise fail(ValueError(f"--backend {', '.join(unknown)}: the backends are transformers, vllm"))
    return chosen, vllm_python_or_venv(python) if "vllm" in chosen else python
