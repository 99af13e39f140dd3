"""Where CLI commands take a token from: `--token-file`, `AGENTJET_TOKEN`, a state dir's `token` file.

`--token VALUE` still works but warns: a value on the command line is visible to every user of
the machine in `ps` and lands in shell history. Shared by every command that talks to a server.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from agentjet.core.access.keys import read_token_file

__all__ = ["TokenFileOption", "TokenOption", "cli_token"]

TokenOption = Annotated[
    str | None,
    typer.Option(envvar="AGENTJET_TOKEN", show_envvar=True, help="token (prefer AGENTJET_TOKEN or --token-file)"),
]
TokenFileOption = Annotated[Path | None, typer.Option(help="file whose first line is the token")]


def cli_token(ctx: typer.Context, token: str | None, token_file: Path | None, state_dir: Path | None) -> str | None:
    """The token to send: `--token-file`, else `--token`/AGENTJET_TOKEN, else `<state_dir>/token`."""
    source = ctx.get_parameter_source("token")  # typer's own click: compare by name
    if token is not None and source is not None and source.name == "COMMANDLINE":
        typer.secho(
            "warning: --token on the command line is visible to other users in `ps`; "
            "use --token-file FILE or AGENTJET_TOKEN instead",
            err=True,
            fg=typer.colors.YELLOW,
        )
    if token_file is not None:
        return read_token_file(token_file)
    if token:
        return token
    if state_dir is not None and (state_dir / "token").is_file():
        return read_token_file(state_dir / "token")
    return None
