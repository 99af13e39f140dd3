"""`agentjet deploy image|compose`: the swarm server as a container image, and a compose example."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from agentjet.cli.one_shot import fail
from agentjet.sandbox.errors import SandboxError

__all__ = ["deploy_app"]

deploy_app = typer.Typer(
    help="Run the swarm server in containers: its image, and a compose example.", no_args_is_help=True
)


@deploy_app.command("image")
def deploy_image(
    tag: Annotated[str | None, typer.Option(help="the image's tag (default agentjet/server:VERSION)")] = None,
    base: Annotated[
        str | None,
        typer.Option(help="a Python 3.11 base image in the engine (default: the sandbox image, built when missing)"),
    ] = None,
    wheel: Annotated[
        Path | None, typer.Option(help="the agentjet wheel to install (default: built from this checkout)")
    ] = None,
    gpu: Annotated[
        bool, typer.Option("--gpu", help="PyTorch's CUDA build from PyPI instead of this machine's torch (GPU hosts)")
    ] = False,
) -> None:
    """Build the server image without a registry (as root, with the engine of `sandboxes/engine.sh`); print its tag."""
    from agentjet.deploy.image import build_server_image

    try:
        image = build_server_image(tag=tag, base=base, wheel=wheel, gpu=gpu, progress=lambda s: typer.echo(s, err=True))
    except SandboxError as exc:
        raise fail(exc) from exc
    typer.echo(image.tag)


@deploy_app.command("compose")
def deploy_compose(
    out: Annotated[Path, typer.Option(help="folder for compose.yaml, compose.gpu.yaml, train.yaml and .env")],
    image: Annotated[str | None, typer.Option(help="server image (default agentjet/server:VERSION)")] = None,
    model: Annotated[str, typer.Option(help="the model the server trains")] = "tiny",
    task: Annotated[str, typer.Option(help="the task family the clients play")] = "arithmetic",
    clients: Annotated[int, typer.Option(min=1, help="client containers")] = 2,
    episodes: Annotated[int, typer.Option(min=1, help="train episodes each client plays")] = 64,
    force: Annotated[bool, typer.Option("--force", help="replace files already there")] = False,
) -> None:
    """Write the compose example: a server and N sandboxed clients on one machine, no network (docs/deploy.md)."""
    import agentjet
    from agentjet.deploy.compose import ComposeSettings, write_compose

    chosen = image or f"agentjet/server:{agentjet.__version__}"
    settings = ComposeSettings(image=chosen, model=model, task=task, clients=clients, episodes=episodes)
    try:
        written = write_compose(out, settings, force=force)
    except SandboxError as exc:
        raise fail(exc) from exc
    for path in written:
        typer.echo(path)
    typer.echo(f"then: cd {out} && docker compose up   (docker-compose 1.29+ works too)", err=True)
