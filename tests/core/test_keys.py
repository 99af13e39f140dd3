"""Episode keys: signed, tamper-evident, expiring; server tokens compared in constant time."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from agentjet.core.access.keys import EpisodeKeySigner, load_or_create_secret, load_or_create_token, tokens_equal
from agentjet.core.access.private_files import write_private_file
from agentjet.core.errors import AuthError

SECRET = b"s" * 32


def test_issued_key_verifies_with_its_claims() -> None:
    signer = EpisodeKeySigner(SECRET)
    key = signer.issue("ep_1", "wolf", expires_at=200.0)
    claims = signer.verify(key, now=100.0)
    assert (claims.episode_id, claims.agent, claims.expires_at) == ("ep_1", "wolf", 200.0)


@pytest.mark.parametrize("position", ["payload", "signature"])
def test_tampered_key_is_refused(position: str) -> None:
    signer = EpisodeKeySigner(SECRET)
    key = signer.issue("ep_1", None, expires_at=200.0)
    body, sig = key.split(".")
    if position == "payload":
        body = body[:-2] + ("A" if body[-2] != "A" else "B") + body[-1]
    else:
        sig = ("A" if sig[0] != "A" else "B") + sig[1:]
    with pytest.raises(AuthError):
        signer.verify(f"{body}.{sig}", now=100.0)


def test_key_from_another_secret_is_refused() -> None:
    key = EpisodeKeySigner(b"x" * 32).issue("ep_1", None, expires_at=200.0)
    with pytest.raises(AuthError, match="signature"):
        EpisodeKeySigner(SECRET).verify(key, now=100.0)


def test_expired_and_malformed_keys_are_refused() -> None:
    signer = EpisodeKeySigner(SECRET)
    with pytest.raises(AuthError, match="expired"):
        signer.verify(signer.issue("ep_1", None, expires_at=50.0), now=100.0)
    for junk in ("", "sk-123", "ajk_", "ajk_a.b.c", "ajk_%%%.###"):
        with pytest.raises(AuthError):
            signer.verify(junk, now=100.0)


def test_secret_and_token_files_are_private_and_stable(tmp_path: Path) -> None:
    secret = load_or_create_secret(tmp_path / "secret")
    assert load_or_create_secret(tmp_path / "secret") == secret
    token, generated = load_or_create_token(tmp_path / "token", None)
    assert generated and token.startswith("ajt_")
    for name in ("secret", "token"):
        assert stat.S_IMODE(os.stat(tmp_path / name).st_mode) == 0o600
    assert load_or_create_token(tmp_path / "token", "given") == ("given", False)
    assert (tmp_path / "token").read_text() == "given"


def test_a_private_file_is_600_from_the_start_and_tightens_a_loose_one(tmp_path: Path) -> None:
    fresh = tmp_path / "new" / "token"  # its folder is made too
    write_private_file(fresh, "ajt_secret")
    assert fresh.read_text() == "ajt_secret" and stat.S_IMODE(fresh.stat().st_mode) == 0o600
    loose = tmp_path / "loose"
    loose.write_text("old, longer contents")
    loose.chmod(0o644)
    write_private_file(loose, b"\x00raw")
    assert loose.read_bytes() == b"\x00raw" and stat.S_IMODE(loose.stat().st_mode) == 0o600


def test_tokens_equal() -> None:
    assert tokens_equal("abc", "abc")
    assert not tokens_equal("abd", "abc")
    assert not tokens_equal(None, "abc")
