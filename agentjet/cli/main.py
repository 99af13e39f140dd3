"""`agentjet`: the root app, assembled from one module per command group (see the package docstring)."""

from __future__ import annotations

import os
import sys
from typing import Annotated

import typer
from typer._click.exceptions import ClickException, NoArgsIsHelpError, UsageError  # typer's own Click

from agentjet.cli.bench import bench_app
from agentjet.cli.campaign import campaign_app
from agentjet.cli.chat import chat_command
from agentjet.cli.client import client_app
from agentjet.cli.demo import demo_command
from agentjet.cli.deploy import deploy_app
from agentjet.cli.models import export_command, models_app
from agentjet.cli.nightly import nightly_app
from agentjet.cli.sandbox import sandbox_app
from agentjet.cli.server import server_app
from agentjet.cli.vibe import vibe_command

__all__ = ["app", "main"]

app = typer.Typer(help="AgentJet: agentic RL training servers, clients and research tools.", no_args_is_help=True)


def _print_version(given: bool) -> None:
    if given:
        from agentjet import __version__

        typer.echo(f"agentjet {__version__}")
        raise typer.Exit(0)


@app.callback()
def _root(
    version: Annotated[
        bool, typer.Option("--version", callback=_print_version, is_eager=True, help="print the version and exit")
    ] = False,
) -> None:
    """AgentJet: agentic RL training servers, clients and research tools."""


app.add_typer(server_app, name="server")
app.add_typer(models_app, name="models")
app.add_typer(bench_app, name="bench")
app.add_typer(client_app, name="client")
app.add_typer(sandbox_app, name="sandbox")
app.add_typer(campaign_app, name="campaign")
app.add_typer(nightly_app, name="nightly")
app.add_typer(deploy_app, name="deploy")
app.command("vibe")(vibe_command)
app.command("demo")(demo_command)
app.command("chat")(chat_command)
app.command("export")(export_command)


def main(prog_name: str | None = None) -> None:
    """The `agentjet` command: the app, with a usage mistake ("--steps 0", "--stepz 3", an option without its value)
    said in one line and exit 2, instead of Click's boxed usage text."""
    try:
        code = app(prog_name=prog_name, standalone_mode=False)
    except NoArgsIsHelpError as exc:  # `agentjet server`: the group's help, as before
        exc.show()
        raise SystemExit(exc.exit_code) from None
    except UsageError as exc:
        where = exc.ctx.command_path if exc.ctx is not None else "agentjet"
        message = " ".join(exc.format_message().split())
        typer.secho(f"error: {message} (see {where} --help)", fg=typer.colors.RED, err=True)
        raise SystemExit(exc.exit_code) from None
    except ClickException as exc:
        exc.show()
        raise SystemExit(exc.exit_code) from None
    except typer.Abort:
        typer.echo("Aborted!", err=True)
        raise SystemExit(1) from None
    except BrokenPipeError:  # the reader went away (`agentjet ... | head`): nothing more to say, as Click does
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - stays open until the interpreter exits
        raise SystemExit(1) from None
    raise SystemExit(code if isinstance(code, int) else 0)


if __name__ == "__main__":  # `python -m agentjet.cli.main ...`: how our subprocesses and sandboxes start the CLI
    main()
