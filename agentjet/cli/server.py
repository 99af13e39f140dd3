"""`agentjet server start|status|repair` and `agentjet server token create|list|revoke`."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer

from agentjet.cli.credentials import TokenFileOption, TokenOption, cli_token
from agentjet.cli.one_shot import fail, setup_logging
from agentjet.core.errors import AgentJetError

__all__ = ["server_app"]

server_app = typer.Typer(help="Run and watch a swarm training server.", no_args_is_help=True)
token_app = typer.Typer(help="Client tokens: issue, list, revoke (admin).", no_args_is_help=True)
server_app.add_typer(token_app, name="token")

StateDirOption = Annotated[Path, typer.Option(help="the server's state dir (token, journal, checkpoints)")]
ServerUrlOption = Annotated[str | None, typer.Option(help="a running server to ask instead of the state dir")]


@server_app.command("start")
def server_start(
    ctx: typer.Context,
    model: Annotated[str, typer.Option(help="registered model name or HF folder")] = "smollm2-135m",
    host: Annotated[str, typer.Option(help="interface to bind (keep loopback unless you mean it)")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="TCP port")] = 8710,
    uds: Annotated[
        Path | None,
        typer.Option(help="listen on this Unix socket instead of --host/--port (a container without network)"),
    ] = None,
    public_url: Annotated[
        str | None, typer.Option(help="the base URL clients are told to use (default: the URL they came to)")
    ] = None,
    config: Annotated[Path | None, typer.Option(help="TrainConfig YAML")] = None,
    state_dir: StateDirOption = Path("state"),
    token: TokenOption = None,
    token_file: TokenFileOption = None,
    idle_timeout_s: Annotated[float, typer.Option(help="reclaim episodes idle this long")] = 300.0,
    ssl_certfile: Annotated[Path | None, typer.Option(help="TLS certificate (PEM): serve https")] = None,
    ssl_keyfile: Annotated[Path | None, typer.Option(help="TLS private key (PEM)")] = None,
    max_request_bytes: Annotated[int, typer.Option(help="largest request body accepted")] = 4 * 1024 * 1024,
    max_connections: Annotated[int, typer.Option(help="open connections at once")] = 1024,
    api_docs: Annotated[bool, typer.Option("--api-docs", help="serve /docs and /openapi.json (no auth)")] = False,
    device: Annotated[
        str, typer.Option(envvar="AGENTJET_DEVICE", help="auto|cpu|cuda|cuda:N for the backend and the trainer")
    ] = "auto",
    dtype: Annotated[
        str,
        typer.Option(
            envvar="AGENTJET_DTYPE", help="auto|float32|bfloat16 (auto: bf16 on CUDA and on CPUs with native bf16)"
        ),
    ] = "auto",
    backend: Annotated[str, typer.Option(help="inference backend: transformers or vllm")] = "transformers",
    vllm_python: Annotated[
        Path | None, typer.Option(help="python of a vLLM venv: the server starts `vllm serve` with it")
    ] = None,
    vllm_url: Annotated[str | None, typer.Option(help="attach to a `vllm serve` already running here")] = None,
    vllm_arg: Annotated[
        list[str] | None, typer.Option(help="an extra argument for the `vllm serve` we start (repeatable)")
    ] = None,
    train_procs: Annotated[
        int,
        typer.Option(envvar="AGENTJET_TRAIN_PROCS", help="training processes: data-parallel torch.distributed ranks"),
    ] = 1,
    log_level: Annotated[str, typer.Option(help="DEBUG, INFO, WARNING")] = "INFO",
) -> None:
    """Start a swarm server: OpenAI-compatible API + episodes + training engine."""
    from agentjet.core.launch.allocator import reexec_with_allocator

    try:
        reexec_with_allocator(("server", "start"))  # tcmalloc where installed: CPU updates ~25% faster
    except AgentJetError as exc:
        raise fail(exc) from exc
    from agentjet.core.config import ServerSettings
    from agentjet.core.server.run import prepare_server

    setup_logging(log_level)
    from agentjet.core.step.distributed_trainer import torchrun_rank

    launched = torchrun_rank()  # under torchrun: rank 0 serves, the other ranks only train
    if launched is not None and launched[0] > 0:
        from agentjet.core.step.train_worker import main as train_worker

        raise typer.Exit(train_worker())
    train_procs = launched[1] if launched is not None else train_procs
    given = cli_token(ctx, token, token_file, None)
    try:
        settings = ServerSettings(
            model=model, host=host, port=port, uds=uds, public_url=public_url, config=config,
            state_dir=state_dir, token=given,
            idle_timeout_s=idle_timeout_s, ssl_certfile=ssl_certfile, ssl_keyfile=ssl_keyfile,
            max_request_bytes=max_request_bytes, max_connections=max_connections, api_docs=api_docs,
            device=device, dtype=dtype, backend=backend, vllm_python=vllm_python, vllm_url=vllm_url,
            vllm_args=tuple(vllm_arg or ()),
            train_procs=train_procs,
        )  # fmt: skip
        prepared = prepare_server(settings, log_level=log_level, torchrun=launched is not None)
    except (AgentJetError, ValueError) as exc:
        raise fail(exc) from exc  # a state dir the refused start created is gone already
    code = prepared.serve()
    if code:
        raise typer.Exit(code)


def _admin_client(ctx: typer.Context, url: str, token: str | None, token_file: Path | None, state_dir: Path) -> Any:
    from agentjet.core.sdk.client import SwarmClient

    return SwarmClient(url, token=cli_token(ctx, token, token_file, state_dir), retries=1)


@server_app.command("status")
def server_status(
    ctx: typer.Context,
    url: Annotated[str, typer.Option(help="server base URL")] = "http://127.0.0.1:8710",
    token: TokenOption = None,
    token_file: TokenFileOption = None,
    state_dir: Annotated[Path, typer.Option(help="where to find the token file if no token is given")] = Path("state"),
    once: Annotated[bool, typer.Option("--once", help="print one snapshot and exit")] = False,
    interval: Annotated[float, typer.Option(help="seconds between refreshes")] = 1.0,
) -> None:
    """Live view of a server: state, policy version, episodes, clients, calls/s, tokens/s, training health."""
    from rich.console import Console

    from agentjet.core.sdk.status_view import watch_status

    try:
        client = _admin_client(ctx, url, token, token_file, state_dir)
    except AgentJetError as exc:
        raise fail(exc) from exc
    with client:
        code = watch_status(client, interval_s=interval, once=once, console=Console())
    raise typer.Exit(code or 0)


@server_app.command("repair")
def server_repair(
    state_dir: Annotated[Path, typer.Argument(help="the stopped server's --state-dir")],
    as_json: Annotated[bool, typer.Option("--json", help="print the report as JSON")] = False,
) -> None:
    """Salvage every intact episode of a damaged journal into a fresh one (the damaged file is kept)."""
    from agentjet.core.episodes.journal_repair import repair_journal
    from agentjet.core.state_lock import StateDirLock

    setup_logging("WARNING")
    holder = StateDirLock(state_dir).holder() if state_dir.is_dir() else None
    if holder is not None:
        raise fail(AgentJetError(f"a server (pid {holder or '?'}) is running on {state_dir}: stop it first"))
    try:
        report = repair_journal(state_dir)
    except AgentJetError as exc:
        raise fail(exc) from exc
    if as_json:
        typer.echo(json.dumps(report.as_json(), indent=2))
    else:
        typer.echo(report.describe())


# ---- client tokens ------------------------------------------------------------------------------


def _store(state_dir: Path) -> Any:
    from agentjet.core.access.tokens import TokenStore

    if not (state_dir / "token").is_file():
        raise fail(AgentJetError(f"{state_dir} is not a server's state dir (no admin token there); pass --state-dir"))
    return TokenStore(state_dir)


def _tokens(
    ctx: typer.Context,
    where: tuple[str | None, Path],
    credentials: tuple[str | None, Path | None],
    over_http: Callable[[Any], Any],
    on_disk: Callable[[Any], Any],
) -> Any:
    """Ask the server at `url` (admin token) when given, else act on the state dir's token file directly."""
    url, state_dir = where
    try:
        if url is not None:
            with _admin_client(ctx, url, *credentials, state_dir) as client:
                return over_http(client)
        return on_disk(_store(state_dir))
    except AgentJetError as exc:
        raise fail(exc) from exc


@token_app.command("create")
def token_create(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="who will hold it: a laptop, a sandbox, a run")],
    state_dir: StateDirOption = Path("state"),
    url: ServerUrlOption = None,
    token: TokenOption = None,
    token_file: TokenFileOption = None,
) -> None:
    """Issue a client token; its secret is printed once on stdout (store it: only its hash is kept)."""

    def on_disk(store: Any) -> dict[str, Any]:
        record, secret = store.create(name)
        return {**record.view(), "token": secret}

    created = _tokens(ctx, (url, state_dir), (token, token_file), lambda c: c.create_token(name), on_disk)
    typer.echo(f"client token {created['token_id']} ({created['name']}): begin/end its own episodes only", err=True)
    typer.echo(created["token"])


@token_app.command("list")
def token_list(
    ctx: typer.Context,
    state_dir: StateDirOption = Path("state"),
    url: ServerUrlOption = None,
    token: TokenOption = None,
    token_file: TokenFileOption = None,
    as_json: Annotated[bool, typer.Option("--json", help="print JSON")] = False,
) -> None:
    """The issued client tokens (ids, names, first characters, revoked or not); never their secrets."""
    tokens = _tokens(
        ctx, (url, state_dir), (token, token_file), lambda c: c.list_tokens(), lambda s: [t.view() for t in s.tokens()]
    )
    if as_json:
        typer.echo(json.dumps(tokens, indent=2))
        return
    for t in tokens:
        state = "revoked" if t["revoked"] else "live"
        typer.echo(f"{t['token_id']:<18} {t['name']:<24} {t['hint']}…  {state}")
    if not tokens:
        typer.echo("no client tokens (agentjet server token create NAME)", err=True)


@token_app.command("revoke")
def token_revoke(
    ctx: typer.Context,
    which: Annotated[str, typer.Argument(help="token id, or a name (revokes every live token of it)")],
    state_dir: StateDirOption = Path("state"),
    url: ServerUrlOption = None,
    token: TokenOption = None,
    token_file: TokenFileOption = None,
) -> None:
    """Revoke a client token: its requests and its episodes' keys get 401 from the next request on."""
    revoked = _tokens(
        ctx, (url, state_dir), (token, token_file),
        lambda c: c.revoke_token(which), lambda s: [t.view() for t in s.revoke(which)],
    )  # fmt: skip
    for t in revoked:
        typer.echo(f"revoked {t['token_id']} ({t['name']})")


if __name__ == "__main__":  # pragma: no cover
    server_app(sys.argv[1:])
