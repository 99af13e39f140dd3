"""A throwaway PostgreSQL server on loopback for tests that need a real RDB (the A3R shared study).

`initdb` refuses to run as root, so as root the cluster belongs to the `postgres` user (or
`nobody`) and every server command runs as that user. With AGENTJET_REQUIRE_POSTGRES=1 (set by
`make test`, which installs PostgreSQL when missing) a missing server fails the test instead of
skipping it, so CI cannot pass by skipping.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

_SUPERUSER = "agentjet"


def require_postgres() -> bool:
    return os.environ.get("AGENTJET_REQUIRE_POSTGRES") == "1"


def _bin_dir() -> Path | None:
    """Where initdb/pg_ctl live: on PATH, else Debian's /usr/lib/postgresql/<version>/bin (newest)."""
    found = shutil.which("initdb")
    if found:
        return Path(found).resolve().parent
    candidates = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(p.split("/")[4]))
    return Path(candidates[-1]).parent if candidates else None


def _run_as() -> pwd.struct_passwd | None:
    """The user that owns the cluster when we are root (initdb will not run as root)."""
    if os.geteuid() != 0:
        return None
    for name in ("postgres", "nobody"):
        try:
            return pwd.getpwnam(name)
        except KeyError:
            continue
    raise RuntimeError("running as root and neither a postgres nor a nobody user exists for initdb")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass(frozen=True)
class PostgresServer:
    port: int
    root: Path

    def url(self, database: str) -> str:
        """An SQLAlchemy URL for `database` over TCP on loopback (trust auth, no password)."""
        return f"postgresql+psycopg://{_SUPERUSER}@127.0.0.1:{self.port}/{database}"

    def create_database(self, name: str) -> str:
        import psycopg

        with psycopg.connect(f"host=127.0.0.1 port={self.port} user={_SUPERUSER} dbname=postgres") as conn:
            conn.autocommit = True
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)


@contextmanager
def postgres_server() -> Iterator[PostgresServer]:
    """initdb a cluster in a temp dir, start it on 127.0.0.1:<free port>, stop and delete it afterwards."""
    bin_dir = _bin_dir()
    if bin_dir is None:
        message = "PostgreSQL is not installed (no initdb); `apt-get install postgresql` or run `make test` as root"
        if require_postgres():
            pytest.fail(message + " (AGENTJET_REQUIRE_POSTGRES=1)")
        pytest.skip(message)
    user = _run_as()
    root = Path(tempfile.mkdtemp(prefix="agentjet-pg-"))
    data, log = root / "data", root / "server.log"
    if user is not None:
        os.chown(root, user.pw_uid, user.pw_gid)
    as_user = {"user": user.pw_uid, "group": user.pw_gid, "extra_groups": []} if user else {}
    port = _free_port()
    options = f"-c listen_addresses=127.0.0.1 -p {port} -k {root} -c fsync=off -c max_connections=100"

    def pg(*args: str) -> None:
        subprocess.run(
            [str(bin_dir / args[0]), *args[1:]], check=True, cwd=root, capture_output=True, timeout=120, **as_user
        )  # type: ignore[call-overload]

    try:
        pg("initdb", "-D", str(data), "-U", _SUPERUSER, "--auth=trust", "--no-sync", "-E", "UTF8")
        pg("pg_ctl", "-D", str(data), "-o", options, "-l", str(log), "-w", "-t", "60", "start")
        try:
            yield PostgresServer(port, root)
        finally:
            pg("pg_ctl", "-D", str(data), "-m", "immediate", "-w", "stop")
    except subprocess.CalledProcessError as exc:
        server_log = log.read_text() if log.exists() else ""
        raise RuntimeError(f"{exc.cmd[0]} failed: {exc.stderr.decode(errors='replace')}\n{server_log}") from exc
    finally:
        shutil.rmtree(root, ignore_errors=True)
