"""Client tokens: issued and revoked by the admin, stored hashed in `<state-dir>/tokens.json`.

A client token lets a swarm client begin, end and abort its own episodes, read them and the
server's status, and vote and heartbeat as the client ids it uses; nothing else (the admin
token, `<state-dir>/token`, does the rest). Only the SHA-256 of each secret is stored: a stolen
`tokens.json` reveals no usable token. The file is replaced atomically under a lock, so the
CLI (`agentjet server token ...` on the state dir) and a running server can both write it; the
server re-reads it when it changes, so a revocation takes effect on the next request.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import json
import os
import re
import secrets
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from agentjet.core.errors import ConfigError, StorageFull, TokenNotFound

__all__ = [
    "CLIENT_PREFIX",
    "MIN_TOKEN_CHARS",
    "ClientToken",
    "TokenStore",
    "check_token_strength",
    "new_admin_token",
]

CLIENT_PREFIX = "ajc_"
ADMIN_PREFIX = "ajt_"
MIN_TOKEN_CHARS = 24  # about 144 bits when random URL-safe base64; shorter given tokens are refused
TOKEN_NAME_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}$"
_FILE = "tokens.json"


@dataclass(frozen=True)
class ClientToken:
    """One issued client token as stored (never the secret itself)."""

    token_id: str
    name: str
    sha256: str
    hint: str  # the secret's first characters, to tell tokens apart in a listing
    created_at: float
    revoked_at: float | None = None

    @property
    def is_revoked(self) -> bool:
        return self.revoked_at is not None

    def view(self) -> dict[str, Any]:
        """What `token list` and the admin API show: everything but the hash."""
        return {
            "token_id": self.token_id,
            "name": self.name,
            "hint": self.hint,
            "created_at": self.created_at,
            "revoked_at": self.revoked_at,
            "revoked": self.is_revoked,
        }


def _digest(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def new_admin_token() -> str:
    return ADMIN_PREFIX + secrets.token_urlsafe(32)


def check_token_strength(token: str, *, source: str) -> str:
    """The token stripped, or ConfigError naming `source` when it is too short to be a secret."""
    token = token.strip()
    if len(token) < MIN_TOKEN_CHARS:
        raise ConfigError(
            f"the admin token from {source} has {len(token)} characters; use at least {MIN_TOKEN_CHARS} "
            "random ones (python -c 'import secrets; print(secrets.token_urlsafe(32))'), or give none "
            "and one is generated into <state-dir>/token"
        )
    return token


class TokenStore:
    """The client tokens of one state dir. Thread-safe; cheap to query on every request."""

    def __init__(self, state_dir: Path) -> None:
        self.path = state_dir / _FILE
        self._lock_path = state_dir / ".tokens.lock"
        self._by_digest: dict[str, ClientToken] = {}
        self._by_id: dict[str, ClientToken] = {}
        self._tokens: list[ClientToken] = []
        self._signature: tuple[int, int, int] | None = None
        self._lock = threading.Lock()  # lookups on the event loop, writes in worker threads

    # ---- reads ----------------------------------------------------------------------------
    def lookup(self, secret: str) -> ClientToken | None:
        """The live (not revoked) token this secret is, else None. Re-reads the file if it changed."""
        if not secret.startswith(CLIENT_PREFIX):
            return None
        self._refresh()
        token = self._by_digest.get(_digest(secret))
        return None if token is None or token.is_revoked else token

    def is_live(self, token_id: str) -> bool:
        """Whether the token with this id exists and is not revoked (checked on every episode call)."""
        self._refresh()
        token = self._by_id.get(token_id)
        return token is not None and not token.is_revoked

    def tokens(self) -> list[ClientToken]:
        self._refresh()
        return list(self._tokens)

    # ---- writes ---------------------------------------------------------------------------
    def create(self, name: str) -> tuple[ClientToken, str]:
        """Issue a token named `name`; returns it with its secret (shown once, never stored)."""
        if not re.fullmatch(TOKEN_NAME_PATTERN, name):
            raise ConfigError(
                f"token name must be 1-64 of A-Z a-z 0-9 _ . : - (starting with a letter or digit), got {name!r}"
            )
        secret = CLIENT_PREFIX + secrets.token_urlsafe(32)
        token = ClientToken(
            token_id="tok_" + secrets.token_hex(6),
            name=name,
            sha256=_digest(secret),
            hint=secret[: len(CLIENT_PREFIX) + 4],
            created_at=time.time(),
        )
        with self._locked() as tokens:
            tokens.append(token)
        return token, secret

    def revoke(self, which: str) -> list[ClientToken]:
        """Revoke by token id or by name (every live token of that name); TokenNotFound if none matches."""
        now = time.time()
        revoked: list[ClientToken] = []
        with self._locked() as tokens:
            for index, token in enumerate(tokens):
                if which in (token.token_id, token.name) and not token.is_revoked:
                    tokens[index] = ClientToken(**{**asdict(token), "revoked_at": now})
                    revoked.append(tokens[index])
        if not revoked:
            raise TokenNotFound(f"no live client token with id or name {which!r} (see `agentjet server token list`)")
        return revoked

    # ---- the file -------------------------------------------------------------------------
    def _refresh(self) -> None:
        with self._lock:
            try:
                stat = self.path.stat()
            except FileNotFoundError:
                self._set([], None)
                return
            signature = (stat.st_ino, stat.st_mtime_ns, stat.st_size)
            if signature != self._signature:
                self._set(self._read(), signature)

    def _set(self, tokens: list[ClientToken], signature: tuple[int, int, int] | None) -> None:
        self._tokens = tokens
        self._by_digest = {t.sha256: t for t in tokens}
        self._by_id = {t.token_id: t for t in tokens}
        self._signature = signature

    def _read(self) -> list[ClientToken]:
        try:
            raw = json.loads(self.path.read_text())
            return [ClientToken(**entry) for entry in raw["tokens"]]
        except FileNotFoundError:
            return []
        except (ValueError, KeyError, TypeError) as exc:
            raise ConfigError(f"{self.path} is not a token file AgentJet wrote ({exc}); restore or delete it") from exc

    @contextlib.contextmanager
    def _locked(self) -> Iterator[list[ClientToken]]:
        """Read-modify-write under an exclusive flock; the new file replaces the old in one rename."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self._lock_path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            tokens = self._read()
            yield tokens
            self._write(tokens)
        finally:
            os.close(fd)
        with self._lock:
            self._signature = None  # re-read (and re-stat) on the next lookup

    def _write(self, tokens: list[ClientToken]) -> None:
        text = json.dumps({"tokens": [asdict(t) for t in tokens]}, indent=1)
        try:
            fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=".tokens-")
        except OSError as exc:
            raise _storage_error(exc, self.path) from exc
        try:
            with os.fdopen(fd, "w") as handle:
                handle.write(text)
                handle.flush()
                os.fsync(handle.fileno())
            os.chmod(tmp, 0o600)
            os.replace(tmp, self.path)
        except OSError as exc:
            Path(tmp).unlink(missing_ok=True)
            raise _storage_error(exc, self.path) from exc
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise


def _storage_error(exc: OSError, path: Path) -> Exception:
    """A full disk is StorageFull (nothing was changed: retry); anything else stays the OSError it is."""
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return StorageFull(f"the disk holding {path} is full; free space and retry")
    return exc
