"""`agentjet models list|prepare`: the registered models and their offline cache."""

from __future__ import annotations

from typing import Annotated

import typer

from agentjet.cli.one_shot import fail, setup_logging
from agentjet.core.errors import AgentJetError

__all__ = ["models_app"]

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
