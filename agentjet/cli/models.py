"""`agentjet models list|prepare` and `agentjet export`: models into the offline cache, trained steps out of it."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from agentjet.cli.one_shot import fail, setup_logging
from agentjet.core.errors import AgentJetError

__all__ = ["export_command", "models_app"]

models_app = typer.Typer(help="List and prepare models (offline).", no_args_is_help=True)


@models_app.command("list")
def models_list() -> None:
    """Registered models, whether they are prepared, and where."""
    from agentjet.core.models import MODELS, cache_dir, is_prepared

    for spec in MODELS.values():
        state = "prepared" if is_prepared(spec.name) else "not prepared"
        typer.echo(f"{spec.name:<14} {state:<13} {cache_dir() / spec.name}  {spec.description}")
    typer.echo("(any local Hugging Face model folder also works: --model /path/to/folder)")


@models_app.command("prepare")
def models_prepare(
    name: Annotated[str, typer.Argument(help="registered model name")],
    force: Annotated[bool, typer.Option("--force", help="rebuild even if cached")] = False,
) -> None:
    """Build a registered model into the local cache (offline)."""
    from agentjet.core.models import prepare_model

    setup_logging()
    try:
        path = prepare_model(name, force=force)
    except AgentJetError as exc:
        raise fail(exc) from exc
    typer.echo(str(path))


def export_command(
    state_dir: Annotated[Path, typer.Argument(metavar="STATE_DIR", help="a server's state dir (--state-dir)")],
    out: Annotated[Path, typer.Option("--out", help="a new folder to write")],
    step: Annotated[int | None, typer.Option("--step", min=1, help="the step to export (default: the newest)")] = None,
    merged: Annotated[
        bool, typer.Option("--merged", help="merge the adapter into the base: a plain Hugging Face model folder")
    ] = False,
    gguf: Annotated[
        bool, typer.Option("--gguf", help="also write model-TYPE.gguf for llama.cpp (implies --merged)")
    ] = False,
    gguf_type: Annotated[str, typer.Option("--gguf-type", help="GGUF weights: f32 (exact) or f16")] = "f32",
    base: Annotated[
        str | None, typer.Option("--base", help="the base model (name or folder) if not the one the adapter names")
    ] = None,
) -> None:
    """Export a trained step: the PEFT adapter, or merged into its base (transformers, vLLM), or GGUF (llama.cpp)."""
    from agentjet.core.export.gguf_file import GGUF_TYPES
    from agentjet.core.export.weights import export_step, find_step_weights

    setup_logging()
    if gguf_type not in GGUF_TYPES:
        raise fail(ValueError(f"--gguf-type {gguf_type}: one of {', '.join(GGUF_TYPES)}"))
    try:
        weights = find_step_weights(state_dir, step)
        kind = "GGUF and merged model" if gguf else "merged model" if merged else "adapter"
        typer.echo(f"exporting step {weights.step} ({weights.folder}) as {kind} -> {out}", err=True)
        written = export_step(weights, out, merged=merged, gguf_type=gguf_type if gguf else None, base=base)
    except (AgentJetError, OSError) as exc:
        raise fail(exc) from exc
    for name in written:
        typer.echo(str(out / name))
