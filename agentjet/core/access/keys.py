"""Episode keys and server tokens: HMAC-signed, constant-time checked, persisted with mode 600.

An episode key names one episode and its agent; the signature proves the server issued it.
Whether the episode is still open is the engine's business, not the key's: a key for an
ended, aborted or reclaimed episode verifies here and is then refused by the engine.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
import secrets
from dataclasses import dataclass
from pathlib import Path

from agentjet.core.access.private_files import write_private_file
from agentjet.core.access.tokens import MIN_TOKEN_CHARS, new_admin_token
from agentjet.core.errors import AuthError, ConfigError

__all__ = [
    "EpisodeKeyClaims",
    "EpisodeKeySigner",
    "load_or_create_secret",
    "load_or_create_token",
    "read_token_file",
    "tokens_equal",
]

_PREFIX = "ajk_"


@dataclass(frozen=True)
class EpisodeKeyClaims:
    episode_id: str
    agent: str | None
    expires_at: float


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class EpisodeKeySigner:
    """Signs and verifies episode keys with one server secret (HMAC-SHA256)."""

    def __init__(self, secret: bytes) -> None:
        if len(secret) < 16:
            raise ValueError("episode key secret must be at least 16 bytes")
        self._secret = secret

    def _sign(self, payload: bytes) -> str:
        return _b64(hmac.new(self._secret, payload, hashlib.sha256).digest())

    def issue(self, episode_id: str, agent: str | None, expires_at: float) -> str:
        payload = json.dumps({"e": episode_id, "a": agent, "x": expires_at}, separators=(",", ":"))
        body = _b64(payload.encode())
        return f"{_PREFIX}{body}.{self._sign(body.encode())}"

    def verify(self, key: str, *, now: float) -> EpisodeKeyClaims:
        """Return the key's claims, or raise AuthError if forged, tampered, malformed or expired."""
        if not key.startswith(_PREFIX) or key.count(".") != 1:
            raise AuthError("malformed episode key")
        body, signature = key[len(_PREFIX) :].split(".")
        if not hmac.compare_digest(self._sign(body.encode()), signature):
            raise AuthError("episode key signature is invalid")
        try:
            claims = json.loads(_unb64(body))
            parsed = EpisodeKeyClaims(str(claims["e"]), claims["a"], float(claims["x"]))
        except (ValueError, KeyError, TypeError) as exc:  # signed by us, so this means a bug
            raise AuthError("episode key payload is unreadable") from exc
        if parsed.expires_at < now:
            raise AuthError("episode key has expired")
        return parsed


def tokens_equal(given: str | None, expected: str) -> bool:
    """Constant-time comparison of a presented server token with the real one."""
    return given is not None and hmac.compare_digest(given.encode(), expected.encode())


def load_or_create_secret(path: Path) -> bytes:
    """The episode-key secret survives restarts so issued keys of open episodes stay checkable."""
    if path.is_file():
        os.chmod(path, 0o600)
        return path.read_bytes()
    secret = secrets.token_bytes(32)
    write_private_file(path, secret)
    return secret


def load_or_create_token(path: Path, given: str | None) -> tuple[str, bool]:
    """Return (admin token, generated). A given token is written to `path` too, so `status` finds it;
    with none given, the token already in `path` is kept (clients holding it keep working across
    restarts) unless it is too short to be a secret; else a new one is generated."""
    if given:
        if not path.is_file() or path.read_text().strip() != given:
            write_private_file(path, given)
        return given, False
    if path.is_file():
        kept = path.read_text().strip()
        if len(kept) >= MIN_TOKEN_CHARS:
            os.chmod(path, 0o600)
            return kept, False
    token = new_admin_token()
    write_private_file(path, token)
    return token, True


def read_token_file(path: Path) -> str:
    """The first line of a token file (ConfigError if it cannot be read or is empty)."""
    try:
        text = path.read_text()
    except OSError as exc:
        raise ConfigError(f"cannot read the token file {path}: {exc.strerror or exc}") from exc
    lines = text.strip().splitlines()
    if not lines or not lines[0].strip():
        raise ConfigError(f"the token file {path} is empty")
    return lines[0].strip()
