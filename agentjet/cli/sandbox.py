"""`agentjet sandbox ...`: build the sandbox image (and, later, check backends and run commands)."""

from __future__ import annotations

from typing import Annotated

import typer

from agentjet.sandbox.errors import SandboxError

sandbox_app = typer.Typer(help="Sandboxes for generated and untrusted code (Docker, bubblewrap).", no_args_is_help=True)


def _fail(exc: Exception) -> typer.Exit:
    typer.secho(f"error: {exc}", fg=typer.colors.RED, err=True)
    return typer.Exit(2)


@sandbox_app.command("build")
def build(
    force: Annotated[bool, typer.Option("--force", help="rebuild the rootfs and re-import even if up to date")] = False,
    no_docker: Annotated[bool, typer.Option("--no-docker", help="build the rootfs only (for bwrap)")] = False,
) -> None:
    """Build the sandbox rootfs (debootstrap + pip wheels, root) and import it into the engine, unless up to date."""
    from agentjet.sandbox.image import build as build_image

    try:
        ref = build_image(lambda line: typer.echo(line, err=True), docker=not no_docker, force=force)
    except SandboxError as exc:
        raise _fail(exc) from exc
    typer.echo(ref.tag)
