"""`agentjet chat`: the chat web page on loopback (`--terminal`: a terminal app), over the policies named."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from agentjet.cli.one_shot import fail, setup_logging

if TYPE_CHECKING:
    from agentjet.chat.assistant import Assistant
    from agentjet.chat.assistant_llm import LLMAssistant

__all__ = ["chat_command"]

_DEFAULT_LOGIN_FILE = Path("~/.cache/agentjet/chat/login-token")


def chat_command(
    server: Annotated[
        list[str] | None, typer.Option(help="a policy to talk to: NAME=URL of a live swarm server (repeatable)")
    ] = None,
    checkpoint: Annotated[
        list[str] | None,
        typer.Option(
            help="NAME=STATE_DIR[@STEP]: a checkpoint of a server's state dir (default its latest), served here"
        ),
    ] = None,
    base: Annotated[
        list[str] | None, typer.Option(help="NAME: the untrained --model, served here (repeatable)")
    ] = None,
    model: Annotated[str, typer.Option(help="the model --base and --checkpoint policies run on")] = "smollm2-135m",
    token_file: Annotated[
        list[str] | None,
        typer.Option(help="NAME=FILE: the token of server NAME (default: AGENTJET_TOKEN for every server)"),
    ] = None,
    host: Annotated[str, typer.Option(help="interface to bind (keep loopback unless you mean it)")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="TCP port of the page")] = 8720,
    login_token_file: Annotated[
        Path, typer.Option(help="the page's login token (created, mode 0600, when missing)")
    ] = _DEFAULT_LOGIN_FILE,
    terminal: Annotated[
        bool, typer.Option("--terminal", help="the playground and inspector in this terminal: no web page, no login")
    ] = False,
    workdir: Annotated[
        Path, typer.Option(help="the assistant's folder: its commands run here (vibe-runs/, campaigns/runs/)")
    ] = Path("."),
    llm: Annotated[
        str | None,
        typer.Option(help="the assistant's LLM (litellm name or URL; default AGENTJET_VIBE_LLM, else offline)"),
    ] = None,
    vibe_arg: Annotated[
        list[str] | None, typer.Option(help="an argument the assistant adds to every `agentjet vibe` (repeatable)")
    ] = None,
) -> None:
    """Talk to policies in a browser or the terminal (side by side, token logprobs); inspect what servers captured."""
    import tempfile

    import uvicorn

    from agentjet.chat.launched import LaunchedPolicy, launch_policy, parse_checkpoint
    from agentjet.chat.security import Sessions
    from agentjet.chat.targets import parse_target
    from agentjet.chat.web import create_chat_app
    from agentjet.core.access.keys import load_or_create_token, read_token_file
    from agentjet.core.errors import AgentJetError
    from agentjet.core.server.http_server import is_loopback

    setup_logging("WARNING")
    try:
        tokens = {}
        for spec in token_file or []:
            name, sep, path = spec.partition("=")
            if not sep or not name.strip() or not path.strip():
                raise ValueError(f"--token-file {spec!r}: expected NAME=FILE")
            tokens[name.strip()] = read_token_file(Path(path.strip()).expanduser())
        targets = [parse_target(spec, tokens, os.environ.get("AGENTJET_TOKEN")) for spec in server or []]
        checkpoints = [parse_checkpoint(spec) for spec in checkpoint or []]
        names = [t.name for t in targets] + [c[0] for c in checkpoints] + list(base or [])
        if not names:
            raise ValueError("name at least one policy: --server NAME=URL, --checkpoint NAME=STATE_DIR or --base NAME")
        if len(set(names)) < len(names):
            twice = sorted(n for n in set(names) if names.count(n) > 1)
            raise ValueError(f"two policies have the same name: {', '.join(twice)}")
        if unknown := sorted(set(tokens) - {t.name for t in targets}):
            raise ValueError(f"--token-file {', '.join(unknown)}: no --server has that name")
        if not terminal:  # nothing listens in the terminal: no page, so no login token to make
            login_path = login_token_file.expanduser()
            login_path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            login_token, created = load_or_create_token(login_path, None)
        assistant = _assistant(workdir, llm, vibe_arg or [], login_token_file.expanduser().parent / "jobs")
    except (ValueError, AgentJetError, OSError) as exc:
        raise fail(exc) from exc
    if not terminal and not is_loopback(host):
        typer.secho(
            f"warning: listening on {host}, not loopback: anyone who can reach port {port} can try the login",
            err=True,
            fg=typer.colors.YELLOW,
        )
    launched: list[LaunchedPolicy] = []
    with tempfile.TemporaryDirectory(prefix="agentjet-chat-") as servers_dir:
        try:
            for name, where in [(c[0], (c[1], c[2])) for c in checkpoints] + [(b, None) for b in base or []]:
                what = f"{where[0]} step {where[1] if where[1] is not None else 'latest'}" if where else "untrained"
                typer.echo(f"starting {name}: {model}, {what} ...")
                launched.append(launch_policy(name, model, Path(servers_dir), checkpoint=where))
            if terminal:
                from agentjet.chat.terminal import run_terminal

                run_terminal(targets + [p.target for p in launched], assistant=assistant)
                return
            app = create_chat_app(
                targets + [p.target for p in launched],
                Sessions(login_token),
                assistant=assistant,
                loopback=is_loopback(host),
            )
            typer.echo(f"agentjet chat: http://{host}:{port}/ (policies: {', '.join(names)}); Ctrl-C stops")
            mode = "offline (no LLM configured)" if assistant.offline else f"LLM {llm or 'from AGENTJET_VIBE_LLM'}"
            typer.echo(f"  assistant: {mode}, working in {workdir.resolve()}")
            typer.echo(f"  log in with the token in {login_path}{' (created now)' if created else ''}")
            uvicorn.run(app, host=host, port=port, log_level="warning")
        except (AgentJetError, OSError) as exc:
            raise fail(exc) from exc
        finally:
            for policy in launched:
                policy.stop()


def _assistant(workdir: Path, llm: str | None, vibe_args: list[str], jobs_dir: Path) -> Assistant | LLMAssistant:
    """The offline assistant over `workdir`, wrapped in the LangGraph agent when an LLM is configured."""
    from agentjet.chat.assistant import Assistant
    from agentjet.chat.assistant_llm import LLMAssistant
    from agentjet.chat.tools import Jobs
    from agentjet.llm.chat import resolve_llm

    if not workdir.is_dir():
        raise ValueError(f"--workdir {workdir}: no such folder")
    tools = Assistant(workdir.resolve(), Jobs(jobs_dir, workdir.resolve()), vibe_args=tuple(vibe_args))
    configured = resolve_llm(llm)
    return tools if configured is None else LLMAssistant(tools, configured)
