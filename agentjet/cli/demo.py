"""`agentjet demo`: the swarm demo's flags; the demo itself (server, clients, table) is demo_run.py."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from agentjet.cli.one_shot import run_one_shot

__all__ = ["demo_command"]


def demo_command(
    model: Annotated[str, typer.Option(help="policy model")] = "smollm2-135m",
    episodes: Annotated[int, typer.Option(help="episodes to run")] = 8,
    concurrency: Annotated[int, typer.Option(help="clients running at once")] = 4,
    state_dir: Annotated[Path | None, typer.Option(help="server state dir (default: a temp dir)")] = None,
) -> None:
    """The swarm demo: a server on loopback and concurrent agent clients; prints what was captured."""
    from agentjet.cli.demo_run import run_demo

    run_one_shot(
        lambda: run_demo(model=model, episodes=episodes, concurrency=concurrency, state_dir=state_dir),
        quiet_tokenizers=True,
    )
