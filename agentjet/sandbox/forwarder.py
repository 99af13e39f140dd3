"""Inside a sandbox: serve 127.0.0.1:PORT by relaying to the swarm bridge's Unix socket, run a command.

The sandbox has no network, only its own loopback, so agent code keeps using the normal
`http://127.0.0.1:PORT/v1` base URL and this relay carries each TCP connection over the
mounted socket to the host-side `SwarmBridge`. It is STANDARD LIBRARY ONLY on purpose: it runs
on the sandbox image's Debian python3, started as a script (`python3 -I forwarder.py`) so no
agentjet package import happens before the command starts.

    python3 -I forwarder.py --port 8710 --unix /run/agentjet/swarm.sock -- python3 client.py

Several `--port P --unix PATH` pairs relay several ports, one per server (a task whose policies train
on separate servers). The command is spawned once every port listens; SIGTERM/SIGINT/SIGHUP are passed on to it; the
forwarder exits with its status (128+N when a signal N killed it) as soon as it exits.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import signal
import sys
from collections.abc import Callable, Sequence

__all__ = ["main", "run"]

_CHUNK = 64 * 1024
_PASSED_ON = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """Copy until EOF, then half-close the other side so request/response framing still works."""
    try:
        while chunk := await reader.read(_CHUNK):
            writer.write(chunk)
            await writer.drain()
        if writer.can_write_eof():
            writer.write_eof()
    except (ConnectionError, OSError):
        writer.close()


async def _relay(unix_path: str, tcp_reader: asyncio.StreamReader, tcp_writer: asyncio.StreamWriter) -> None:
    try:
        unix_reader, unix_writer = await asyncio.open_unix_connection(unix_path)
    except OSError as exc:
        print(f"forwarder: cannot reach {unix_path}: {exc}", file=sys.stderr)  # noqa: T201
        tcp_writer.close()
        return
    try:
        await asyncio.gather(_pipe(tcp_reader, unix_writer), _pipe(unix_reader, tcp_writer))
    finally:
        for writer in (unix_writer, tcp_writer):
            writer.close()
            with contextlib.suppress(ConnectionError, OSError):
                await writer.wait_closed()


async def run(forwards: Sequence[tuple[int, str]], command: Sequence[str], *, host: str = "127.0.0.1") -> int:
    """Listen on each (port, Unix socket) pair, start `command`, relay until it exits; its exit status
    (128+N for signal N)."""
    loop = asyncio.get_running_loop()
    pending: list[int] = []  # signals that arrive before the command exists are passed on once it does
    target: list[asyncio.subprocess.Process] = []
    for signum in _PASSED_ON:
        loop.add_signal_handler(signum, _pass_on, target, pending, signum)
    relays: set[asyncio.Task[None]] = set()  # python 3.11 holds connection tasks weakly: a GC would kill them

    def acceptor(unix_path: str) -> Callable[[asyncio.StreamReader, asyncio.StreamWriter], None]:
        def accept(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            task = asyncio.ensure_future(_relay(unix_path, reader, writer))
            relays.add(task)
            task.add_done_callback(relays.discard)

        return accept

    servers = [await asyncio.start_server(acceptor(path), host, port, reuse_address=True) for port, path in forwards]
    try:
        # its own process group: a terminal's Ctrl-C reaches it once, through us, not twice
        process = await asyncio.create_subprocess_exec(*command, start_new_session=True)
    except OSError as exc:
        print(f"forwarder: cannot start {command[0]!r}: {exc}", file=sys.stderr)  # noqa: T201
        return 127
    else:
        target.append(process)
        for early in pending:
            _pass_on(target, [], early)
        return _status(await process.wait())
    finally:
        for signum in _PASSED_ON:
            loop.remove_signal_handler(signum)
        for server in servers:
            server.close()


def _status(code: int) -> int:
    return 128 - code if code < 0 else code


def _pass_on(target: list[asyncio.subprocess.Process], pending: list[int], signum: int) -> None:
    if not target:
        pending.append(signum)
        return
    if target[0].returncode is None:
        with contextlib.suppress(ProcessLookupError):
            target[0].send_signal(signum)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--port", type=int, action="append", required=True, help="loopback port agent code connects to")
    parser.add_argument("--unix", action="append", required=True, help="the bridge's Unix socket for that port")
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (keep loopback)")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- COMMAND ARGS...")
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("give the command to run after --")
    if len(args.port) != len(args.unix) or len(set(args.port)) != len(args.port):
        parser.error("give one --unix per --port, and each port once")
    return asyncio.run(run(list(zip(args.port, args.unix, strict=True)), command, host=args.host))


if __name__ == "__main__":
    sys.exit(main())
